package mcptools_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirDeletedUnderServer: after the state directory is deleted under a running
// server (git clean -fdx), the next writes reopen it and land on disk; deleting it twice
// changes nothing about that.
func TestStateDirDeletedUnderServer(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"before the clean"}`)
	for round := 0; round < 2; round++ {
		if err := os.RemoveAll(filepath.Join(p.root, ".claude")); err != nil {
			t.Fatal(err)
		}
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"after the clean"}`)
		mustOK(t, c, "save_checkpoint", `{"name":"plan","data":{"a":1}}`)
		mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`)
		for _, f := range []string{"workflow-state.json", "checkpoints/plan.json"} {
			if _, err := os.Stat(filepath.Join(p.state, f)); err != nil {
				t.Errorf("round %d: %s not on disk after the reopen: %v", round, f, err)
			}
		}
		if fi, err := os.Stat(p.state); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("round %d: state directory %v, %v; want it recreated 0700", round, fi, err)
		}
	}
}
