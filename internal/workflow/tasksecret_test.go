package workflow_test

import (
	"strings"
	"testing"
	"time"

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
			{ID: s.Text, Status: workflow.TaskFailed},           // a new task cannot start failed
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

// A record written by hand or by another tool may hold what Cairn never stores: the checks
// before a resume name its tasks and values without repeating a secret in them.
func TestCheckFindingsDoNotEchoSecrets(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := mustStart(t, def)
	later := base.UpdatedAt.Add(time.Hour)
	for _, s := range secrettest.Shapes() {
		r := base.Clone()
		r.PhaseStatus = workflow.PhaseStatus(s.Text)
		r.Tasks = []workflow.Task{
			{ID: s.Text, Status: workflow.TaskRunning, StartedAt: later.Add(time.Hour)},
			{ID: "t2", Status: workflow.TaskStatus(s.Text)},
		}
		lost := base.Clone() // in a phase of that shape, which no definition has
		lost.State = s.Text
		for _, r := range []*workflow.Record{r, lost} {
			for _, f := range workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: later}) {
				if strings.Contains(f.Text, s.Core) {
					t.Errorf("%s: finding %s repeats the secret: %s", s.Name, f.Code, f.Text)
				}
			}
		}
	}
}

// A phase of a secret's shape on record (a hand edit) is not repeated by the refusals of a
// move out of it or of an approval there (cairn transition, cairn approve printed it).
func TestRefusalsInAPhaseOnRecordDoNotEchoSecrets(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := mustStart(t, def)
	for _, s := range secrettest.Shapes() {
		r := base.Clone()
		r.State = s.Text
		_, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "architecture"}, t0, alice)
		_, aerr := workflow.Approve(def, r, workflow.ApprovalCLI, "", t0, alice)
		for _, err := range []error{err, aerr} {
			if err == nil || strings.Contains(err.Error(), s.Core) {
				t.Errorf("%s: %v, want a refusal that does not repeat the phase", s.Name, err)
			}
		}
	}
}
