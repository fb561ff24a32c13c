//go:build linux || darwin

package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A Claude Code client exits and another process takes its pid (a pid wraps within minutes
// on a busy machine). Its session record (sessions/<pid>.json) names the client's session, and
// a kill(pid, 0) finds a process: the session was taken as live for as long as that process
// ran, so a session resumed in a new client was told "Another live session" of itself, and
// another session of the owner it took over. The record's client start (the process start
// time, where the platform tells it) tells the pid's new process from the client.
func TestReusedClientPidIsNoLiveOwner(t *testing.T) {
	const client = 4242
	for _, tc := range []struct {
		name     string
		ownerPID func(t *testing.T) int // the pid the workflow's owner records
		caller   string                 // the caller's session
		// ranIn is the client whose session record names the owner's session.
		ranIn func(t *testing.T) int
	}{
		{"owner's client pid taken", func(*testing.T) int { return os.Getpid() }, "new-session", nil},
		{"no pid recorded, its client's pid taken", func(*testing.T) int { return 0 }, "new-session", func(*testing.T) int { return os.Getpid() }},
		{"resumed here after its client exited, the pid it ran in taken", exitedPID, "old-session", func(*testing.T) int { return os.Getpid() }},
	} {
		for _, reused := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: " (control: the client runs)", true: ""}[reused], func(t *testing.T) {
				e := newEnv(t)
				owner := tc.ownerPID(t)
				must(e.openAs("old-session", owner).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
				e.clock.Add(30 * time.Second)
				pid := owner
				if tc.ranIn != nil {
					pid = tc.ranIn(t)
				}
				s := engine.Session{SessionID: "old-session", PID: pid}
				if reused {
					s.ClientStart = 1 // a start no process of this pid had
				}
				if err := e.openAs("old-session", pid).RecordSession(s); err != nil {
					t.Fatal(err)
				}
				res := e.openAs(tc.caller, client).Resume(engine.ResumeOptions{Apply: true})
				if live := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session"); live == reused {
					t.Errorf("taken as live %v, want %v: warnings %q, report:\n%s", live, !reused, res.Warnings, res.Report)
				}
			})
		}
	}
}
