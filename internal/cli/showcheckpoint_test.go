package cli_test

import (
	"strings"
	"testing"
)

// TestShowSaysPhaseCheckpointSize: cairn show says how large the checkpoint a transition kept
// with a phase is, not only that there is one (load_checkpoint with phase reads it).
func TestShowSaysPhaseCheckpointSize(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "show a phase checkpoint")
	mustRun(t, p, "", "transition", "plan", "--checkpoint", `{"a":1}`)
	if _, out := p.run("", "show"); !strings.Contains(out, "analyze: completed") || !strings.Contains(out, "metadata checkpoint (7 bytes)") {
		t.Errorf("cairn show does not give the phase checkpoint's size:\n%s", out)
	}
}
