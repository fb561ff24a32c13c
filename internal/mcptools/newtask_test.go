package mcptools_test

import "testing"

// TestNewTaskAsEndedSaysTheStep: a task first sent as done or failed (the work was done before
// the model recorded its start) was refused with the rule alone, "a new task starts as pending
// or running", leaving the model to work out the two calls; the refusal names them, and the
// task is not added.
func TestNewTaskAsEndedSaysTheStep(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	for _, st := range []string{"done", "failed", "completed"} {
		want := "set it running first, then " + st
		if st == "completed" {
			want = "set it running first, then done"
		}
		mustFail(t, c, "update_task", `{"id":"t1","status":"`+st+`"}`, "task t1 is new", want)
	}
	if rev := snapshot(t, p.other(t, "observer")).Revision; rev != 1 {
		t.Errorf("refused calls changed the workflow: revision %d, want 1", rev)
	}
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`)
	mustOK(t, c, "update_task", `{"id":"t1","status":"done"}`)
}
