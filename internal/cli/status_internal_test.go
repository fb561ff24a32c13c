package cli

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestStatusLinesUp: in cairn status every labelled line's value starts in one column, so a
// person reads the values down one edge.
func TestStatusLinesUp(t *testing.T) {
	r := &engine.Resume{Tier: "Full", WorkflowID: "apex-20261101T120000Z-5c1e", Type: "apex", Context: "add retries",
		Phase: "plan", PhaseStatus: "in_progress", AgeSeconds: 60, Completed: []string{"analyze"},
		Allowed: []string{"implement"}, Tasks: "1 done", Checkpoints: []string{"findings"},
		Approvals: []string{"plan approved"}, AwaitingApproval: "plan"}
	var b strings.Builder
	writeStatus(&b, r)
	const col = len("Workflow:   ")
	labelled := 0
	for l := range strings.Lines(b.String()) {
		label, _, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.TrimSpace(l) == label+":" {
			continue // a list's items or title
		}
		labelled++
		if at := len(l) - len(strings.TrimLeft(l[len(label)+1:], " ")); at != col {
			t.Errorf("%q: its value starts in column %d, the others' in %d", strings.TrimSpace(l), at, col)
		}
	}
	if labelled < 9 {
		t.Fatalf("%d labelled lines, want every one the record fills:\n%s", labelled, b.String())
	}
}
