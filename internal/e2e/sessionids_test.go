package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// Scripts give sessions sequential --session-id values, which share their first 8
// characters: mirrored task ids made from those collided, the second session's TaskCreated
// "1" was answered "already recorded; nothing changed" (its task lost) and its turn's end
// dropped and renamed the first session's tasks. Each session's tasks are now its own.
func TestCairnSequentialSessionIDsKeepTheirTasks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	tools := []string{cairnPlugin.AllowRule(), "TaskCreate"}
	create := func(marker string, subjects ...string) {
		var steps []mockapi.Step
		cond := mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker))
		for _, s := range subjects {
			steps = append(steps, mockapi.On(cond, mockapi.ToolUse("TaskCreate", map[string]any{"subject": s, "description": s})).Named(marker+" create "+s))
			cond = afterToolResult
		}
		w.Mock.Script(append(steps, mockapi.On(afterToolResult, mockapi.Text("tasks noted")).Named(marker+" end"))...)
	}
	create("FIRST-TASKS", "write the retry loop", "measure the backoff")
	first := w.runScript(t, RunOptions{Prompt: "FIRST-TASKS: list the work", AllowedTools: tools,
		Args: []string{"--session-id", "00000000-0000-4000-8000-000000000001"}})
	requireToolResultsOK(t, first, 2)
	requireHooksOK(t, first, "TaskCreated")

	create("SECOND-TASKS", "deploy the fix")
	second := w.runScript(t, RunOptions{Prompt: "SECOND-TASKS: go on", AllowedTools: tools,
		Args: []string{"--session-id", "00000000-0000-4000-8000-000000000002"}})
	requireToolResultsOK(t, second, 1)
	requireHooksOK(t, second, "TaskCreated")
	requireHooksOK(t, second, "Stop")

	var rec struct {
		Tasks []struct{ Status, Note string }
	}
	readJSON(t, filepath.Join(w.stateDir(), "workflow-state.json"), &rec)
	var open []string
	for _, tk := range rec.Tasks {
		if tk.Status == "pending" {
			open = append(open, tk.Note)
		}
	}
	slices.Sort(open)
	if want := []string{"deploy the fix", "measure the backoff", "write the retry loop"}; !slices.Equal(open, want) {
		t.Errorf("open tasks %q, want %q (each session's own)", open, want)
	}
}
