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
	def, err := yamldoc.Codec{}.ParseDefinition("x.md", []byte("---\nname: x\nphases: [a, b, c]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	done := func(min int) workflow.Phase {
		return workflow.Phase{Completed: true, CompletedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	for _, c := range []struct {
		name   string
		phases map[string]workflow.Phase
		def    *workflow.Definition
		want   []string
	}{
		// b completed before a (the work went back): the definition's order stands.
		{"by definition", map[string]workflow.Phase{"b": done(1), "a": done(2), "open": {}}, def, []string{"a", "b"}},
		{"by time", map[string]workflow.Phase{"b": done(1), "a": done(2), "extra": done(0)}, nil, []string{"extra", "b", "a"}},
		// The definition renamed its first phase since: the old name was done first, and is
		// listed first, not after the phases that followed it.
		{"renamed first", map[string]workflow.Phase{"old": done(0), "a": done(1), "b": done(2)}, def, []string{"old", "a", "b"}},
		{"renamed middle", map[string]workflow.Phase{"a": done(0), "old": done(1), "b": done(2)}, def, []string{"a", "old", "b"}},
		{"removed last", map[string]workflow.Phase{"a": done(0), "b": done(1), "gone": done(2)}, def, []string{"a", "b", "gone"}},
		{"no time", map[string]workflow.Phase{"a": done(1), "b": done(2), "x": {Completed: true}, "old": done(0)}, def, []string{"old", "a", "b", "x"}},
	} {
		r := &workflow.Record{Phases: c.phases}
		if got := r.CompletedPhases(c.def); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
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

// A value an error repeats (Quote) is cut: a 100 KB phase name, ttl or severity came back
// whole in the refusal, 100 KB of tool result or hook output for one wrong argument.
func TestQuotedValuesAreCut(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	_, ttlErr := workflow.ParseTTL(long)
	_, sevErr := workflow.ParseSeverity(long)
	for name, err := range map[string]error{"name": workflow.ValidName(long), "name with a space": workflow.ValidName(long + " "), "ttl": ttlErr, "severity": sevErr} {
		if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "xxx…") {
			t.Errorf("%s: %d bytes, want the value cut to a few dozen characters: %.200v", name, len(err.Error()), err)
		}
	}
}
