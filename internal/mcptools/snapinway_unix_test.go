//go:build unix

package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotInTheWayToolSaysTheUsersStep: a change refused for a directory in the snapshot's
// place gave the model the store's words alone ("not a regular file (...; it was left
// untouched)"), no step. It says what is there and the model's step: the user runs cairn
// doctor, then the call again; the model moves nothing itself.
func TestSnapshotInTheWayToolSaysTheUsersStep(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"in the way"}`)
	snap := filepath.Join(p.state, "workflow-state.json")
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	got := text(mustFail(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`,
		"a directory is in its place", "ask the user to run `cairn doctor`", "then call set_vars again", "do not move or delete it yourself"))
	if strings.Contains(got, "move "+snap) {
		t.Errorf("the model is given the person's step: %s", got)
	}
}
