package engine_test

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestMain lets the test binary act as a second Cairn process.
func TestMain(m *testing.M) {
	switch os.Getenv("CAIRN_ENGINE_CHILD") {
	case "cas":
		os.Exit(casChild())
	case "kill":
		os.Exit(killWriter())
	case "archive-starter":
		os.Exit(archiveStarter())
	}
	storetest.QuietExits()
	os.Exit(m.Run())
}

// casChild opens the engine, says so in its ready file, waits for the go file, then tries
// analyze->plan as a compare-and-swap and prints "won" or "lost: <error>".
func casChild() int {
	dir := os.Getenv("CLAUDE_PROJECT_DIR")
	en, err := engine.Open(engine.Config{WorkDir: dir, SessionID: os.Getenv("CHILD_SESSION"), Actor: "child"})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	if err := os.WriteFile(os.Getenv("CHILD_READY"), nil, 0o600); err != nil {
		fmt.Println("ready:", err)
		return 1
	}
	// Only a hang guard: the parent writes the go file once both children are ready, and it
	// gives each a minute to be (a loaded machine starts a -race binary slowly); a shorter
	// wait here ended the first child while the second was still starting.
	for deadline := time.Now().Add(3 * time.Minute); ; {
		if _, err := os.Stat(os.Getenv("CHILD_GO")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("no go signal")
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	_, err = en.Transition(engine.TransitionRequest{To: "plan", From: "analyze"})
	var ce *workflow.ConflictError
	switch {
	case err == nil:
		fmt.Println("won")
	case errors.As(err, &ce):
		fmt.Println("lost:", err)
	default:
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// Two processes race the same compare-and-swap transition: exactly one wins, the other gets
// the conflict error naming the phase it found, and the journal holds exactly one move.
func TestTwoProcessesRaceACompareAndSwap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for round := range 5 {
		e := newEnv(t)
		en := e.open("parent")
		e.clock.t = time.Now().UTC()
		must(en.Start(engine.StartRequest{Type: "apex", Context: "race"}))(t)
		signals := t.TempDir()
		goFile := signals + "/go"
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i := range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "CAIRN_ENGINE_CHILD=cas", "CLAUDE_PROJECT_DIR="+e.project,
				"HOME="+e.home, "CHILD_GO="+goFile, fmt.Sprintf("CHILD_READY=%s/ready-%d", signals, i), fmt.Sprintf("CHILD_SESSION=child-%d", i))
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		// Both have opened the engine and wait for the go file: the two tries race.
		for i := range 2 {
			for end := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				if _, err := os.Stat(fmt.Sprintf("%s/ready-%d", signals, i)); err == nil {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("round %d: child %d was not ready a minute later", round, i)
				}
			}
		}
		if err := os.WriteFile(goFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		won, lost := 0, 0
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d child %d: %v\n%s", round, i, err, outs[i])
			}
			switch o := outs[i].String(); {
			case strings.HasPrefix(o, "won"):
				won++
			case strings.HasPrefix(o, "lost:") && strings.Contains(o, "expected phase analyze, found plan"):
				lost++
			default:
				t.Fatalf("round %d child %d said %q", round, i, o)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("round %d: %d won, %d lost", round, won, lost)
		}
		list := must(en.List())(t)
		hist := must(en.History(list[0].WorkflowID))(t)
		moves := 0
		for _, h := range hist {
			if h.Kind == "transition" {
				moves++
				if !strings.Contains(string(h.Detail), `"session_id":"child-`) {
					t.Errorf("the journal does not say which process moved: %s", h.Detail)
				}
			}
		}
		if moves != 1 || len(hist) != 2 {
			t.Fatalf("round %d: journal has %d records, %d transitions; want start + one move", round, len(hist), moves)
		}
	}
}

func (e *env) openAs(session string, pid int) *engine.Engine { return e.openWaiting(session, pid, 0) }

// openWaiting is openAs with engine.Config.LockWait set (0: the default).
func (e *env) openWaiting(session string, pid int, wait time.Duration) *engine.Engine {
	e.t.Helper()
	return e.openWith(session, pid, func(c *engine.Config) { c.LockWait = wait })
}

// openWith is openAs with the engine's configuration changed by set. The engine skips the
// state directory's fsyncs (noSync): no test here cuts power (simfs shows lost power, in
// internal/store), and TestKillDashNineEveryOperation, which kills processes, opens its own.
func (e *env) openWith(session string, pid int, set func(*engine.Config)) *engine.Engine {
	e.t.Helper()
	cfg := engine.Config{
		Getenv:    func(k string) string { return e.vars[k] },
		WorkDir:   e.project,
		Now:       e.clock.Now,
		SessionID: session,
		PID:       pid,
		Actor:     "test",
		YAML:      yamldoc.Codec{},
		WrapFS:    noSync,
	}
	set(&cfg)
	en, err := engine.Open(cfg)
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
// decides when no pid is recorded (the agent's cairn in its Bash tool has the session but no
// pid), unless the caller's client ran that session before the one it is in now: its session
// starts recorded both (sessions/<pid>.json), and /clear ended the first. Any engine of that
// client knows it (a session start, cairn-mcp, a PreCompact hook), not only the one that
// recorded it. Nor is such an owner live when the client whose record names its session has
// exited (Claude Code quit, then started again at once).
//
// The same session in another client (`claude --continue` in a second terminal while the
// first runs) is another live session while that client runs, and ended once it has exited.
func TestOwnerEndedIsNotLive(t *testing.T) {
	t.Parallel()
	const client = 4242
	for _, tc := range []struct {
		name     string
		ownerPID func(t *testing.T) int
		session  string   // the caller's session; "" is another one than the owner's
		records  []string // the sessions the caller's client recorded, in order, before the call
		live     bool
		// ranIn is the client whose session record names the owner's session (nil: none).
		ranIn func(t *testing.T) int
	}{
		{"no pid recorded, its client exited", func(*testing.T) int { return 0 }, "", nil, false, exitedPID},
		{"no pid recorded, its client runs", func(*testing.T) int { return 0 }, "", nil, true, func(*testing.T) int { return os.Getpid() }},
		{"owner client alive elsewhere", func(*testing.T) int { return os.Getpid() }, "", nil, true, nil},
		{"same client after clear", func(*testing.T) int { return client }, "", nil, false, nil},
		{"owner client exited", exitedPID, "", nil, false, nil},
		{"no pid recorded", func(*testing.T) int { return 0 }, "", nil, true, nil},
		{"no pid recorded, ran in this client before clear", func(*testing.T) int { return 0 }, "", []string{"old-session", "new-session"}, false, nil},
		{"no pid recorded, ran in this client two sessions ago", func(*testing.T) int { return 0 }, "", []string{"old-session", "other", "new-session"}, false, nil},
		{"no pid recorded, this client ran another", func(*testing.T) int { return 0 }, "", []string{"other", "new-session"}, true, nil},
		{"no pid recorded, resumed again in this client", func(*testing.T) int { return 0 }, "", []string{"old-session", "new-session", "old-session", "new-session"}, false, nil},
		{"same session in a live other client", func(*testing.T) int { return os.Getpid() }, "old-session", nil, true, nil},
		{"same session resumed after its client exited", exitedPID, "old-session", nil, false, nil},
		{"owner client exited, its session resumed in a live client", exitedPID, "", nil, true, func(*testing.T) int { return os.Getpid() }},
		{"owner client exited, its session resumed in an exited client", exitedPID, "", nil, false, exitedPID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			owner := tc.ownerPID(t)
			if _, err := e.openAs("old-session", owner).Start(engine.StartRequest{Type: "apex", Context: "ownership"}); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(30 * time.Second)
			if tc.ranIn != nil {
				pid := tc.ranIn(t)
				if err := e.openAs("old-session", pid).RecordSession(engine.Session{SessionID: "old-session", PID: pid}); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range tc.records {
				if err := e.openAs(s, client).RecordSession(engine.Session{SessionID: s, PID: client}); err != nil {
					t.Fatal(err)
				}
			}
			caller := cmp.Or(tc.session, "new-session")
			en := e.openAs(caller, client)

			res := en.Resume(engine.ResumeOptions{Apply: true})
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
			if !strings.Contains(string(tr.Workflow), `"session_id":"`+caller+`","pid":4242`) {
				t.Errorf("the transition did not make %s in client %d the owner: %s", caller, client, tr.Workflow)
			}
		})
	}
}

// A caller that is neither a session nor a client (the CLI outside Claude Code) does not take
// the workflow over, so an ended owner's heartbeat is kept as it was.
func TestEndedOwnerKeptByAnonymousChange(t *testing.T) {
	t.Parallel()
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

// The Stop hook refreshes the owner's heartbeat only for the owning client: the same session
// in a second client (`claude --continue` in another terminal) does not take the workflow
// from a first client that still runs, which would make that client's next tool call report a
// change nobody made. Once the first client has exited, the second takes the heartbeat over.
func TestStopHeartbeatKeepsAnotherLiveClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		ownerPID func(t *testing.T) int
		takes    bool
		// ranIn is the first client, whose session record names s1, when the owner was
		// recorded without a pid (an older Cairn's): it is not known to be either client's.
		ranIn func(t *testing.T) int
	}{
		{"first client alive", func(*testing.T) int { return os.Getpid() }, false, nil},
		{"first client exited", exitedPID, true, nil},
		{"no pid recorded, first client alive", func(*testing.T) int { return 0 }, false, func(*testing.T) int { return os.Getpid() }},
		{"no pid recorded, first client exited", func(*testing.T) int { return 0 }, true, exitedPID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			owner := tc.ownerPID(t)
			if _, err := e.openAs("s1", owner).Start(engine.StartRequest{Type: "apex", Context: "two clients"}); err != nil {
				t.Fatal(err)
			}
			if tc.ranIn != nil {
				pid := tc.ranIn(t)
				must(0, e.openAs("s1", pid).RecordSession(engine.Session{SessionID: "s1", PID: pid}))(t)
			}
			e.clock.Add(5 * time.Minute)
			second := e.openAs("s1", 4242)
			before := must(second.Snapshot())(t)
			if _, err := second.Stop(engine.StopInput{SessionID: "s1"}); err != nil {
				t.Fatal(err)
			}
			after := must(second.Snapshot())(t)
			if took := after.PID == 4242 && after.Revision == before.Revision+1; took != tc.takes || (!tc.takes && (after.PID != owner || after.Revision != before.Revision)) {
				t.Errorf("after the second client's Stop the owner is pid %d at revision %d (was %d at %d), want taken over: %v", after.PID, after.Revision, before.PID, before.Revision, tc.takes)
			}
		})
	}
}
