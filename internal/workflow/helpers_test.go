package workflow_test

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// t0 is the fixed clock every test starts from.
var t0 = time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)

var alice = workflow.Actor{SessionID: "sess-alice", PID: 101}

func mustDefs(tb testing.TB) *workflow.Definitions {
	tb.Helper()
	defs, errs := workflow.LoadDefinitions(nil, nil)
	if errs != nil {
		tb.Fatalf("LoadDefinitions: %v", errs)
	}
	return defs
}

func mustDef(tb testing.TB, name string) *workflow.Definition {
	tb.Helper()
	d, ok := mustDefs(tb).Lookup(name)
	if !ok {
		tb.Fatalf("no built-in definition %q", name)
	}
	return d
}

// mustStart starts a workflow of type typ at t0 owned by alice.
func mustStart(tb testing.TB, def *workflow.Definition) *workflow.Record {
	tb.Helper()
	res, err := workflow.Start(def, nil, workflow.StartRequest{Type: def.Name, Context: "add login", ID: def.Name + "-1"}, t0, alice)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	return res.Record
}

// walk moves r through the given phases, one minute apart, failing on any error.
func walk(tb testing.TB, def *workflow.Definition, r *workflow.Record, phases ...string) *workflow.Record {
	tb.Helper()
	at := r.UpdatedAt
	for _, p := range phases {
		at = at.Add(time.Minute)
		res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: p}, at, alice)
		if err != nil {
			tb.Fatalf("walk to %s: %v", p, err)
		}
		r = res.Record
	}
	return r
}

// tasker returns a function that updates a task of *r, a second after *at, and keeps the
// result in *r and the time in *at.
func tasker(tb testing.TB, r **workflow.Record, at *time.Time) func(id string, s workflow.TaskStatus) {
	return func(id string, s workflow.TaskStatus) {
		tb.Helper()
		*at = at.Add(time.Second)
		res, err := workflow.UpdateTask(*r, workflow.TaskUpdate{ID: id, Status: s}, *at, alice)
		if err != nil {
			tb.Fatal(err)
		}
		*r = res.Record
	}
}
