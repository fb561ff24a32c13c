package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// A task a person added with cairn task under an id with spaces is one the model moves with
// update_task in the real client: its schema refused the id, so the task could not be moved.
func TestCairnSpacedTaskIDMovedByTheModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.cairn(t, "start", "apex", seedContext)
	w.cairn(t, "task", "write the tests", "pending")
	w.Mock.Script(inTurn("SPACED-PROMPT", "done", 1, func(i int) (string, mockapi.Reply) {
		return "update_task " + itoa(i), mockapi.TextThenToolUse("starting it", cairnTool("update_task"),
			map[string]any{"id": "write the tests", "status": "running"})
	})...)
	r := w.runScript(t, RunOptions{Prompt: "SPACED-PROMPT: start the task"})
	requireToolResultsOK(t, r, 1)
	var st struct {
		Tasks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"tasks"`
	}
	readJSON(t, filepath.Join(w.stateDir(), "workflow-state.json"), &st)
	if len(st.Tasks) != 1 || st.Tasks[0].ID != "write the tests" || st.Tasks[0].Status != "running" {
		t.Errorf("tasks on disk %+v, want \"write the tests\" running", st.Tasks)
	}
}
