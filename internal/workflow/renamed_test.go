package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// A workflow in a phase its definition no longer has (the phase was renamed or removed) is
// refused a move with the reason, not told the phase "allows no moves out of it", which reads
// as if the work were finished there.
func TestMoveFromAPhaseTheDefinitionLostSaysSo(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def).Clone()
	r.State = "planning" // the project's definition called it so before
	_, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "implement"}, t0, alice)
	var te *workflow.TransitionError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *TransitionError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "allows no moves") || !strings.Contains(msg, "not a phase of") {
		t.Fatalf("the refusal does not say the phase is missing from the definition: %v", err)
	}
}

// A workflow active in a terminal phase (its definition made the phase terminal after the
// workflow entered it, or has one phase only, where a workflow starts in it) can leave it only
// by complete_workflow: the refusal of a move and the resume plan say so, not only that no move
// leads out, which names no way on.
func TestActiveInATerminalPhaseIsToldToComplete(t *testing.T) {
	single, err := yamldoc.Codec{}.ParseDefinition("note.md", []byte("---\nphases: [only]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	apex := mustDef(t, "apex")
	for _, tc := range []struct {
		def *workflow.Definition
		r   *workflow.Record
	}{
		{single, mustStart(t, single)},
		{apex, at(mustStart(t, apex), "git-commit")}, // a terminal phase now, not when entered
	} {
		_, err := workflow.Transition(tc.def, tc.r, workflow.TransitionRequest{To: "plan"}, t0, alice)
		if err == nil || !strings.Contains(err.Error(), "complete_workflow") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s: the refusal names no way on: %v", tc.def.Name, err)
		}
		p := workflow.BuildPlan(workflow.PlanInput{Record: tc.r, Def: tc.def, L1Available: true, L2Available: true, Now: t0})
		if !strings.Contains(p.Next, "complete_workflow") {
			t.Errorf("%s: next step %q does not say to complete the workflow", tc.def.Name, p.Next)
		}
	}
}

// The resume plan of a workflow in a phase its definition no longer has does not offer to
// resume it, which every move refuses: it says what the refusal says, that the phase is to be
// restored in the definition.
func TestPlanOfAPhaseTheDefinitionLostSaysSo(t *testing.T) {
	def := mustDef(t, "apex")
	r, _ := workflow.Transition(def, mustStart(t, def), workflow.TransitionRequest{To: "plan"}, t0, alice)
	lost := at(r.Record, "planning") // the project's definition called it so before
	lost.History[len(lost.History)-1].To = "planning"
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: lost, Now: t0})
	p := workflow.BuildPlan(workflow.PlanInput{Record: lost, Def: def, L1Available: true, L2Available: true, Findings: fs, Now: t0})
	if strings.Contains(p.Next, "whether to resume") || !strings.Contains(p.Next, "restore") || !strings.Contains(p.Next, "planning") {
		t.Errorf("next step %q", p.Next)
	}
}
