package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestPersonStatusNamesALiveOwner: from a plain terminal (no session id, no client pid) the
// status view says that another live session owns the workflow, as a transition from the
// same terminal does.
func TestPersonStatusNamesALiveOwner(t *testing.T) {
	e := newEnv(t)
	must(e.openAs("s1", os.Getpid()).Start(engine.StartRequest{Type: "apex", Context: "x"}))(t)
	e.clock.Add(time.Minute)
	term := e.openAs("", 0)
	r := term.Resume(engine.ResumeOptions{Person: true})
	said := strings.Join(r.Warnings, "\n")
	if !strings.Contains(said, "Another live session last changed this workflow 1m ago") {
		t.Fatalf("status warnings: %q", r.Warnings)
	}
	res := must(term.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session last changed this workflow 1m ago") {
		t.Fatalf("transition warnings: %q", res.Warnings)
	}

	// The agent's view (no Person) stays as it was.
	e = newEnv(t)
	must(e.openAs("s1", os.Getpid()).Start(engine.StartRequest{Type: "apex", Context: "x"}))(t)
	e.clock.Add(time.Minute)
	if r := e.openAs("", 0).Resume(engine.ResumeOptions{}); strings.Contains(strings.Join(r.Warnings, "\n"), "Another live session") {
		t.Fatalf("agent view warnings changed: %q", r.Warnings)
	}
}
