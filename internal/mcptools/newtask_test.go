package mcptools_test

import (
	"strings"
	"testing"
)

// TestNewTaskAsEndedSaysTheStep: a task first sent as failed (a failure with no run to retry)
// was refused with the rule alone, leaving the model to work out the two calls; the refusal
// names them, and the task is not added. Sent as done (or completed), a new task is work
// finished before it was added: recorded in one call.
func TestNewTaskAsEndedSaysTheStep(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	mustFail(t, c, "update_task", `{"id":"t1","status":"failed"}`, "task t1 is new", "set it running first, then failed")
	if rev := snapshot(t, p.other(t, "observer")).Revision; rev != 1 {
		t.Errorf("the refused call changed the workflow: revision %d, want 1", rev)
	}
	for i, st := range []string{"done", "completed"} {
		id := []string{"t1", "t2"}[i]
		res := mustOK(t, c, "update_task", `{"id":"`+id+`","status":"`+st+`"}`)
		if got := text(res); !strings.HasPrefix(got, "Task "+id+" is done.") {
			t.Errorf("new task %s sent as %s: %q; want it recorded done", id, st, got)
		}
	}
}
