package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
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
