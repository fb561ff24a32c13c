package workflow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func TestErrorTextsStaySafe(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def)
	done, _ := workflow.Complete(r, "ok", t0, alice)
	var errs []error
	_, err := workflow.Transition(def, done.Record, workflow.TransitionRequest{To: "plan"}, t0, alice)
	errs = append(errs, err)
	_, err = workflow.Transition(mustDef(t, "debug"), r, workflow.TransitionRequest{To: "fix"}, t0, alice)
	errs = append(errs, err)
	_, err = workflow.Transition(nil, r, workflow.TransitionRequest{To: "plan"}, t0, alice)
	errs = append(errs, err)
	_, err = workflow.Start(def, r, workflow.StartRequest{Context: "x"}, t0, alice)
	errs = append(errs, err)
	_, err = workflow.Start(def, r, workflow.StartRequest{Context: "x", ID: "apex-1", Replace: true}, t0, alice)
	errs = append(errs, err)
	active := at(r, "git-commit") // an active record in a terminal phase (hand-edited)
	_, err = workflow.Transition(def, active, workflow.TransitionRequest{To: "plan"}, t0, alice)
	errs = append(errs, err)
	in, _ := workflow.NewInitiative("i", "", nil, t0)
	_, err = workflow.SetInitiativeStatus(in, "completed", t0)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		msg := err.Error()
		for _, bad := range []string{"delete", "rm ", "reset", "failed to", "remove"} {
			if strings.Contains(strings.ToLower(msg), bad) {
				t.Errorf("case %d: %q says %q", i, msg, bad)
			}
		}
		if msg != strings.ToLower(msg[:1])+msg[1:] {
			t.Errorf("case %d: %q starts uppercase", i, msg)
		}
	}
	var ne *workflow.NotActiveError
	if !errors.As(errs[0], &ne) || !strings.Contains(errs[0].Error(), "is completed, not active") {
		t.Fatal(errs[0])
	}
	if !strings.Contains(errs[1].Error(), `is of type "apex", not "debug"`) {
		t.Fatal(errs[1])
	}
	if !strings.Contains(errs[5].Error(), "git-commit is a terminal phase of its definition, so no move leads out of it") {
		t.Fatal(errs[5])
	}
	if !strings.Contains(errs[6].Error(), "allowed next: in_progress") {
		t.Fatal(errs[6])
	}
}

func TestCompletedPhasesOrder(t *testing.T) {
	r := &workflow.Record{Phases: map[string]workflow.Phase{
		"b":     {Completed: true, CompletedAt: t0.Add(time.Minute)},
		"a":     {Completed: true, CompletedAt: t0.Add(2 * time.Minute)},
		"extra": {Completed: true, CompletedAt: t0},
		"open":  {},
	}}
	def, err := yamldoc.Codec{}.ParseDefinition("x.md", []byte("---\nname: x\nphases: [a, b, c]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.CompletedPhases(def); !slices.Equal(got, []string{"a", "b", "extra"}) {
		t.Fatalf("by definition: %v", got)
	}
	if got := r.CompletedPhases(nil); !slices.Equal(got, []string{"extra", "b", "a"}) {
		t.Fatalf("by time: %v", got)
	}
}

func TestCountTasksByPhase(t *testing.T) {
	r := &workflow.Record{Tasks: []workflow.Task{
		{ID: "1", Phase: "a", Status: "running"}, {ID: "2", Phase: "b", Status: "failed"}, {ID: "3", Status: "pending"},
	}}
	if c := workflow.CountTasks(r, "a"); c.Running != 1 || c.Pending != 1 || c.Failed != 0 {
		t.Fatalf("%+v", c)
	}
	if c := workflow.CountTasks(nil, ""); c != (workflow.TaskCounts{}) {
		t.Fatal(c)
	}
}
