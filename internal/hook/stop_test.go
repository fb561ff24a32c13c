package hook_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
)

// TestStopSaysAFailureOncePerSession: damaged state stays damaged until someone acts, so the
// Stop hook tells the user once per session, not after every turn, also while another session
// is open; a new session is told again, and nothing is written into the state that failed.
func TestStopSaysAFailureOncePerSession(t *testing.T) {
	getenv, state := startedProject(t, "apex-dmg")
	os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600)
	os.WriteFile(filepath.Join(state, "journal", "apex-dmg.jsonl"), []byte("not a journal\n"), 0o600)
	stop := func(session string) string {
		stdout, _ := runStop(getenv, session)
		return stdout
	}
	const said = `{"systemMessage":"Cairn: the end-of-turn check failed: a workflow is on record`
	if got := stop("s1"); !strings.HasPrefix(got, said) {
		t.Fatalf("first turn: %q", got)
	}
	before, _ := os.ReadDir(state)
	for range 2 {
		if got := stop("s1"); got != "" {
			t.Fatalf("a later turn of the same session says it again: %q", got)
		}
	}
	if after, _ := os.ReadDir(state); len(after) != len(before) {
		t.Errorf("the state directory changed: %d entries, then %d", len(before), len(after))
	}
	if got := stop("s2"); !strings.HasPrefix(got, said) {
		t.Errorf("another session is not told: %q", got)
	}
	// Two sessions open on the project at once: each was told, and neither is told again
	// after the other's turn.
	for _, session := range []string{"s1", "s2", "s1"} {
		if got := stop(session); got != "" {
			t.Errorf("a later turn of %s, after another session's, says it again: %q", session, got)
		}
	}
}

// TestStateThatCannotBeOpenedIsSaidOncePerSession: a state directory that cannot be made (here
// its parent is a file; a read-only project fails the same way) stays so until someone acts.
// SessionStart tells the user; the session's turns then say nothing more. Before, every turn's
// Stop said it again.
func TestStateThatCannotBeOpenedIsSaidOncePerSession(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_STATE_DIR": filepath.Join(dir, "afile", "cairn"), "HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	var out, errb bytes.Buffer
	hook.SessionStart(strings.NewReader(`{"session_id":"s1","hook_event_name":"SessionStart","source":"startup"}`), &out, &errb, getenv, nil)
	if !strings.HasPrefix(out.String(), `{"systemMessage":"Cairn: workflow state could not be opened`) {
		t.Fatalf("SessionStart: %q", out.String())
	}
	for range 2 {
		if stdout, stderr := runStop(getenv, "s1"); stdout != "" || !strings.Contains(stderr, "opening Cairn's state") {
			t.Errorf("a turn of the session SessionStart told: stdout %q, stderr %q", stdout, stderr)
		}
	}
}

// TestStopLeavesStateLeftOnPurposeToSessionStart: state Cairn leaves as it is on purpose (a
// newer Cairn's, or another tool's file in the snapshot's place) is no failure of the turn's
// end: SessionStart told the user what it is and the step, so the Stop hook says nothing and
// logs why. Before, a foreign snapshot was told after the first turn of every session as "the
// end-of-turn check failed", cut at the length of a systemMessage before any step.
func TestStopLeavesStateLeftOnPurposeToSessionStart(t *testing.T) {
	for _, doc := range []string{
		`{"name":"shop","version":"3.2.1","type":"module","main":"index.js"}`,
		`{"version":"3.1","workflow_id":"apex-kept","revision":9,"future":true}`,
	} {
		getenv, state := startedProject(t, "apex-kept")
		snap := filepath.Join(state, "workflow-state.json")
		if err := os.WriteFile(snap, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if stdout, stderr := runStop(getenv, "s1"); stdout != "" || !strings.Contains(stderr, "end-of-turn protocol: ") {
			t.Errorf("%s: stdout %q, stderr %q", doc, stdout, stderr)
		}
		if b, err := os.ReadFile(snap); err != nil || string(b) != doc {
			t.Errorf("%s: the file was changed: %q %v", doc, b, err)
		}
	}
}

// startedProject is a project whose workflow id was started in session s1, and its state
// directory.
func startedProject(t *testing.T, id string) (getenv func(string) string, state string) {
	return startedProjectAt(t, id, nil)
}

// startedProjectAt is startedProject with the engine's clock now (nil: the real one).
func startedProjectAt(t *testing.T, id string, now func() time.Time) (getenv func(string) string, state string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": dir + "/memory", "HOME": t.TempDir()}
	getenv = func(k string) string { return env[k] }
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	if _, err := en.Start(engine.StartRequest{Type: "apex", Context: "x", WorkflowID: id}); err != nil {
		t.Fatal(err)
	}
	return getenv, en.StateDir()
}

// runStop runs the Stop hook for session and returns what it wrote.
func runStop(getenv func(string) string, session string) (stdout, stderr string) {
	var out, errb bytes.Buffer
	hook.Stop(strings.NewReader(`{"session_id":"`+session+`","hook_event_name":"Stop"}`), &out, &errb, getenv, nil)
	return out.String(), errb.String()
}

// TestStopLogDoesNotSayNothingWasOwed: L2 lines owed that the turn's end could not write (a
// directory where MEMORY.md belongs) are not logged as "nothing to write", which reads as
// nothing owed; the log says the lines are still owed.
func TestStopLogDoesNotSayNothingWasOwed(t *testing.T) {
	getenv, _ := startedProject(t, "apex-owed")
	mem := getenv("CAIRN_MEMORY_DIR")
	if err := os.Remove(filepath.Join(mem, "MEMORY.md")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mem, "MEMORY.md"), 0o700); err != nil {
		t.Fatal(err)
	}
	moveOwingALine(t, getenv)
	stdout, stderr := runStop(getenv, "s1")
	if strings.Contains(stderr, "nothing to write") {
		t.Errorf("stderr says nothing was to be written while L2 lines are owed:\n%s", stderr)
	}
	if !strings.Contains(stderr, "still owed") {
		t.Errorf("stderr does not say the lines are still owed:\n%s", stderr)
	}
	if stdout != "" {
		t.Errorf("the move that owed the line told of MEMORY.md; the turn's end says it again: %q", stdout)
	}
}

// TestStopSaysAnL2FailureOncePerSession: a memory directory that cannot be made (a file in its
// place) stays so until someone acts. Cairn retries the owed line after every turn, but the
// user is told once per session, not after every turn; a new session is told again, and the
// line is written once the directory can be made.
func TestStopSaysAnL2FailureOncePerSession(t *testing.T) {
	getenv, _ := startedProject(t, "apex-l2")
	mem := memoryInTheWay(t, getenv)
	moveOwingALine(t, getenv)
	const said = `{"systemMessage":"Cairn: auto-memory line not written (Cairn retries after the next turn): `
	if got, _ := runStop(getenv, "s1"); !strings.HasPrefix(got, said) {
		t.Fatalf("first turn: %q", got)
	}
	for range 2 {
		if got, stderr := runStop(getenv, "s1"); got != "" || !strings.Contains(stderr, "still owed") {
			t.Fatalf("a later turn of the same session: stdout %q, stderr %q; want it said once and the line still owed", got, stderr)
		}
	}
	if got, _ := runStop(getenv, "s2"); !strings.HasPrefix(got, said) {
		t.Errorf("another session is not told: %q", got)
	}
	if err := os.Remove(mem); err != nil {
		t.Fatal(err)
	}
	if got, stderr := runStop(getenv, "s2"); got != "" || !strings.Contains(stderr, "wrote Active APEX workflow: analyze completed, planning") {
		t.Errorf("once the directory can be made: stdout %q, stderr %q; want the owed line written", got, stderr)
	}
}

// memoryInTheWay puts a file where the memory directory belongs, so that no L2 line can be
// written, and returns its path.
func memoryInTheWay(t *testing.T, getenv func(string) string) string {
	t.Helper()
	mem := getenv("CAIRN_MEMORY_DIR")
	if err := os.RemoveAll(mem); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mem, []byte("in the way\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return mem
}

// moveOwingALine moves the workflow startedProject started to plan in session s1, with L2 in
// the way: the move's line is owed, with a warning.
func moveOwingALine(t *testing.T, getenv func(string) string) {
	t.Helper()
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	if res, err := en.Transition(engine.TransitionRequest{To: "plan"}); err != nil || len(res.Warnings) == 0 {
		t.Fatalf("the move to plan: %v, %v; want its line owed with a warning", err, res)
	}
}

// TestStopFailureKeepsWhatTheStoreDid: a turn's end whose read set a damaged snapshot aside
// (and rebuilt it from the journal) and then failed (here recording what it asked about:
// a directory where stop-state.json belongs) says both; no later read says what was set
// aside. Before, the failure alone was said, as "workflow state is unchanged". A read that
// fails on damage says its own error, which names what quarantine/ keeps, and its step
// (TestStopSaysAFailureOncePerSession).
func TestStopFailureKeepsWhatTheStoreDid(t *testing.T) {
	getenv, stdout := stopFailsAfterSettingAside(t, "apex-aside")
	for _, want := range []string{"moved to quarantine/workflow-state.json-", "end-of-turn check"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the turn's end does not say %q: %s", want, stdout)
		}
	}
	if strings.Contains(stdout, "unchanged") {
		t.Errorf("the turn's end calls the state unchanged after setting its snapshot aside: %s", stdout)
	}
	if stdout, _ := runStop(getenv, "s1"); stdout != "" {
		t.Errorf("a later turn of the same session says the failure again: %s", stdout)
	}
}

// stopFailsAfterSettingAside runs, in session s1 of a started workflow id, a turn's end whose
// read sets a damaged snapshot aside and which then fails (a directory where stop-state.json
// belongs), and returns the project's getenv and what the turn's end printed.
func stopFailsAfterSettingAside(t *testing.T, id string) (getenv func(string) string, stdout string) {
	t.Helper()
	getenv, state := startedBlocking(t, id)
	if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(state, "stop-state.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	stdout, _ = runStop(getenv, "s1")
	return getenv, stdout
}

// TestStopPastTheHardStopLeavesTheAskForLater: a turn's end still working when the hard stop
// comes (here it has not read its event yet) prints the early line, not the block; the set of
// violations it would have asked about is not recorded as asked, so the next turn asks.
// Before, the abandoned work recorded the ask, and no turn ever asked about that set.
func TestStopPastTheHardStopLeavesTheAskForLater(t *testing.T) {
	getenv, _ := startedBlocking(t, "apex-late")
	var stdout, stderr bytes.Buffer
	r := &hook.Runner{Name: hook.StopName, Stderr: &stderr}
	fired := make(chan time.Time)
	close(fired)
	hook.SetHardStop(r, func(time.Time) <-chan time.Time { return fired })
	stdin, event := io.Pipe()
	done := hook.StopAs(r, stdin, &stdout, getenv)
	// The hook has answered: its work, waiting for its event, goes on as an abandoned one would.
	if _, err := io.WriteString(event, `{"session_id":"s1","hook_event_name":"Stop"}`); err != nil {
		t.Fatal(err)
	}
	event.Close()
	<-done
	if !strings.Contains(stdout.String(), "stopped early") {
		t.Fatalf("the hard stop's answer: %q", stdout.String())
	}
	if got, _ := runStop(getenv, "s1"); !strings.Contains(got, `"decision":"block"`) {
		t.Errorf("the next turn does not ask about the violations the late one never asked about: %q\n%s", got, stderr.String())
	}
}

// startedBlocking is startedProject with a blocking violation recorded: a turn's end asks
// the agent about it.
func startedBlocking(t *testing.T, id string) (getenv func(string) string, state string) {
	return startedBlockingAt(t, id, nil)
}

// startedBlockingAt is startedBlocking with the engine's clock now (nil: the real one).
func startedBlockingAt(t *testing.T, id string, now func() time.Time) (getenv func(string) string, state string) {
	t.Helper()
	getenv, state = startedProjectAt(t, id, now)
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	if _, err := en.SetEnforcement([]engine.Violation{{Code: "V-TEST-03", Severity: "HIGH", Details: "no test"}}); err != nil {
		t.Fatal(err)
	}
	return getenv, state
}

// TestStopFailureWithALastingWarningIsSaidOnce: a turn's end that fails (a directory where
// stop-state.json belongs) after a warning that lasts too (an auto-memory line the memory
// directory keeps refusing) says both once per session, not after every turn.
func TestStopFailureWithALastingWarningIsSaidOnce(t *testing.T) {
	getenv, state := startedBlocking(t, "apex-both")
	memoryInTheWay(t, getenv)
	moveOwingALine(t, getenv)
	if err := os.Mkdir(filepath.Join(state, "stop-state.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, _ := runStop(getenv, "s1"); !strings.Contains(got, "auto-memory line not written") || !strings.Contains(got, "end-of-turn check failed") {
		t.Fatalf("first turn: %q", got)
	}
	if got, _ := runStop(getenv, "s1"); got != "" {
		t.Errorf("a later turn of the same session says it again: %q", got)
	}
}

// TestStopFailureSaysWhatTheTurnsEndChanged: the failure line of a turn's end says the
// workflow state is unchanged only where it is: not after the turn's end recorded the
// owner's heartbeat and then failed to record its ask (a directory where stop-state.json
// belongs), nor after the read set a damaged snapshot aside. Before, every failure was said
// as "workflow state is unchanged". Said once per session whatever the turn's end changed.
func TestStopFailureSaysWhatTheTurnsEndChanged(t *testing.T) {
	for _, c := range []struct {
		name      string
		now       func() time.Time // the clock the workflow was started and last beaten by
		fault     func(t *testing.T, state string)
		changed   bool // the workflow's snapshot or journal is written
		unchanged bool // the line says the state is unchanged
		want      string
	}{
		{"the ask not recorded, no heartbeat due", nil, stopStateInTheWay, false, true, "stop-state.json"},
		{"the ask not recorded after the heartbeat", anHourAgo, stopStateInTheWay, true, false, "heartbeat"},
		{"the snapshot unreadable", anHourAgo, func(t *testing.T, state string) {
			snap := filepath.Join(state, "workflow-state.json")
			if err := os.Remove(snap); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(snap, 0o700); err != nil {
				t.Fatal(err)
			}
		}, false, true, "workflow-state.json"},
		{"the snapshot and journal damaged", nil, func(t *testing.T, state string) {
			os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600)
			os.WriteFile(filepath.Join(state, "journal", "apex-fail.jsonl"), []byte("not a journal\n"), 0o600)
		}, true, false, "cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			started, state := startedBlockingAt(t, "apex-fail", c.now)
			getenv := withEnv(started, "CLAUDE_PID", "42") // the client that started it
			c.fault(t, state)
			before := workflowFiles(state)
			stdout, stderr := runStop(getenv, "s1")
			if changed := workflowFiles(state) != before; changed != c.changed {
				t.Fatalf("snapshot changed %t, want %t (the premise)\n%s", changed, c.changed, stderr)
			}
			if !strings.Contains(stdout, "end-of-turn check failed") || !strings.Contains(stdout, c.want) {
				t.Errorf("stdout %q does not say the failure and %q\n%s", stdout, c.want, stderr)
			}
			if said := strings.Contains(stdout, "workflow state is unchanged"); said != c.unchanged {
				t.Errorf("stdout says unchanged: %t, want %t: %s", said, c.unchanged, stdout)
			}
			// The next turn's end fails alike, with no heartbeat due: the failure was said.
			if stdout, _ := runStop(getenv, "s1"); stdout != "" {
				t.Errorf("the next turn says the failure again: %s", stdout)
			}
		})
	}
}

// stopStateInTheWay puts a directory where stop-state.json belongs: the turn's end cannot
// record what it asks.
func stopStateInTheWay(t *testing.T, state string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(state, "stop-state.json"), 0o700); err != nil {
		t.Fatal(err)
	}
}

// workflowFiles is what the workflow's snapshot and journal hold, to tell a write.
func workflowFiles(state string) string {
	snap, _ := os.ReadFile(filepath.Join(state, "workflow-state.json"))
	journal, _ := os.ReadFile(filepath.Join(state, "journal", "apex-fail.jsonl"))
	return string(snap) + "\x00" + string(journal)
}

// TestHooksDoNotRecreateADeletedProject: a project directory deleted while its session is
// open (a removed worktree) is not made again by the hooks that run after: a turn's end,
// a StopFailure, a session start say nothing and create nothing. Before, each made the
// project directory again, with .claude/cairn/ in it.
func TestHooksDoNotRecreateADeletedProject(t *testing.T) {
	getenv, _ := startedProject(t, "apex-gone")
	dir := getenv("CLAUDE_PROJECT_DIR")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct {
		hook  func(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML)
		event string
	}{
		{hook.Stop, `{"session_id":"s1","hook_event_name":"Stop"}`},
		{hook.Events, `{"session_id":"s1","hook_event_name":"StopFailure","error":"overloaded"}`},
		{hook.SessionStart, `{"session_id":"s1","hook_event_name":"SessionStart","source":"resume"}`},
	} {
		var out, errb bytes.Buffer
		run.hook(strings.NewReader(run.event), &out, &errb, getenv, nil)
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Fatalf("%s made the deleted project again (%v); stdout %q\n%s", run.event, err, out.String(), errb.String())
		}
		if out.Len() > 0 {
			t.Errorf("%s: stdout %q", run.event, out.String())
		}
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct{ writes, bytes int }

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// TestStopWithNothingToSayMakesNoWrite: the end of a turn that has nothing to say (the common
// case, after every turn) makes no write to stdout at all, not an empty one: a system call a
// turn for nothing.
func TestStopWithNothingToSayMakesNoWrite(t *testing.T) {
	getenv, _ := startedProject(t, "apex-quiet")
	for turn := range 2 {
		var out writeCounter
		var errb bytes.Buffer
		hook.Stop(strings.NewReader(`{"session_id":"s1","hook_event_name":"Stop"}`), &out, &errb, getenv, nil)
		if out.writes != 0 {
			t.Errorf("turn %d: %d writes of %d bytes to stdout, want none (stderr %q)", turn+1, out.writes, out.bytes, errb.String())
		}
	}
}

// TestAnswersPointToNoStderr: what a hook prints reaches the user (systemMessage) or the model,
// and neither sees a hook's stderr when it exits 0, as every Cairn hook does. Each hook's answer
// when it stops early, and a turn's end that failed after setting a snapshot aside, said
// "details on stderr"; they now say what happened and, where there is one, what to run.
func TestAnswersPointToNoStderr(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*hook.Runner, io.Reader, io.Writer, func(string) string) <-chan struct{}
	}{
		{hook.SessionStartName, hook.SessionStartAs},
		{hook.StopName, hook.StopAs},
		{hook.EventsName, hook.EventsAs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv, _ := startedProject(t, "apex-early")
			var stdout, stderr bytes.Buffer
			r := &hook.Runner{Name: tc.name, Stderr: &stderr}
			fired := make(chan time.Time)
			close(fired)
			hook.SetHardStop(r, func(time.Time) <-chan time.Time { return fired })
			stdin, event := io.Pipe()
			done := tc.run(r, stdin, &stdout, getenv)
			event.Close() // the hook has answered; its work may end now
			<-done
			if out := stdout.String(); !strings.Contains(out, "stopped early") || strings.Contains(out, "stderr") {
				t.Errorf("the early answer is %q, want one that says it stopped early and names no stderr", out)
			}
		})
	}
	t.Run("failed-after-setting-aside", func(t *testing.T) {
		_, stdout := stopFailsAfterSettingAside(t, "apex-aside2")
		if !strings.Contains(stdout, "end-of-turn check failed") || strings.Contains(stdout, "stderr") {
			t.Errorf("the turn's end says %q, want the failure and no stderr", stdout)
		}
	})
}

// TestStateDirVariableInTheWaySaysRestart: CAIRN_STATE_DIR naming a path a file stands in the
// way of is fixed by setting the variable again, which reaches Claude Code's hooks and its
// MCP server only when Claude Code starts again. SessionStart said "Cairn then opens its
// state at its next hook or tool call", which no hook or tool of the running session does.
func TestStateDirVariableInTheWaySaysRestart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_STATE_DIR": filepath.Join(dir, "afile", "cairn"), "HOME": t.TempDir()}
	var out, errb bytes.Buffer
	hook.SessionStart(strings.NewReader(`{"session_id":"s1","hook_event_name":"SessionStart","source":"startup"}`), &out, &errb, func(k string) string { return env[k] }, nil)
	if got := out.String(); !strings.Contains(got, "restart Claude Code") || strings.Contains(got, "next hook") {
		t.Errorf("SessionStart says %q, want the step to restart Claude Code after setting CAIRN_STATE_DIR", got)
	}
}
