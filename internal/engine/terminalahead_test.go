package engine_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A move into a phase that leads on to a terminal one says that entering it completes the
// workflow: a model that moved from fix to git-commit to start committing found the workflow
// completed and archived before the commit, with nothing to go back to if it failed. A move
// into a phase with no terminal phase ahead says nothing more.
func TestMoveSaysTerminalPhaseAheadCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	if _, err := en.Start(engine.StartRequest{Type: "debug", Context: "flaky upload"}); err != nil {
		t.Fatal(err)
	}
	res, err := en.Transition(engine.TransitionRequest{To: "implement"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Next != "" {
		t.Errorf("move into implement: next %q, want none (no terminal phase ahead)", res.Next)
	}
	res, err = en.Transition(engine.TransitionRequest{To: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Entering git-commit completes the workflow: do its work first."; res.Next != want {
		t.Errorf("move into review: next %q, want %q", res.Next, want)
	}
}
