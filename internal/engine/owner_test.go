package engine_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func (e *env) openAs(session string, pid int) *engine.Engine {
	e.t.Helper()
	en, err := engine.Open(engine.Config{
		Getenv:    func(k string) string { return e.vars[k] },
		WorkDir:   e.project,
		Now:       e.clock.Now,
		SessionID: session,
		PID:       pid,
		Actor:     "test",
		YAML:      yamldoc.Codec{},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { en.Close() })
	return en
}

// exitedPID is the pid of a process that has run and been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a short-lived process: %v", err)
	}
	return cmd.Process.Pid
}

// A session that last changed the workflow a moment ago is "another live session" only while
// it can be: not when it ran in the caller's own client (replaced by /clear), nor when its
// client has exited (a new session right after the last one closed). The heartbeat alone
// decides when no pid is recorded.
func TestOwnerEndedIsNotLive(t *testing.T) {
	const client = 4242
	for _, tc := range []struct {
		name     string
		ownerPID func(t *testing.T) int
		live     bool
	}{
		{"owner client alive elsewhere", func(*testing.T) int { return os.Getpid() }, true},
		{"same client after clear", func(*testing.T) int { return client }, false},
		{"owner client exited", exitedPID, false},
		{"no pid recorded", func(*testing.T) int { return 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			owner := tc.ownerPID(t)
			if _, err := e.openAs("old-session", owner).Start(engine.StartRequest{Type: "apex", Context: "ownership"}); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(30 * time.Second)
			en := e.openAs("new-session", client)

			res, err := en.Resume(engine.ResumeOptions{Apply: true, Source: "clear"})
			if err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session")
			if warned != tc.live || strings.Contains(res.Report, "Another live session") != tc.live ||
				(res.SystemMessage != "") != tc.live {
				t.Errorf("live %v: warnings %q, system message %q, report:\n%s", tc.live, res.Warnings, res.SystemMessage, res.Report)
			}

			tr, err := en.Transition(engine.TransitionRequest{To: "plan"})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(strings.Join(tr.Warnings, "\n"), "Another live session"); got != tc.live {
				t.Errorf("live %v: transition warnings %q", tc.live, tr.Warnings)
			}
			if !strings.Contains(string(tr.Workflow), `"session_id":"new-session"`) {
				t.Errorf("the transition did not make new-session the owner: %s", tr.Workflow)
			}
		})
	}
}

// A caller that is neither a session nor a client (the CLI outside Claude Code) does not take
// the workflow over, so an ended owner's heartbeat is kept as it was.
func TestEndedOwnerKeptByAnonymousChange(t *testing.T) {
	e := newEnv(t)
	started := e.clock.Now()
	if _, err := e.openAs("old-session", exitedPID(t)).Start(engine.StartRequest{Type: "apex", Context: "ownership"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	res, err := e.openAs("", 0).Transition(engine.TransitionRequest{To: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	want := `"heartbeat":"` + started.Format(time.RFC3339)
	if !strings.Contains(string(res.Workflow), `"session_id":"old-session"`) || !strings.Contains(string(res.Workflow), want) {
		t.Errorf("owner after an anonymous change, want old-session with heartbeat %s: %s", started.Format(time.RFC3339), res.Workflow)
	}
}
