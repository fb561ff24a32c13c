package cli_test

import (
	"strings"
	"testing"
)

// cairn checkpoint delete run twice: the second finds the checkpoint already deleted, exits 0
// and, as a delete does, prints nothing (--json says what happened); it names no other
// checkpoint to delete. A name never saved is still refused.
func TestCheckpointDeleteTwice(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "checkpoint", "save", "plan-1", `{"a":1}`)
	mustRun(t, p, "", "checkpoint", "save", "plan-2", `{"a":2}`)
	if code, out := p.run("", "checkpoint", "delete", "plan-1"); code != 0 || out != "" {
		t.Fatalf("first delete: exit %d: %q", code, out)
	}
	if code, out := p.run("", "checkpoint", "delete", "plan-1"); code != 0 || out != "" {
		t.Errorf("second delete: exit %d: %q; want exit 0 and nothing printed", code, out)
	}
	code, out := p.run("", "checkpoint", "delete", "plan-1", "--json")
	if code != 0 || !strings.Contains(out, `"changed": false`) || !strings.Contains(out, "already deleted") || strings.Contains(out, "plan-2") {
		t.Errorf("third delete, --json: exit %d: %s; want it to say plan-1 was already deleted", code, out)
	}
	if code, out := p.run("", "checkpoint", "delete", "plan-3"); code != 1 || !strings.Contains(out, "not found") {
		t.Errorf("a checkpoint never saved: exit %d: %q; want exit 1, not found", code, out)
	}
}
