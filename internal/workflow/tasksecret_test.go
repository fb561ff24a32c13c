package workflow_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// A refused task update never repeats a secret the caller pasted as the task id or status.
func TestRefusedTaskUpdateDoesNotEchoSecrets(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := mustStart(t, def)
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskPending}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	r = res.Record
	for _, s := range secrettest.Shapes() {
		for _, u := range []workflow.TaskUpdate{
			{ID: s.Text, Status: workflow.TaskDone},             // a new task cannot start done
			{ID: s.Text, Status: workflow.TaskStatus("paused")}, // not a status
			{ID: "t1", Status: workflow.TaskStatus(s.Text)},     // not a status
		} {
			_, err := workflow.UpdateTask(r, u, t0, alice)
			if err == nil {
				t.Fatalf("%s: update %+v accepted", s.Name, u)
			}
			if strings.Contains(err.Error(), s.Core) {
				t.Errorf("%s: the error repeats the secret: %v", s.Name, err)
			}
		}
	}
}
