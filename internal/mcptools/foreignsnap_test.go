package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignSnapshotToolGivesNoMove: a change refused over another tool's file in the
// snapshot's place (a package.json) told the model "move it out of DIR, then check it with
// resume_check", a step on a file that may be someone's. It gives the model's step: the user
// runs cairn doctor, then the call again; the model moves nothing itself.
func TestForeignSnapshotToolGivesNoMove(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"foreign"}`)
	snap := filepath.Join(p.state, "workflow-state.json")
	if err := os.WriteFile(snap, []byte(`{"name":"shop","version":"3.2.1","main":"index.js"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := text(mustFail(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`,
		"holds no workflow record", "ask the user to run `cairn doctor`", "then call set_vars again", "do not move or delete it yourself"))
	if strings.Contains(got, "move it") || strings.Contains(got, "out of the state directory") {
		t.Errorf("the model is given the person's step: %s", got)
	}
}
