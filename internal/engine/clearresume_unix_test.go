//go:build linux || darwin

package engine_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// runningClient starts a process that runs until the test ends: a Claude Code client other
// than the test's own process.
func runningClient(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// A client /clears the owner's session S0 into S1 and goes on keeping S0's heartbeat; then
// `claude --resume S0` in a second terminal takes S0 there. The cleared client kept stamping
// S0's heartbeat with its own pid, so the resumed session was told "Another live session" of
// its own session (the cleared client's stamps), its turns kept no heartbeat, and the cleared
// client's session was told of none. S0 is the second client's now: that client's session is
// told of no other and keeps the heartbeat; the cleared client stops keeping it and is told
// of the live session in the other client.
func TestClearedClientYieldsSessionResumedElsewhere(t *testing.T) {
	t.Parallel()
	first := os.Getpid()       // /cleared S0 into S1
	second := runningClient(t) // resumed S0
	e := newEnv(t)
	must(e.openAs("sess-s0", first).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(0, e.openAs("sess-s0", first).RecordSession(engine.Session{SessionID: "sess-s0", PID: first}))(t)
	must(0, e.openAs("sess-s1", first).RecordSession(engine.Session{SessionID: "sess-s1", PID: first}))(t)
	e.clock.Add(3 * time.Minute)
	must(e.openAs("sess-s1", first).Stop(engine.StopInput{SessionID: "sess-s1"}))(t)
	must(0, e.openAs("sess-s0", second).RecordSession(engine.Session{SessionID: "sess-s0", PID: second}))(t)
	warned := func(session string, pid int) bool {
		w := e.openAs(session, pid).Resume(engine.ResumeOptions{}).Warnings
		return strings.Contains(strings.Join(w, "\n"), "Another live session")
	}
	if warned("sess-s0", second) {
		t.Error("the session resumed in the second client is told of another live session: its own")
	}
	for range 5 { // both clients' turns end, fifteen minutes on
		e.clock.Add(3 * time.Minute)
		must(e.openAs("sess-s1", first).Stop(engine.StopInput{SessionID: "sess-s1"}))(t)
		must(e.openAs("sess-s0", second).Stop(engine.StopInput{SessionID: "sess-s0"}))(t)
	}
	var r struct {
		Owner struct {
			SessionID string `json:"session_id"`
			PID       int    `json:"pid"`
		}
	}
	if err := json.Unmarshal(e.openAs("sess-s0", second).Resume(engine.ResumeOptions{}).Workflow, &r); err != nil {
		t.Fatal(err)
	}
	if r.Owner.SessionID != "sess-s0" || r.Owner.PID != second {
		t.Errorf("owner %+v, want sess-s0 in the client it was resumed in (%d)", r.Owner, second)
	}
	if warned("sess-s0", second) {
		t.Error("fifteen minutes on, the resumed session is told of another live session")
	}
	if !warned("sess-s1", first) {
		t.Error("the cleared client's session is not told of the owner's session live in another client")
	}
	if !warned("sess-third", 4243) {
		t.Error("a third terminal is not told of the live owner")
	}
}

// The owner's session S0 goes on in another client (`claude --resume S0`) after the client it
// ran in /cleared or crashed, and its first turn there is a long one (a 15-minute build): no
// Stop has stamped the new client's pid on the owner yet. Only the pid recorded (the old
// client's) was looked at, whose record names another session or which runs no more, so past
// the live window a third terminal took the workflow over as abandoned while S0 worked in it.
// The client whose record names S0 now keeps it live.
func TestResumedOwnerLiveThroughLongTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		first func(t *testing.T) int // the client S0 ran in first
		clear bool
	}{
		{"first client cleared", runningClient, true},
		{"first client crashed", exitedPID, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, second := c.first(t), runningClient(t)
			e := newEnv(t)
			must(e.openAs("sess-s0", first).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(0, e.openAs("sess-s0", first).RecordSession(engine.Session{SessionID: "sess-s0", PID: first}))(t)
			if c.clear {
				must(0, e.openAs("sess-s1", first).RecordSession(engine.Session{SessionID: "sess-s1", PID: first}))(t)
			}
			must(0, e.openAs("sess-s0", second).RecordSession(engine.Session{SessionID: "sess-s0", PID: second}))(t)
			e.clock.Add(15 * time.Minute) // S0's first turn in the second client
			res := e.openAs("sess-third", os.Getpid()).Resume(engine.ResumeOptions{Apply: true})
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session") {
				t.Errorf("a third terminal is not told of S0 live in the second client: warnings %q", res.Warnings)
			}
		})
	}
}
