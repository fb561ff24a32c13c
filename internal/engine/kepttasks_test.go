package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Task events kept while the lock was held are recorded once, in order, by the next
// ApplyKeptClaudeTasks; what the record would refuse for a secret is not kept, a secret is
// never written there, and a file that cannot be read is moved to quarantine/ (kept, never
// deleted), with a note.
func TestKeptClaudeTasksAreAppliedOnceInOrder(t *testing.T) {
	t.Parallel()
	e, en := keptEnv(t)
	task := func(id, subject string) engine.ClaudeTask {
		return engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: subject}
	}
	dir := filepath.Join(en.StateDir(), engine.KeptTasksDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "0000000000000000000-1.json"), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		t         engine.ClaudeTask
		completed bool
		refused   bool
	}{
		{task("1", "write the parser"), false, false},
		{task("2", "use AKIAIOSFODNN7EXAMPLE"), false, true}, // a creation the record would refuse
		{task("AKIAIOSFODNN7EXAMPLE", "x"), false, true},
		{task("1", "write the parser with AKIAIOSFODNN7EXAMPLE"), true, false}, // closes task 1 by its id
	} {
		if err := en.KeepClaudeTask(k.t, k.completed); (err != nil) != k.refused {
			t.Fatalf("keeping %+v: %v, want refused %v", k.t, err, k.refused)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "AKIA") {
			t.Errorf("%s keeps a secret: %s", f, b)
		}
	}
	var said []string
	report := collect(&said)
	apply := func() []string {
		t.Helper()
		said = nil
		notes, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, report)
		if err != nil {
			t.Fatal(err)
		}
		return notes
	}
	if notes := apply(); len(notes) != 1 || !strings.Contains(notes[0], "could not be read") || !strings.Contains(notes[0], "quarantine/") {
		t.Errorf("notes %q, want one for the unreadable file, saying where it is kept", notes)
	}
	kept, _ := filepath.Glob(filepath.Join(en.StateDir(), "quarantine", "0000000000000000000-1.json-*"))
	if len(kept) != 1 {
		t.Errorf("the unreadable kept file is not in quarantine/: %q", kept)
	} else if b, _ := os.ReadFile(kept[0]); string(b) != "not json" {
		t.Errorf("quarantine/ holds %q, want the file as it was", b)
	}
	if want := []string{"Claude Code task 1 recorded as open in phase analyze", "Claude Code task 1 recorded as done in phase analyze"}; strings.Join(said, "|") != strings.Join(want, "|") {
		t.Errorf("applied %q, want %q", said, want)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Errorf("%s is still there with nothing kept", dir)
	}

	// The temp file of a keep killed mid-write is removed once no writer can be using it, so
	// the directory goes and the next look costs one failed read again; a fresh one stays.
	noErr(t, os.MkdirAll(dir, 0o700))
	stale, fresh := filepath.Join(dir, ".tmp-1-1.json-aaaa"), filepath.Join(dir, ".tmp-2-2.json-bbbb")
	noErr(t, os.WriteFile(stale, nil, 0o600))
	noErr(t, os.WriteFile(fresh, nil, 0o600))
	old, young := e.clock.Now().Add(-store.StaleTempAge-time.Minute), e.clock.Now()
	noErr(t, os.Chtimes(stale, old, old))
	noErr(t, os.Chtimes(fresh, young, young))
	apply()
	if _, err := os.Lstat(stale); err == nil {
		t.Errorf("%s is still there", stale)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("a temp file a keep may still be writing was removed: %v", err)
	}
	noErr(t, os.Remove(fresh))
	if apply(); len(said) != 0 {
		t.Errorf("applied temp files: %q", said)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Errorf("%s is still there with nothing kept", dir)
	}
	if apply(); len(said) != 0 {
		t.Errorf("applied again: %q", said)
	}

	// A crash after the record and before the drop: the event is applied again, and changes
	// nothing.
	noErr(t, en.KeepClaudeTask(task("2", "update the docs"), false))
	files, _ = filepath.Glob(filepath.Join(dir, "*.json"))
	b, _ := os.ReadFile(files[0])
	apply()
	noErr(t, os.MkdirAll(dir, 0o700))
	noErr(t, os.WriteFile(files[0], b, 0o600))
	if apply(); len(said) != 1 || !strings.Contains(said[0], "task 2 was already recorded as open; nothing changed") {
		t.Errorf("applied again after a crash: %q", said)
	}
	if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); strings.Join(r.OpenTasks, "|") != "update the docs" {
		t.Errorf("open tasks %q, want the docs task once", r.OpenTasks)
	}
}

// Hooks running at once each applied the same kept events: stderr said "already recorded;
// nothing changed" for each one another hook had applied (123 lines for 50 events). Each is
// now said once, by the hook that applied it.
func TestKeptClaudeTasksAppliedAtOnceAreSaidOnce(t *testing.T) {
	t.Parallel()
	e, en := keptEnv(t)
	const n = 30
	for i := range n {
		noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: fmt.Sprint(i), Subject: fmt.Sprint("task ", i)}, false))
	}
	var mu sync.Mutex
	var said []string
	report := collect(&said)
	var wg sync.WaitGroup
	for h := range 3 {
		hook := e.openAs(fmt.Sprint("sess-hook-", h), 5000+h)
		wg.Go(func() {
			_, err := hook.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, func(t engine.ClaudeTask, c bool, res *engine.Result, err error) {
				mu.Lock()
				defer mu.Unlock()
				report(t, c, res, err)
			})
			if err != nil && !errors.Is(err, engine.ErrKeptBusy) { // another records them
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(said) != n {
		t.Errorf("%d lines said for %d events:\n%s", len(said), n, strings.Join(said, "\n"))
	}
}

// keptEnv is the test env and the engine of session sess-aaaa-1 in a new project where s1 started an apex
// workflow, for the kept task events' tests.
func keptEnv(t *testing.T) (*env, *engine.Engine) {
	t.Helper()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	return e, e.open("sess-aaaa-1")
}

// collect is a report for ApplyKeptClaudeTasks that adds to said what became of each event:
// its message, or its error.
func collect(said *[]string) func(engine.ClaudeTask, bool, *engine.Result, error) {
	return func(_ engine.ClaudeTask, _ bool, res *engine.Result, err error) {
		if err != nil {
			*said = append(*said, err.Error())
			return
		}
		*said = append(*said, res.Message)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A task event kept in one Claude Code client and applied by the next hook of another is
// recorded as its own session's and client's, not as the applying one's: the live owner's
// task is mirrored (before, the hook beside it refused it as a task list beside the owner and
// dropped it, and took the workflow from the owner), and the task of the session beside the
// live owner stays out of the workflow when the owner's hook applies it.
func TestKeptClaudeTasksAreAppliedAsTheirOwnSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.openAs("sess-aaaa-1", os.Getpid()) // a running client
	must(owner.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	beside := e.openAs("sess-bbbb-2", 4243)
	noErr(t, owner.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	noErr(t, beside.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: "1", Subject: "unrelated chore"}, false))
	apply := func(by *engine.Engine) {
		t.Helper()
		if _, err := by.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, func(engine.ClaudeTask, bool, *engine.Result, error) {}); err != nil {
			t.Fatal(err)
		}
	}
	apply(beside)
	apply(owner)
	// One kept before kept events named their client is the applying client's, when it is
	// its session's.
	dir := filepath.Join(owner.StateDir(), engine.KeptTasksDir)
	noErr(t, os.MkdirAll(dir, 0o700))
	noErr(t, os.WriteFile(filepath.Join(dir, "9000000000000000000-1.json"), []byte(`{"session_id":"sess-aaaa-1","task_id":"2","subject":"test the parser","completed":false}`), 0o600))
	apply(owner)
	var r struct {
		Owner struct {
			SessionID string `json:"session_id"`
			PID       int
		}
		Tasks []struct{ ID, Note string }
	}
	if err := json.Unmarshal(owner.Resume(engine.ResumeOptions{}).Workflow, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 2 || r.Tasks[0].Note != "write the parser" || r.Tasks[0].ID != sessAaaaTask("1") || r.Tasks[1].ID != sessAaaaTask("2") {
		t.Errorf("tasks %+v, want the owner's two tasks only", r.Tasks)
	}
	if r.Owner.SessionID != "sess-aaaa-1" || r.Owner.PID != os.Getpid() {
		t.Errorf("the workflow's owner is %+v, want sess-aaaa-1 in its client still", r.Owner)
	}
}

// A task event kept while the lock was held belongs to the workflow active then: applied after
// that workflow was replaced (archived, another started), it was recorded into the new one,
// whose report then listed the old work's task as its own open task. It is now recorded only
// into the workflow it was kept under; under another, cairn-event says why it was not.
func TestKeptClaudeTaskOfAReplacedWorkflowIsNotRecordedInTheNewOne(t *testing.T) {
	t.Parallel()
	e, en := keptEnv(t)
	noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	must(e.open("s1").Start(engine.StartRequest{Type: "debug", Context: "other work", Replace: true}))(t)
	var said []string
	if _, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, collect(&said)); err != nil {
		t.Fatal(err)
	}
	var r struct{ Tasks []struct{ ID string } }
	if err := json.Unmarshal(en.Resume(engine.ResumeOptions{}).Workflow, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 0 {
		t.Errorf("the new workflow holds %+v, the replaced workflow's task", r.Tasks)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "it came while workflow apex-") || !strings.HasSuffix(said[0], " has replaced since") {
		t.Errorf("said %q, want the event refused as of the workflow replaced", said)
	}
}

// A caller whose share of time has run out records no more kept task events: they stay kept,
// in order, for the next hook, which records them all.
func TestKeptClaudeTasksPastTheirTimeStayKept(t *testing.T) {
	t.Parallel()
	_, en := keptEnv(t)
	for _, id := range []string{"1", "2"} {
		noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "task " + id}, false))
	}
	var said []string
	_, err := en.ApplyKeptClaudeTasks(0, time.Now().Add(-time.Second), collect(&said))
	if !errors.Is(err, engine.ErrKeptLeft) || !strings.Contains(err.Error(), "2 stay kept for the next Cairn hook") || len(said) != 0 {
		t.Fatalf("past its time: %v, said %q; want none recorded and both said to stay kept", err, said)
	}
	if _, err := en.ApplyKeptClaudeTasks(0, time.Time{}, collect(&said)); err != nil || len(said) != 2 {
		t.Fatalf("the next hook: %v, said %q; want both recorded", err, said)
	}
}

// A completion whose subject has a secret's shape is kept without it, and recorded as it is
// live: it closes the task of its id, and where there is none it is refused. Before, the kept
// one, its subject gone, was recorded as a new done task named "task N", which live it is not.
func TestKeptSecretCompletionIsRecordedAsLive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		created string // the subject task 5 was recorded with, "" for none
		want    string // what became of the completion
		tasks   string // the record's mirrored tasks after, "<id>=<status>:<note>"
	}{
		{name: "a task never recorded", want: "secret found (aws-access-key-id) in the task's subject", tasks: ""},
		{name: "a recorded task", created: "deploy", want: "Claude Code task 5 recorded as done in phase analyze", tasks: sessAaaaTask("5") + "=done:deploy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "5", Subject: "deploy with AKIAIOSFODNN7EXAMPLE"}
			for _, kept := range []bool{false, true} {
				_, en := keptEnv(t)
				if c.created != "" {
					must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: task.SessionID, TaskID: "5", Subject: c.created}, false))(t)
				}
				var said []string
				if kept {
					noErr(t, en.KeepClaudeTask(task, true))
					if _, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, collect(&said)); err != nil {
						t.Fatal(err)
					}
				} else {
					res, err := en.RecordClaudeTask(task, true)
					collect(&said)(task, true, res, err)
				}
				if len(said) != 1 || !strings.Contains(said[0], c.want) {
					t.Errorf("kept %v: said %q, want %q", kept, said, c.want)
				}
				if got := mirroredTasks(t, en); got != c.tasks {
					t.Errorf("kept %v: tasks %q, want %q", kept, got, c.tasks)
				}
			}
		})
	}
}

// mirroredTasks is the record's tasks, "<id>=<status>:<note>" joined by "|".
func mirroredTasks(t *testing.T, en *engine.Engine) string {
	t.Helper()
	var rec struct {
		Tasks []struct {
			ID, Status, Note string
		} `json:"tasks"`
	}
	data, err := os.ReadFile(filepath.Join(en.StateDir(), "workflow-state.json"))
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("reading the record: %v", err)
	}
	var out []string
	for _, k := range rec.Tasks {
		out = append(out, k.ID+"="+k.Status+":"+k.Note)
	}
	return strings.Join(out, "|")
}

// sessAaaaTask is the record's id of session sess-aaaa-1's Claude Code task.
func sessAaaaTask(task string) string {
	return workflow.ClaudeTaskID(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: task})
}

// Task events a hook kept (the lock was held) are recorded before resume_check answers, as
// the SessionStart report records them: resume_check listed a task a kept TaskCompleted had
// closed as open, and left out one a kept TaskCreated had opened, until the next hook.
func TestResumeCheckRecordsKeptTasks(t *testing.T) {
	t.Parallel()
	_, en := keptEnv(t)
	task := func(id, subject string) engine.ClaudeTask {
		return engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: subject}
	}
	must(en.RecordClaudeTask(task("1", "write the parser"), false))(t)
	noErr(t, en.KeepClaudeTask(task("1", "write the parser"), true))
	noErr(t, en.KeepClaudeTask(task("2", "test the parser"), false))
	res := en.Resume(engine.ResumeOptions{Apply: true, FromClient: true}) // resume_check's
	if len(res.OpenTasks) != 1 || !strings.Contains(res.OpenTasks[0], "test the parser") {
		t.Errorf("resume_check lists open tasks %q, want task 2 alone", res.OpenTasks)
	}
	if en.HasKeptClaudeTasks() {
		t.Errorf("the kept task events are still kept after resume_check recorded them")
	}
}

// Task events hooks kept that resume_check could not record before it answered (the workflow
// lock held, or its time for them spent) left its task list without them and said nothing;
// and it gave them no time limit. It gives them its lock wait, says in one line that they
// are not listed yet and what records them, and they stay kept.
func TestResumeCheckSaysKeptTasksNotRecorded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		wait time.Duration // resume_check's lock wait
		hold bool          // the workflow lock is held
		said string
	}{
		{name: "workflow locked", wait: 3 * time.Second, hold: true, said: "task events kept by hooks are not in the task list yet: the workflow is locked by pid "},
		{name: "time spent", wait: time.Nanosecond, said: "task events kept by hooks are not in the task list yet; the next Cairn hook records them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := keptEnv(t)
			en := e.openWaiting("sess-aaaa-1", 4242, c.wait)
			noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
			if c.hold {
				holdLock(t, en.StateDir(), ".lock-workflow")
			}
			res := en.Resume(engine.ResumeOptions{Apply: true, FromClient: true}) // resume_check's
			var said int
			for _, w := range res.Warnings {
				if strings.Contains(w, c.said) && strings.HasSuffix(w, "; the next Cairn hook records them") {
					said++
				}
			}
			if said != 1 || len(res.OpenTasks) != 0 || !en.HasKeptClaudeTasks() {
				t.Errorf("warnings %q, open tasks %q, still kept %t: want %q said once, the event kept", res.Warnings, res.OpenTasks, en.HasKeptClaudeTasks(), c.said)
			}
		})
	}
}
