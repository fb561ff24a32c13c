package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestCairnOwnerResumedInAnotherClient: the session that owns the workflow ran in a client
// that was killed (kill -9) and was resumed at once in a new client, which runs still and
// whose SessionStart recorded it there (sessions/<pid>.json); it has changed nothing since,
// so the workflow still names the dead client's pid. A second session started now is told
// that another live session holds the workflow, and the user sees it too.
func TestCairnOwnerResumedInAnotherClient(t *testing.T) {
	t.Parallel()
	ownerResumedIn(t, 0, true)
}

// TestCairnOwnerResumedInAClientWhosePidIsTaken: as TestCairnOwnerResumedInAnotherClient, but
// the client the session was resumed in has exited too, and another process (this test's) has
// its pid: the record's client start is not that process's. The second session is not told of
// a live session that has gone.
func TestCairnOwnerResumedInAClientWhosePidIsTaken(t *testing.T) {
	t.Parallel()
	ownerResumedIn(t, 1, false)
}

// ownerResumedIn runs a second session beside a workflow whose owner's session is recorded as
// resumed in a client of this test's pid that started at clientStart (0: not known), and
// checks whether that session is told of another live session.
func ownerResumedIn(t *testing.T, clientStart uint64, told bool) {
	w := newWorld(t, cairnPlugin)
	dead := storetest.ExitedPID(t)
	env := map[string]string{"HOME": w.Home, "CLAUDE_PROJECT_DIR": w.Project}
	open := func(pid int) *engine.Engine {
		e, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }, WorkDir: w.Project,
			SessionID: "resumed-session", PID: pid, Actor: "cli", YAML: yamldoc.Codec{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	if _, err := open(dead).Start(engine.StartRequest{Type: "apex", Context: seedContext}); err != nil {
		t.Fatal(err)
	}
	// The resumed client: this test's process, which runs for as long as the run does.
	live := os.Getpid()
	if err := open(live).RecordSession(engine.Session{SessionID: "resumed-session", Source: "resume", PID: live, StartedAt: time.Now(), ClientStart: clientStart}); err != nil {
		t.Fatal(err)
	}
	r := w.run(t, RunOptions{Prompt: "SECOND-SESSION: where are we?"})
	requireOK(t, r)
	report := cairnReport(t, r.FirstMain(t))
	// The warning in the report, and the step after it, which asks the user.
	ask := strings.Contains(fromSessionStart(t, r.FirstMain(t)), "\nNext: Ask the user which session goes on with this workflow")
	if got := strings.Contains(report, "Another live session last changed this workflow") && ask; got != told {
		t.Errorf("the second session's report says another live session holds the workflow: %v, want %v\n%s", got, told, report)
	}
	if out := parseHookOutput(t, requireHooksOK(t, r, "SessionStart")[0]); strings.Contains(out.SystemMessage, "Another live session") != told {
		t.Errorf("SessionStart told the user %q, want the other live session told: %v", out.SystemMessage, told)
	}
}
