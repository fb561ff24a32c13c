package mcptools

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A tool's result names the next phases cut to 300 characters, and a cut never makes a secret
// the names did not hold: a phase holding a key glued to more text ("sk_live_...-x"), cut after
// the key's body, ends the cut before that name.
func TestNextPhasesCutMakesNoSecret(t *testing.T) {
	allowed := []string{strings.Repeat("p", 60), strings.Repeat("q", 60), strings.Repeat("r", 60), strings.Repeat("s", 60)}
	head := strings.Join(allowed, ", ") + ", "
	allowed = append(allowed, secrettest.GluedKey(t, 300-len(head))) // its body ends at the cut
	o, err := resultOf(&engine.Result{Message: "Moved", WorkflowID: "wf-1", Phase: "a", Allowed: allowed}, nil)
	if err != nil || secrets.ScanString(o.text) != nil || !strings.Contains(o.text, "next phases: "+strings.TrimSuffix(head, " ")) {
		t.Fatalf("%q, %v", o.text, err)
	}
}

// TestSentenceKeepsANameAsItIs: a message made a sentence gets its first letter upper case,
// but not when its first word is a name (a file, a workflow id): "Workflow-state.json was
// damaged" named a file that is not there.
func TestSentenceKeepsANameAsItIs(t *testing.T) {
	for in, want := range map[string]string{
		"saved checkpoint a":                         "Saved checkpoint a.",
		"workflow-state.json was damaged":            "workflow-state.json was damaged.",
		"checkpoints/plan.json could not be read":    "checkpoints/plan.json could not be read.",
		"apex-20261130T163921Z-974f was archived":    "apex-20261130T163921Z-974f was archived.",
		"workflow wf-1 was not shared: it is at r3.": "Workflow wf-1 was not shared: it is at r3.",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
