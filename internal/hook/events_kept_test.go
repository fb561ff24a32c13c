package hook_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// TestTaskEventOutlivesTheHardStopWhileKeptOnesApply: a task event kept earlier is applied
// first, after a wait for the lock that another process frees late and takes again at once;
// the hook's own event then waits again, and the hard stop comes. No one can send that event
// again: by then it must be kept (or recorded), not lost with the process; and the answer
// does not say that nothing changed, as the kept event was recorded; stderr says it is kept.
func TestTaskEventOutlivesTheHardStopWhileKeptOnesApply(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1", hook.EnvDeadline, "9s")
	if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the retry loop"}, false); err != nil {
		t.Fatal(err)
	}
	d, err := durable.OpenDir(en.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lock := func() func() error {
		unlock, err := d.Lock(".lock-workflow", time.Second)
		if err != nil {
			panic(err) // on the hook's goroutine too
		}
		return unlock
	}
	unlock := lock()
	// The other process takes the lock again as soon as the kept event is recorded.
	var retaken func() error
	took := make(chan struct{})
	stderr := &lineHook{match: "task 1 recorded", do: func() { retaken = lock(); close(took) }}
	fired := make(chan time.Time)
	r := &hook.Runner{Name: hook.EventsName, Stderr: stderr}
	hook.SetHardStop(r, func(time.Time) <-chan time.Time { return fired })
	var stdout bytes.Buffer
	ran, work := make(chan error, 1), make(chan (<-chan struct{}), 1)
	go func() {
		work <- hook.EventsAs(r, strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), &stdout, getenv)
		ran <- nil
	}()
	lockFile := filepath.Join(en.StateDir(), ".lock-workflow")
	if durabletest.WaitLockWaiter(lockFile, ran) {
		t.Fatalf("the hook did not wait for the lock:\n%s", stderr)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-took:
	case <-ran:
		t.Fatalf("the hook ended without recording the kept event:\n%s", stderr)
	}
	if durabletest.WaitLockWaiter(lockFile, ran) {
		t.Fatalf("the hook did not wait for the lock again:\n%s", stderr)
	}
	close(fired) // the hard stop, as it comes after two waits
	<-ran
	body := <-work

	kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json"))
	var found bool
	for _, f := range kept {
		b, _ := os.ReadFile(f)
		found = found || strings.Contains(string(b), `"task_id":"2"`)
	}
	res := en.Resume(engine.ResumeOptions{ReportOnly: true})
	if !found && !strings.Contains(strings.Join(res.OpenTasks, "|"), "update the docs") {
		t.Errorf("task 2 is neither kept nor recorded when the hard stop comes (kept %q, open tasks %q):\n%s", kept, res.OpenTasks, stderr)
	}
	// The stop's line says what became of the event: kept for the next hook. Before, it said
	// only "did not finish within 9s; printing what it has and exiting".
	if !strings.Contains(stderr.String(), "TaskCreated task 2 was kept before the stop: the next Cairn hook records it if this one did not") {
		t.Errorf("the stop does not say the event was kept:\n%s", stderr)
	}
	// Task 1 was recorded before the stop: the answer must not say nothing changed.
	if out := stdout.String(); !strings.Contains(out, "stopped early") || strings.Contains(out, "not changed") {
		t.Errorf("the hard stop's answer is %q, want it to say the hook stopped early and not that nothing changed", out)
	}
	if err := retaken(); err != nil {
		t.Fatal(err)
	}
	<-body // the abandoned work ends before the directory goes
}

// lineHook is a hook's stderr that calls do, once, on the first line holding match.
type lineHook struct {
	match string
	do    func()
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
}

func (w *lineHook) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.match) {
		w.once.Do(w.do)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lineHook) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestKeptTaskThatCannotBeMovedAsideBlocksNoOther: a kept task event that cannot be read, and
// cannot be moved to quarantine/ either (something else in its place), stays where it is and
// is said; the events kept after it, and the hook's own, are recorded all the same, at this
// hook and every later one.
func TestKeptTaskThatCannotBeMovedAsideBlocksNoOther(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	kept := filepath.Join(en.StateDir(), engine.KeptTasksDir)
	if err := os.MkdirAll(kept, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"0000000000000000001-1.json": "not json",
		"0000000000000000002-1.json": `{"session_id":"sess-aaaa-1","task_id":"1","subject":"write the retry loop","completed":false}`,
		"../quarantine":              "a file where quarantine/ would be",
	} {
		if err := os.WriteFile(filepath.Join(kept, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"2", "3"} {
		var stdout, stderr bytes.Buffer
		hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"`+id+`","task_subject":"task `+id+`"}`), &stdout, &stderr, getenv, nil)
		if !strings.Contains(stderr.String(), "could not be read") {
			t.Errorf("task %s: stderr does not say a kept event could not be read:\n%s", id, stderr.String())
		}
	}
	res := en.Resume(engine.ResumeOptions{ReportOnly: true})
	if got := strings.Join(res.OpenTasks, "|"); got != "write the retry loop|task 2|task 3" {
		t.Errorf("open tasks %q, want the kept one and the hooks' own, in order", got)
	}
	if b, err := os.ReadFile(filepath.Join(kept, "0000000000000000001-1.json")); err != nil || string(b) != "not json" {
		t.Errorf("the unreadable kept event is %q, %v; want it where it was", b, err)
	}
}

// startedAs starts an apex workflow in a new project and opens its state as session, with the
// environment's other variables set as kv (key, value, ...) says.
func startedAs(t *testing.T, session string, kv ...string) (func(string) string, *engine.Engine) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": dir + "/memory", "HOME": dir}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	getenv := func(k string) string { return env[k] }
	startApex(t, getenv)
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: session})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	return getenv, en
}

// TestSessionStartRecordsKeptTasksAfterItsRepair: task events kept while the state needed a
// repair (a damaged snapshot the journal rebuilds) are recorded by the session start that
// makes the repair, before its report, which lists them as open tasks. Before, they were left
// for the next hook: the report, the one the new session reads, did not list them.
func TestSessionStartRecordsKeptTasksAfterItsRepair(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the retry loop"}, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	hook.SessionStart(strings.NewReader(`{"session_id":"sess-bbbb-2","hook_event_name":"SessionStart","source":"clear"}`), &stdout, &stderr, getenv, nil)
	for _, want := range []string{"write the retry loop", "quarantine/workflow-state.json-"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the session start's output does not say %q:\n%s\nstderr:\n%s", want, stdout.String(), stderr.String())
		}
	}
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 0 {
		t.Errorf("task events still kept after the session start: %q", kept)
	}
}

// TestStopRecordsKeptTasksAfterItsRepair: task events kept while the state needed a repair are
// recorded by the Stop that makes it. Before, the Stop tried them before its repair, said on
// stderr they were left to the next Stop or session start, made the repair, and left them.
func TestStopRecordsKeptTasksAfterItsRepair(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the retry loop"}, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := runStopToItsAnswer(getenv, "sess-aaaa-1")
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 0 || strings.Contains(stderr, "left to the next Stop") {
		t.Errorf("task events still kept after the Stop: %q; stderr:\n%s", kept, stderr)
	}
}

// TestPreCompactStoppedEarlyPrintsText: Claude Code adds a PreCompact hook's stdout, as it is,
// to the compaction request (after "Additional Instructions:") and shows it to the user as the
// hook's output; it reads no systemMessage there. A PreCompact that stopped early printed the
// other hooks' JSON systemMessage, which went into the compaction request as a line of JSON.
// It prints text: what was not done, and the step after the compaction; not "details on
// stderr", which the model that reads the request never sees.
func TestPreCompactStoppedEarlyPrintsText(t *testing.T) {
	getenv, _ := startedAs(t, "sess-aaaa-1")
	fired, release := make(chan time.Time), make(chan struct{})
	var once sync.Once
	// The event is read; the work stops at its first look at the environment after that,
	// until the hard stop has answered.
	held := func(k string) string {
		if k == "CLAUDE_PID" {
			once.Do(func() { close(fired); <-release })
		}
		return getenv(k)
	}
	var stdout, stderr bytes.Buffer
	r := &hook.Runner{Name: hook.EventsName, Stderr: &stderr}
	hook.SetHardStop(r, func(time.Time) <-chan time.Time { return fired })
	done := hook.EventsAs(r, strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"PreCompact","trigger":"auto"}`), &stdout, held)
	close(release)
	<-done
	got := stdout.String()
	if strings.HasPrefix(got, "{") || !strings.Contains(got, "mcp__plugin_cairn_cairn__resume_check") || !strings.Contains(got, "did not finish within") || strings.Contains(got, "stderr") {
		t.Errorf("PreCompact stopped early printed %q, want text naming resume_check and why\nstderr:\n%s", got, stderr.String())
	}
}

// slowLines is a hook's stderr that takes d over each line holding match: a slow disk, on
// which each kept task event's locked, journaled write takes that long.
type slowLines struct {
	match string
	d     time.Duration
	lineHook
}

func (w *slowLines) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.match) {
		time.Sleep(w.d)
	}
	return w.lineHook.Write(p)
}

// TestPreCompactAnchorOutlivesManyKeptTasks: PreCompact records the task events kept earlier
// before it reads the anchor. Many of them on a slow disk took the hook past its hard stop, so
// the compaction request got "the workflow position was not read" instead of the position.
// Those it has no time for now stay kept for the next hook, and the anchor is printed.
func TestPreCompactAnchorOutlivesManyKeptTasks(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1", hook.EnvDeadline, "2s")
	const n = 30 // at 100 ms each, 3 s: past the 2.2 s hard stop
	for i := range n {
		if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: strconv.Itoa(i + 1), Subject: "kept task"}, false); err != nil {
			t.Fatal(err)
		}
	}
	stderr := &slowLines{match: "recorded as open", d: 100 * time.Millisecond, lineHook: lineHook{do: func() {}}}
	r := &hook.Runner{Name: hook.EventsName, Stderr: stderr}
	var stdout bytes.Buffer
	done := hook.EventsAs(r, strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"PreCompact","trigger":"auto"}`), &stdout, getenv)
	<-done // the abandoned work ends before the directory goes
	if got := stdout.String(); !strings.HasPrefix(got, "Cairn workflow position") {
		t.Errorf("PreCompact printed %q, want the anchor\nstderr:\n%s", got, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(left) == 0 || len(left) == n {
		t.Errorf("%d of %d kept task events are left; want some recorded and the rest kept for the next hook", len(left), n)
	}
	if !strings.Contains(stderr.String(), "stay kept for the next Cairn hook") {
		t.Errorf("stderr does not say the rest stay kept:\n%s", stderr.String())
	}
}

// TestTaskEventUnderAHeldLockKeepsItSoon: Claude Code holds the model's TaskCreate call until
// the TaskCreated hook ends. With the workflow lock held by something slow, the hook waited
// 3.75 s of its 5 s before keeping the event, at every task the model created. It keeps the
// event after a second's wait now (taskLockWait): kept, it is recorded by the next hook, so the
// longer wait bought nothing.
func TestTaskEventUnderAHeldLockKeepsItSoon(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1") // the default deadline: no CAIRN_HOOK_DEADLINE
	holdLocks(t, en.StateDir(), ".lock-workflow")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"1","task_subject":"write the retry loop"}`), &stdout, &stderr, getenv, nil)
	took := time.Since(start)
	if !strings.Contains(stderr.String(), "TaskCreated task 1 kept: the workflow is locked") || stdout.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q; want the event kept, and nothing printed", stdout.String(), stderr.String())
	}
	// 3 s: past the second's wait with room for a loaded machine, short of the 3.75 s before.
	if took > 3*time.Second {
		t.Errorf("the hook held the model's task call %s before keeping the event", took)
	}
}

// TestCompactionAnchorLeavesOutADeletedTask: auto-compaction comes mid-turn, before the end of
// turn that takes out a task the model deleted (which fires no hook; Claude Code only removes
// its file). The PreCompact anchor named that task as the first open one, and the summary kept
// it for the model to take up again; it now names the task still in Claude Code's list.
func TestCompactionAnchorLeavesOutADeletedTask(t *testing.T) {
	getenv := withADeletedTask(t)
	var stdout, stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"PreCompact","trigger":"auto"}`), &stdout, &stderr, getenv, nil)
	if out := stdout.String(); !strings.Contains(out, "1 open task, first: ") || !strings.Contains(out, "write the retry loop") || strings.Contains(out, "drop the cache") {
		t.Errorf("the anchor %q, want only the task still in Claude Code's list (stderr %q)", out, stderr.String())
	}
}

// TestResumedSessionStartLeavesOutADeletedTask: a task the model deleted (which fires no hook;
// Claude Code only removes its file) in a turn whose Stop never ran (the client killed
// mid-turn) stayed open; --resume or --continue keeps the session id and its task list, and
// the session start's report listed the deleted task as open, for the model to take up again.
// The report now lists only the tasks still in Claude Code's list.
func TestResumedSessionStartLeavesOutADeletedTask(t *testing.T) {
	getenv := withADeletedTask(t)
	for _, source := range []string{"resume", "compact"} {
		var stdout, stderr bytes.Buffer
		hook.SessionStart(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"SessionStart","source":"`+source+`"}`), &stdout, &stderr, getenv, nil)
		if out := stdout.String(); !strings.Contains(out, "write the retry loop") || strings.Contains(out, "drop the cache") {
			t.Errorf("source %s: the report %q, want only the task still in Claude Code's list (stderr %q)", source, out, stderr.String())
		}
	}
}

// TestTaskEventStateThatCannotBeOpened: a task event whose state directory cannot be made
// (CAIRN_STATE_DIR names one under a file, outside the project) said only "opening Cairn's
// state: ... not a directory": not that the task was lost (Claude Code does not send it
// again), nor what to do. It now says both. The cause was then the bare "mkdir ...: not a
// directory", and the step cairn doctor's; it now names the file in the way and the variable
// to set again, with the restart its hooks need to see it, as Stop and SessionStart say it.
func TestTaskEventStateThatCannotBeOpened(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "afile")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_STATE_DIR": filepath.Join(file, "cairn"), "HOME": dir}
	for _, ev := range []string{
		`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCompleted","task_id":"7","task_subject":"write the retry loop"}`,
		`{"session_id":"sess-aaaa-1","hook_event_name":"PreCompact","trigger":"auto"}`,
	} {
		var stdout, stderr bytes.Buffer
		hook.Events(strings.NewReader(ev), &stdout, &stderr, func(k string) string { return env[k] }, nil)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if stdout.Len() != 0 || len(lines) != 1 {
			t.Errorf("stdout %q, stderr %q; want one line on stderr", stdout.String(), stderr.String())
			continue
		}
		if strings.Contains(ev, "TaskCompleted") && !strings.HasPrefix(lines[0], "cairn-event: TaskCompleted task 7 not recorded (Claude Code does not send it again): opening Cairn's state: ") {
			t.Errorf("stderr %q does not say the task was not recorded", lines[0])
		}
		for _, want := range []string{file + " is a file, not a directory", "set CAIRN_STATE_DIR to a directory", "then restart Claude Code"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("stderr %q does not say %q", lines[0], want)
			}
		}
		for _, bad := range []string{"mkdir", "cairn doctor", "at its next hook"} {
			if strings.Contains(lines[0], bad) {
				t.Errorf("stderr %q says %q", lines[0], bad)
			}
		}
	}
}

// withADeletedTask starts a workflow in session sess-aaaa-1 with two tasks mirrored from its
// Claude Code list, "drop the cache" (1) and "write the retry loop" (2), of which the list
// holds only 2: the model deleted 1, which fires no hook.
func withADeletedTask(t *testing.T) func(string) string {
	t.Helper()
	getenv, en := startedAs(t, "sess-aaaa-1", "CLAUDE_PID", strconv.Itoa(os.Getpid()))
	for i, s := range []string{"drop the cache", "write the retry loop"} {
		if _, err := en.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: strconv.Itoa(i + 1), Subject: s}, false); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(getenv("HOME"), ".claude", "tasks", "sess-aaaa-1")
	if err := os.MkdirAll(list, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(list, "2.json"), []byte("{}"), 0o644); err != nil { // task 1 deleted
		t.Fatal(err)
	}
	return getenv
}

// TestKeptTasksRecordedByTheHookThatHoldsThem: a hook records the kept task events under
// their lock, which it holds around them all. A second hook waited on that lock for each kept
// event, and when it gave up said its own event "will be recorded by the next Cairn hook"
// while the first recorded them; the first recorded only those kept when it began, so the
// second's waited for a later hook. The second does not wait now, says which hook records its
// event, and the first records it; a Stop meanwhile says nothing of them.
func TestKeptTasksRecordedByTheHookThatHoldsThem(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1", hook.EnvDeadline, "9s", "CLAUDE_PID", strconv.Itoa(os.Getpid()))
	if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the retry loop"}, false); err != nil {
		t.Fatal(err)
	}
	// A Stop that finds their lock held says nothing of them.
	releaseKept := holdLocks(t, en.StateDir(), ".lock-kept-tasks")
	if _, got := runStopToItsAnswer(getenv, "sess-aaaa-1"); strings.Contains(got, "kept") {
		t.Errorf("a Stop while another hook records the kept events said:\n%s", got)
	}
	releaseKept()
	release := holdLocks(t, en.StateDir(), ".lock-workflow")
	// The first hook, another process, holds the kept events' lock while it waits for the
	// workflow's (a second: the rest is quick).
	first := startEventsProcess(t, getenv, `{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"3","task_subject":"tag the release"}`), &stdout, &stderr, getenv, nil)
	took := time.Since(start)
	if got := stderr.String(); got != "cairn-event: TaskCreated task 3 kept: another Cairn hook records the kept task events now; it will be recorded by that hook or the next\n" {
		t.Errorf("the second hook said %q, want its event kept for the first", got)
	}
	if took > 500*time.Millisecond { // a second's wait before; room for a loaded machine
		t.Errorf("the second hook took %s: it waited for the kept events' lock", took)
	}
	release()
	out := first.wait(t)
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 0 {
		t.Errorf("task events still kept: %q\nthe first hook said:\n%s", kept, out)
	}
	res := en.Resume(engine.ResumeOptions{ReportOnly: true})
	if got := strings.Join(res.OpenTasks, "|"); got != "write the retry loop|update the docs|tag the release" {
		t.Errorf("open tasks %q, want each once, in order\nthe first hook said:\n%s", got, out)
	}
}

// TestInterruptedTaskEventIsKept: Claude Code ends a hook by a signal when the person
// presses Esc or Claude Code exits, and the hook ends itself at its hard stop. A task event
// waiting for the workflow lock, held by another process, was lost then: no one sends it
// again. It is kept now, and the next hook records it, once.
func TestInterruptedTaskEventIsKept(t *testing.T) {
	const event = `{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"1","task_subject":"write the retry loop"}`
	for _, how := range []string{"SIGTERM", "SIGINT", "hard stop"} {
		t.Run(how, func(t *testing.T) {
			getenv, en := startedAs(t, "sess-aaaa-1", hook.EnvDeadline, "9s", "CLAUDE_PID", strconv.Itoa(os.Getpid()))
			release := holdLocks(t, en.StateDir(), ".lock-workflow")
			var said string
			abandoned := func() {}
			if how == "hard stop" {
				fired := make(chan time.Time)
				stderr := &lineHook{do: func() {}}
				r := &hook.Runner{Name: hook.EventsName, Stderr: stderr}
				hook.SetHardStop(r, func(time.Time) <-chan time.Time { return fired })
				ran, work := make(chan error, 1), make(chan (<-chan struct{}), 1)
				go func() {
					work <- hook.EventsAs(r, strings.NewReader(event), io.Discard, getenv)
					ran <- nil
				}()
				if durabletest.WaitLockWaiter(filepath.Join(en.StateDir(), ".lock-workflow"), ran) {
					t.Fatalf("the hook did not wait for the lock:\n%s", stderr)
				}
				close(fired)
				<-ran
				said = stderr.String()
				// Not ended with the process, the abandoned work records the event once the
				// lock is free: the next hook comes after it.
				abandoned = func() { <-<-work }
			} else {
				if runtime.GOOS == "windows" {
					t.Skip("no signals to send")
				}
				p := startEventsProcess(t, getenv, event)
				p.cmd.Process.Signal(map[string]os.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT}[how])
				said = p.wait(t)
			}
			// The lock is still held: the event is kept, or nowhere.
			kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json"))
			if len(kept) != 1 {
				t.Errorf("%d task events kept when the hook ended, want 1; it said:\n%s", len(kept), said)
			}
			release()
			abandoned()
			var stderr bytes.Buffer
			hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), io.Discard, &stderr, getenv, nil)
			res := en.Resume(engine.ResumeOptions{ReportOnly: true})
			if got := strings.Join(res.OpenTasks, "|"); got != "write the retry loop|update the docs" {
				t.Errorf("open tasks %q, want each once, in order\nthe next hook said:\n%s", got, &stderr)
			}
		})
	}
}

// eventsChildEnv, set, makes this test binary run cairn-event (eventsChild) instead of its
// tests: a hook in a process of its own, as Claude Code runs it, which a signal can end.
const eventsChildEnv = "CAIRN_TEST_EVENTS_CHILD"

func TestMain(m *testing.M) {
	if ready := os.Getenv(eventsChildEnv); ready != "" {
		eventsChild(ready)
		os.Exit(0)
	}
	storetest.QuietExits() // its children exit without the race detector's 1 s wait
	os.Exit(m.Run())
}

// eventsChild runs cairn-event on this process's stdin, stdout and stderr; once it stops on
// signals and waits for the workflow lock, it makes the file ready.
func eventsChild(ready string) {
	r := &hook.Runner{Name: hook.EventsName, Stderr: os.Stderr}
	armed := make(chan struct{})
	hook.SetSignalsArmed(r, func() { close(armed) })
	go func() {
		<-armed
		durabletest.WaitLockWaiter(filepath.Join(os.Getenv("CLAUDE_PROJECT_DIR"), ".claude", "cairn", ".lock-workflow"), make(chan error, 1))
		os.WriteFile(ready, nil, 0o600)
	}()
	hook.EventsAs(r, os.Stdin, os.Stdout, os.Getenv)
}

// eventsProcess is cairn-event running in a process of its own (startEventsProcess).
type eventsProcess struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startEventsProcess starts cairn-event in a process of its own, with getenv's variables and
// event on its stdin, and returns once the hook waits for the workflow lock.
func startEventsProcess(t *testing.T, getenv func(string) string, event string) *eventsProcess {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	p := &eventsProcess{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), eventsChildEnv+"="+ready)
	for _, k := range []string{"CLAUDE_PROJECT_DIR", "CAIRN_MEMORY_DIR", "HOME", "CLAUDE_PID", hook.EnvDeadline} {
		p.cmd.Env = append(p.cmd.Env, k+"="+getenv(k))
	}
	p.cmd.Stdin, p.cmd.Stderr = strings.NewReader(event), &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	for end := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) { // a guard, not a measure
		if _, err := os.Stat(ready); err == nil {
			return p
		}
		if time.Now().After(end) {
			t.Fatalf("the hook did not wait for the workflow lock within a minute:\n%s", &p.stderr)
		}
	}
}

// wait waits for the hook's exit, which must be 0, and returns its stderr.
func (p *eventsProcess) wait(t *testing.T) string {
	t.Helper()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the hook's exit: %v\n%s", err, &p.stderr)
	}
	return p.stderr.String()
}

// TestTaskEventNeitherRecordedNorKeptSaysItIsLost: a task event the workflow lock keeps out,
// that cannot be kept either (a file, which may be someone's, where kept-tasks/ goes), is
// lost: Claude Code does not send it again. Before, the line ended with the store's "then try
// again", which no one can, and did not say it was lost.
func TestTaskEventNeitherRecordedNorKeptSaysItIsLost(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	if err := os.WriteFile(filepath.Join(en.StateDir(), engine.KeptTasksDir), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	holdLocks(t, en.StateDir(), ".lock-workflow")
	var stdout, stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), &stdout, &stderr, getenv, nil)
	got := stderr.String()
	if !strings.Contains(got, "TaskCreated task 2 not recorded (Claude Code does not send it again): the workflow is locked") ||
		!strings.Contains(got, "so that the next events are kept") || strings.Contains(got, "try again") {
		t.Errorf("stderr:\n%s", got)
	}
}

// TestTaskEventKeptWhileSomethingIsInTheSnapshotsPlace: a task event that finds something in
// a state file's place (a directory where the snapshot goes, which may be someone's) is kept,
// as one a repair waits for, and recorded by the first hook that can after it is moved out. Before, it
// was lost, said as "not recorded: ..., then try again", which no one can.
func TestTaskEventKeptWhileSomethingIsInTheSnapshotsPlace(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), io.Discard, &stderr, getenv, nil)
	if got := stderr.String(); !strings.Contains(got, "TaskCreated task 2 kept: ") || !strings.Contains(got, "move "+snap+" out of the state directory (it may be someone's); it will be recorded by the first Cairn hook after that") || strings.Contains(got, "try again") {
		t.Errorf("stderr:\n%s", got)
	}
	if err := os.Rename(snap, filepath.Join(t.TempDir(), "moved")); err != nil {
		t.Fatal(err)
	}
	// The first Stop makes the repair (the snapshot rebuilt from the journal), the next hook
	// records what waited for it.
	_, said := runStopToItsAnswer(getenv, "sess-aaaa-1")
	_, again := runStopToItsAnswer(getenv, "sess-aaaa-1")
	said += again
	res := en.Resume(engine.ResumeOptions{ReportOnly: true})
	if open := strings.Join(res.OpenTasks, "|"); !strings.Contains(open, "update the docs") {
		t.Errorf("open tasks %q after the directory was moved out:\n%s", res.OpenTasks, said)
	}
}
