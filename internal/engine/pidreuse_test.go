//go:build linux || darwin

package engine_test

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// A Claude Code client exits and another process takes its pid (a pid wraps within minutes
// on a busy machine). Its session record (sessions/<pid>.json) names the client's session, and
// a kill(pid, 0) finds a process: the session was taken as live for as long as that process
// ran, so a session resumed in a new client was told "Another live session" of itself, and
// another session of the owner it took over. The record's client start (the process start
// time, where the platform tells it) tells the pid's new process from the client.
func TestReusedClientPidIsNoLiveOwner(t *testing.T) {
	t.Parallel()
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
				var start uint64 // the owner's client's, as its session record says
				if reused {
					start = 1 // a start no process of this pid had
				}
				must(e.openWith("old-session", owner, func(c *engine.Config) { c.ClientStart = start }).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
				e.clock.Add(30 * time.Second)
				pid := owner
				if tc.ranIn != nil {
					pid = tc.ranIn(t)
				}
				s := engine.Session{SessionID: "old-session", PID: pid, ClientStart: start}
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

// A Claude Code client exits, and another client takes its pid. The new client's session
// record listed the old one's sessions as its own replaced sessions (Session.Replaced, "this
// client ran them before"), so an owner recorded without a pid, of a session of the old
// client, was taken for the new client's: its turns kept that owner's heartbeat, and a
// session in a second terminal was told of another live session for as long as the new
// client ran. The new client's record starts its own list.
func TestReusedClientPidTakesNoReplacedSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := os.Getpid() // the old client's pid, the new client's now
	must(e.openAs("old-session", 0).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
	must(0, e.openAs("old-session", pid).RecordSession(engine.Session{SessionID: "old-session", PID: pid, ClientStart: 1}))(t)
	must(0, e.openAs("new-session", pid).RecordSession(engine.Session{SessionID: "new-session", PID: pid}))(t)
	if s, _ := e.openAs("new-session", pid).CurrentSession(pid); len(s.Replaced) != 0 {
		t.Errorf("the new client's record lists %q as replaced, sessions of the client that had its pid", s.Replaced)
	}
	for range 5 {
		e.clock.Add(3 * time.Minute)
		must(e.openAs("new-session", pid).Stop(engine.StopInput{SessionID: "new-session"}))(t)
	}
	if w := e.openAs("third-session", 4243).Resume(engine.ResumeOptions{}).Warnings; strings.Contains(strings.Join(w, "\n"), "Another live session") {
		t.Errorf("a second terminal is told of another live session, the exited client's: %q", w)
	}
}

// A Claude Code client exits and another takes its pid; the new client's SessionStart hook
// failed, so sessions/<pid>.json is still the old client's, naming its session, whose
// workflow owner was recorded without a pid. The new client's own engines took that record
// for their client's (its pid is theirs): the old session looked live here, "Another live
// session" of a session whose client has exited (a third terminal saw it ended), and this
// client's Stop kept that session's heartbeat. The record's client start tells it apart here
// too.
func TestReusedClientPidStaleRecordIsNotThisClients(t *testing.T) {
	t.Parallel()
	pid := os.Getpid() // the old client's pid, the new client's now
	start, ok := store.ProcessStart(pid)
	if !ok {
		t.Skip("the platform does not tell a process's start")
	}
	for _, tc := range []struct {
		name        string
		clientStart uint64
		exited      bool
	}{
		{"left by an exited client", 1, true},
		{"control: this client's, not yet replaced after /clear", start, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			must(e.openAs("old-session", 0).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
			must(0, e.openAs("old-session", pid).RecordSession(engine.Session{SessionID: "old-session", PID: pid, ClientStart: tc.clientStart}))(t)
			e.clock.Add(30 * time.Second)
			res := e.openAs("new-session", pid).Resume(engine.ResumeOptions{FromClient: true})
			if live := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session"); live == tc.exited {
				t.Errorf("the old session is live to this client: %v, want %v (warnings %q)", live, !tc.exited, res.Warnings)
			}
			e.clock.Add(3 * time.Minute)
			out := must(e.openAs("new-session", pid).Stop(engine.StopInput{SessionID: "new-session"}))(t)
			if out.Heartbeat == tc.exited {
				t.Errorf("this client's Stop kept the old session's heartbeat: %v, want %v", out.Heartbeat, !tc.exited)
			}
		})
	}
}

// A Claude Code client that owns the workflow exits, and another client, in a session of its
// own, takes its pid. The owner recorded the pid but not when its client started, so the new
// client was taken for the owner's: its turns' ends kept the exited session's heartbeat, and
// the owner's session, resumed in a third client (`claude --resume`), was told "Another live
// session" of itself for as long as the new client ran. The owner records its client's start.
func TestReusedOwnerPidKeepsNoHeartbeat(t *testing.T) {
	t.Parallel()
	pid := os.Getpid() // the owner's client's, the new client's now
	if _, ok := store.ProcessStart(pid); !ok {
		t.Skip("the platform does not tell a process's start")
	}
	e := newEnv(t)
	old := func(c *engine.Config) { c.ClientStart = 1 } // a start no process of this pid had
	must(e.openWith("old-session", pid, old).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
	must(0, e.openWith("old-session", pid, old).RecordSession(engine.Session{SessionID: "old-session", PID: pid, ClientStart: 1}))(t)
	must(0, e.openAs("new-session", pid).RecordSession(engine.Session{SessionID: "new-session", PID: pid}))(t)
	for range 5 {
		e.clock.Add(3 * time.Minute)
		if out := must(e.openAs("new-session", pid).Stop(engine.StopInput{SessionID: "new-session"}))(t); out.Heartbeat {
			t.Fatal("the new client's Stop kept the heartbeat of the session of the client that had its pid")
		}
	}
	if w := e.openAs("old-session", 4243).Resume(engine.ResumeOptions{Apply: true}).Warnings; strings.Contains(strings.Join(w, "\n"), "Another live session") {
		t.Errorf("the owner's session, resumed in a third client, is told of another live session: %q", w)
	}
}

// A client's session record that cannot be read for an I/O error (a failing disk) was taken as
// none: the session start rewrote it without the sessions the client ran before (/clear), so an
// owner of one of them recorded without a pid looked like another live session to this very
// client. The record is left as it is, and the hook is told why the session was not recorded;
// the next start that reads it carries them on.
func TestRecordSessionUnreadKeepsReplaced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := os.Getpid()
	var on atomic.Bool
	en := func(session string) *engine.Engine {
		return e.openWith(session, pid, func(c *engine.Config) {
			c.WrapFS = func(fsys durable.FS) durable.FS {
				return readEIO{FS: noSync(fsys), on: &on, files: func(name string) bool { return name == "sessions/"+strconv.Itoa(pid)+".json" }}
			}
		})
	}
	for _, id := range []string{"session-1", "session-2"} {
		must(0, en(id).RecordSession(engine.Session{SessionID: id, PID: pid}))(t)
	}
	on.Store(true)
	err := en("session-3").RecordSession(engine.Session{SessionID: "session-3", PID: pid})
	on.Store(false)
	if err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("recording with the old record unreadable: %v, want the read error", err)
	}
	must(0, en("session-3").RecordSession(engine.Session{SessionID: "session-3", PID: pid}))(t)
	if s, _ := en("session-3").CurrentSession(pid); strings.Join(s.Replaced, " ") != "session-2 session-1" {
		t.Errorf("replaced sessions after an unread record: %q, want session-2 session-1", s.Replaced)
	}
}
