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
	t.Parallel()
	e := newEnv(t)
	must(e.openAs("s1", os.Getpid()).Start(engine.StartRequest{Type: "apex", Context: "x"}))(t)
	e.clock.Add(time.Minute)
	term := e.openAs("", 0)
	r := term.Resume(engine.ResumeOptions{Person: true})
	said := strings.Join(r.Warnings, "\n")
	if !strings.Contains(said, "Another live session last changed this workflow 1m ago") {
		t.Fatalf("status warnings: %q", r.Warnings)
	}
	// The person takes the step, not through a user.
	if !strings.Contains(said, "; go on with it in one session only") || strings.Contains(said, "ask the user") {
		t.Errorf("status warnings give the agent's step: %q", r.Warnings)
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

// TestPersonStatusWording: the status warnings of an expired, long idle workflow give a
// person a person's next step; the agent's view keeps the agent's words.
func TestPersonStatusWording(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x", WorkflowID: "apex-old", TTL: "30d"}))(t)
	e.clock.Add(8 * 24 * time.Hour)
	// The agent's step asks the user; its warning says only what is so, not asking again.
	ar := e.open("s2").Resume(engine.ResumeOptions{})
	agent := strings.Join(ar.Warnings, "\n")
	if !strings.Contains(agent, "more than 7 days: the work may have moved on") || strings.Contains(agent, "confirm with the user") ||
		!strings.HasPrefix(ar.Next, "Confirm with the user") {
		t.Fatalf("agent view:\n%s\nNext: %s", agent, ar.Next)
	}
	person := strings.Join(e.open("").Resume(engine.ResumeOptions{Person: true}).Warnings, "\n")
	if strings.Contains(person, "confirm with the user") || !strings.Contains(person, "more than 7 days: the work may have moved on; check that it still applies before going on with it") {
		t.Fatalf("person view:\n%s", person)
	}

	e.clock.Add(30 * 24 * time.Hour)
	agent = strings.Join(e.open("s2").Resume(engine.ResumeOptions{}).Warnings, "\n")
	if !strings.Contains(agent, "workflow apex-old has expired after 30d without a change; the next session start archives it") {
		t.Fatalf("agent view:\n%s", agent)
	}
	person = strings.Join(e.open("").Resume(engine.ResumeOptions{Person: true}).Warnings, "\n")
	if strings.Contains(person, "session start") || !strings.Contains(person, "workflow apex-old has expired after 30d without a change; archive it with `cairn expire`") {
		t.Fatalf("person view:\n%s", person)
	}
}
