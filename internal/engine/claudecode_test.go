package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Claude Code sends no event when a task is deleted, and a new session starts with an empty
// task list: a mirrored task an earlier session left open may be gone there. The next
// session's report says so (a notice; the task is kept, never closed) instead of listing it
// as plainly open; the session that created it, or one that creates it again, does not.
func TestMirroredTaskOfAnEarlierSessionIsToldAsSuch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	const stale = "1 open task came from an earlier Claude Code session"

	open := func(session string) string {
		t.Helper()
		r := e.open(session).Resume(engine.ResumeOptions{ReportOnly: true})
		if len(r.OpenTasks) != 1 || r.OpenTasks[0] != "write the parser" {
			t.Fatalf("session %s: open tasks %q, want the parser task", session, r.OpenTasks)
		}
		if strings.Contains(r.Report, stale) != strings.Contains(strings.Join(r.Notices, "\n"), stale) {
			t.Errorf("the notice and the report disagree:\n%s", r.Report)
		}
		return strings.Join(r.Notices, "\n")
	}
	if got := open("sess-aaaa-1"); strings.Contains(got, stale) {
		t.Errorf("the session that created it reads it as stale: %q", got)
	}
	if got := open("sess-bbbb-2"); !strings.Contains(got, stale) {
		t.Errorf("a new session reads a task of an earlier one as plainly open: %q", got)
	}
	// Created again in the new session: it is that session's task now.
	must(e.open("sess-bbbb-2").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: "1", Subject: "write the parser"}, false))(t)
	if got := open("sess-bbbb-2"); strings.Contains(got, stale) {
		t.Errorf("created again in this session, it still reads as an earlier session's: %q", got)
	}
	if got := open("sess-cccc-3"); !strings.Contains(got, stale) {
		t.Errorf("a third session reads it as plainly open: %q", got)
	}
}

// Claude Code's task list is empty in every new session, so a notice about an earlier
// session's open task, repeated at each start, would come back until the task is done. The
// first session start that tells of it says it once; the task then stands as the workflow's
// own: listed as open, in no later report's notice (a later session, the same session
// compacted, or its resume_check). A task of another session left open later is told once
// too.
func TestEarlierSessionTaskIsToldOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	const stale = "open task came from an earlier Claude Code session"

	start := func(session string, details bool) *engine.Resume {
		t.Helper()
		r := e.open(session).Resume(engine.ResumeOptions{Apply: true, ReportOnly: !details})
		if !slices.Contains(r.OpenTasks, "write the parser") {
			t.Fatalf("session %s: open tasks %q, want the parser task", session, r.OpenTasks)
		}
		return r
	}
	if r := start("sess-bbbb-2", false); !strings.Contains(r.Report, "1 "+stale) || !strings.Contains(r.Report, "Cairn says this once") {
		t.Fatalf("the first new session is not told of the earlier session's task:\n%s", r.Report)
	}
	for _, s := range []struct {
		session string
		details bool
	}{{"sess-bbbb-2", false}, {"sess-bbbb-2", true}, {"sess-cccc-3", false}, {"sess-dddd-4", true}} {
		if r := start(s.session, s.details); strings.Contains(r.Report, stale) || containsAny(r.Notices, stale) {
			t.Errorf("session %s (details %v) is told again:\n%s", s.session, s.details, r.Report)
		}
	}
	// A new task left open by session dddd is the next session's news, and only it.
	must(e.open("sess-dddd-4").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-dddd-4", TaskID: "1", Subject: "test the parser"}, false))(t)
	if r := start("sess-eeee-5", false); !strings.Contains(r.Report, "1 "+stale) {
		t.Errorf("a task left open after the first was told is not told:\n%s", r.Report)
	}
	if r := start("sess-ffff-6", false); strings.Contains(r.Report, stale) {
		t.Errorf("told again:\n%s", r.Report)
	}
}

// Two Claude Code clients in one project: the task list of a session working beside the one
// that owns the workflow (another running client, which changed it within the live window)
// is its own, and is not mirrored into that workflow, where it would be listed as open in
// every later report. Its completion of a task it did mirror is still recorded, and once the
// owner has been quiet past the live window its tasks are mirrored again.
func TestTasksOfASessionBesideTheLiveOwnerAreNotMirrored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.openAs("sess-aaaa-1", os.Getpid()) // a running client
	must(owner.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	beside := e.openAs("sess-bbbb-2", 4243)
	task := func(id, subject string, completed bool) error {
		_, err := beside.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: id, Subject: subject}, completed)
		return err
	}
	type mirrored struct{ ID, Status string }
	tasks := func() []mirrored {
		t.Helper()
		var r struct{ Tasks []mirrored }
		if err := json.Unmarshal(owner.Resume(engine.ResumeOptions{}).Workflow, &r); err != nil {
			t.Fatal(err)
		}
		return r.Tasks
	}
	if err := task("1", "unrelated chore", false); err == nil || !strings.Contains(err.Error(), "another live session") {
		t.Errorf("a task of the session beside the live owner: err %v, want it not mirrored", err)
	}
	if got := tasks(); len(got) != 0 {
		t.Fatalf("the workflow holds %+v, want no task", got)
	}
	e.clock.Add(11 * time.Minute) // the owner quiet past the live window
	if err := task("2", "write the parser", false); err != nil {
		t.Fatal(err)
	}
	must(owner.Transition(engine.TransitionRequest{To: "plan"}))(t) // the owner is back
	if err := task("3", "another chore", false); err == nil {
		t.Errorf("a new task beside the live owner was mirrored")
	}
	if err := task("2", "write the parser", true); err != nil {
		t.Errorf("its own mirrored task's completion beside the live owner: %v", err)
	}
	if got := tasks(); len(got) != 1 || got[0].Status != "done" {
		t.Errorf("tasks %+v, want the parser task done and nothing else", got)
	}
}

// The owner recorded without a pid (the agent's cairn in its Bash tool, which has the session
// but no pid) is found in the session records: while the client whose record names its
// session runs, another session's task list is kept out of its workflow, as for an owner with
// a pid; once that client has exited, the task is mirrored.
func TestTasksBesideALiveOwnerWithoutPidAreNotMirrored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		ownerRan func(t *testing.T) int // the client whose session record names the owner's session
		mirrored bool
	}{
		{"its client runs", func(*testing.T) int { return os.Getpid() }, false},
		{"its client exited", exitedPID, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			client := tc.ownerRan(t)
			must(e.openAs("sess-aaaa-1", 0).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			if err := e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-aaaa-1", PID: client}); err != nil {
				t.Fatal(err)
			}
			_, err := e.openAs("sess-bbbb-2", 4243).RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: "1", Subject: "unrelated chore"}, false)
			if mirrored := err == nil; mirrored != tc.mirrored {
				t.Errorf("mirrored %t (err %v), want %t", mirrored, err, tc.mirrored)
			}
		})
	}
}

// A session beside the live owner (a fork, or another terminal, in a client of its own) is
// not told that the owner's open tasks came from an earlier session's list to create again:
// they are in the live owner's list, and the fork's own are kept out of the workflow. Nor
// does its start count them as told: the first session after the owner is gone is told.
func TestOwnersTasksAreNotToldAsEarlierBesideTheLiveOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.openAs("sess-aaaa-1", os.Getpid()) // a running client
	must(owner.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(owner.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	const stale = "open task came from an earlier Claude Code session"
	start := func(session string) *engine.Resume {
		t.Helper()
		r := e.openAs(session, 4243).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
		if !slices.Contains(r.OpenTasks, "write the parser") {
			t.Fatalf("session %s: open tasks %q, want the parser task", session, r.OpenTasks)
		}
		return r
	}
	if r := start("sess-bbbb-2"); strings.Contains(r.Report, stale) || containsAny(r.Notices, stale) {
		t.Errorf("the session beside the live owner is told to create the owner's tasks again:\n%s", r.Report)
	}
	e.clock.Add(11 * time.Minute) // the owner quiet past the live window
	if r := start("sess-cccc-3"); !strings.Contains(r.Report, "1 "+stale) {
		t.Errorf("the first session after the owner is not told of its open task:\n%s", r.Report)
	}
}

// Two tasks of an earlier session are told of as two, not as one task in the plural count.
func TestEarlierSessionTasksAreToldInThePlural(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	for _, id := range []string{"1", "2"} {
		must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "part " + id}, false))(t)
	}
	r := e.open("sess-bbbb-2").Resume(engine.ResumeOptions{ReportOnly: true})
	const want = "2 open tasks came from an earlier Claude Code session's task list, which this session does not have; Claude Code does not say when a task is deleted, so each may be gone there. Cairn says this once; the tasks then stand as the workflow's own"
	if !slices.Contains(r.Notices, want) {
		t.Errorf("notices %q, want %q", r.Notices, want)
	}
}

// The step that goes with an earlier session's tasks (create them again) is Cairn's own: it
// follows the fence, in the next step, and not inside it, where the report tells the model to
// read what it holds as data, not instructions.
func TestEarlierSessionTasksStepFollowsTheFence(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	for _, id := range []string{"1", "2"} {
		must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "part " + id}, false))(t)
	}
	const step = "Also create again with TaskCreate each open task from the earlier session's list that is still to do."
	r := e.open("sess-bbbb-2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	end := strings.Index(r.Report, "</cairn-state ")
	if end < 0 {
		t.Fatalf("no fence in the report:\n%s", r.Report)
	}
	fence, after := r.Report[:end], r.Report[end:]
	if !strings.Contains(fence, "2 open tasks came from an earlier Claude Code session") || strings.Contains(fence, "create") {
		t.Errorf("the fence does not hold the notice, or holds the step to create the tasks again:\n%s", r.Report)
	}
	if !strings.Contains(after, step) || !strings.HasSuffix(r.Next, step) {
		t.Errorf("the next step (%q) after the fence lacks %q:\n%s", r.Next, step, r.Report)
	}
}

// Claude Code's events can come late or twice: a TaskCreated after the task's TaskCompleted,
// a completion sent again, or a TaskCreated for a task Cairn has since failed. Nothing
// changes, and the message says what the task is recorded as, not what the event asked for.
func TestRepeatedTaskEventSaysWhatTheTaskIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("sess-aaaa-1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	task := func(id string, completed bool) string {
		t.Helper()
		return must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "part " + id}, completed))(t).Message
	}
	task("1", true)
	task("2", false)
	task("3", false)
	three := workflow.ClaudeTaskID(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "3"})
	must(en.UpdateTask(engine.TaskRequest{ID: three, Status: "running"}))(t)
	must(en.UpdateTask(engine.TaskRequest{ID: three, Status: "failed"}))(t)
	for _, tc := range []struct {
		id        string
		completed bool
		want      string
	}{
		{"1", false, "Claude Code task 1 was already recorded as done; nothing changed"},
		{"1", true, "Claude Code task 1 was already recorded as done; nothing changed"},
		{"2", false, "Claude Code task 2 was already recorded as open; nothing changed"},
		{"3", false, "Claude Code task 3 was already recorded as failed; nothing changed"},
	} {
		if got := task(tc.id, tc.completed); got != tc.want {
			t.Errorf("task %s (completed %v): %q, want %q", tc.id, tc.completed, got, tc.want)
		}
	}
}

// A task stays in the phase it was created in: completed after the workflow moved on, by its
// own session or by a later one that never saw it created, the message names the task's
// phase, not the workflow's.
func TestTaskEventSaysTheTasksPhase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("sess-aaaa-1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	for _, id := range []string{"1", "2"} {
		must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "part " + id}, false))(t)
	}
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	for _, tc := range []struct {
		session, id, subject string
		completed            bool
		want                 string
	}{
		{"sess-aaaa-1", "1", "part 1", true, "Claude Code task 1 recorded as done in phase analyze"},
		{"sess-bbbb-2", "7", "part 2", true, "Claude Code task 7 recorded as done in phase analyze"},
		{"sess-bbbb-2", "8", "part 8", false, "Claude Code task 8 recorded as open in phase plan"},
	} {
		res := must(e.open(tc.session).RecordClaudeTask(engine.ClaudeTask{SessionID: tc.session, TaskID: tc.id, Subject: tc.subject}, tc.completed))(t)
		if res.Message != tc.want {
			t.Errorf("task %s of %s: %q, want %q", tc.id, tc.session, res.Message, tc.want)
		}
	}
}

// Two machines share a workflow through a remote: the record that machine A's live session
// last changed reaches machine B, where A's client pid names no process (or another one). B's
// session start took A's session as ended, and told A's pending Claude Code task as one "from
// an earlier Claude Code session's task list" to create again, so both agents would do it; and
// B's own task list was mirrored into the workflow A's session owns. The owner now records its
// machine, and another machine's owner is live by its heartbeat alone.
func TestOwnersTasksOnAnotherMachineAreNotToldAsEarlier(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	onA := e.openWith("sess-aaaa-1", exitedPID(t), func(c *engine.Config) { c.Host = "machine-a" })
	must(onA.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(onA.RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	const stale = "open task came from an earlier Claude Code session"
	onB := func(session string) *engine.Engine {
		return e.openWith(session, 4243, func(c *engine.Config) { c.Host = "machine-b" })
	}
	if r := onB("sess-bbbb-2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); strings.Contains(r.Report, stale) || containsAny(r.Notices, stale) {
		t.Errorf("machine B is told to create machine A's live session's task again:\n%s", r.Report)
	}
	if _, err := onB("sess-bbbb-2").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: "1", Subject: "unrelated chore"}, false); err == nil || !strings.Contains(err.Error(), "another live session") {
		t.Errorf("machine B's task beside machine A's live owner: err %v, want it not mirrored", err)
	}
	e.clock.Add(11 * time.Minute) // A's session quiet past the live window
	if r := onB("sess-cccc-3").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, "1 "+stale) {
		t.Errorf("the first session after A's is quiet is not told of its open task:\n%s", r.Report)
	}
}

// A TaskUpdate to status deleted fires no hook: Claude Code only removes the task's file from
// its list (<config>/tasks/<list id>/<id>.json). The end of the turn takes a pending task of
// this session whose file is gone out of the workflow, and only that: a list that is not
// there proves nothing, another session's task is that session's, and a task done stays.
// A TaskUpdate of a completed task back to pending or in_progress fires no hook either: its
// file says so, and the end of the turn opens the task again (before, it stayed done, in no
// later report). A pending task whose file says completed lost its TaskCompleted (the hook
// failed, or was killed), which Claude Code does not send again: it is recorded done.
func TestStopDropsTasksClaudeCodeDeleted(t *testing.T) {
	const sess = "sess-aaaa-1"
	for _, c := range []struct {
		name    string
		vars    map[string]string
		list    string   // the list directory under home, "" for none
		files   []string // task files in it, "<name>:<status>:<subject>" for one with those
		wantIn  []string // the open tasks after the turn's end
		drops   int
		opens   int
		renames int
		// completes: pending tasks its list has completed, whose TaskCompleted was lost (its
		// hook failed or was killed): they stood open in every later report.
		completes int
		// chdir runs the turn's end in home, where a relative HOME or CLAUDE_CONFIG_DIR names
		// the list: that is not the user's, and proves nothing.
		chdir bool
	}{
		{name: "deleted", list: ".claude/tasks/" + sess, files: []string{"1.json"}, wantIn: []string{"write the parser", "an earlier one"}, drops: 1},
		{name: "none deleted", list: ".claude/tasks/" + sess, files: []string{"1.json", "2.json"}, wantIn: []string{"write the parser", "drop the cache", "an earlier one"}},
		{name: "reopened", list: ".claude/tasks/" + sess, files: []string{"1.json", "2.json", "3.json:pending"}, wantIn: []string{"write the parser", "drop the cache", "finished", "an earlier one"}, opens: 1},
		{name: "reopened in progress, one deleted", list: ".claude/tasks/" + sess, files: []string{"2.json", "3.json:in_progress"}, wantIn: []string{"drop the cache", "finished", "an earlier one"}, drops: 1, opens: 1},
		{name: "renamed", list: ".claude/tasks/" + sess, files: []string{"1.json:pending:write the JSON parser", "2.json", "3.json:completed:finished it"}, wantIn: []string{"write the JSON parser", "drop the cache", "an earlier one"}, renames: 1},
		{name: "completed, its event lost", list: ".claude/tasks/" + sess, files: []string{"1.json:completed", "2.json", "3.json:completed"}, wantIn: []string{"drop the cache", "an earlier one"}, completes: 1},
		{name: "completed and renamed, its event lost", list: ".claude/tasks/" + sess, files: []string{"1.json:completed:write the JSON parser", "2.json:in_progress"}, wantIn: []string{"drop the cache", "an earlier one"}, completes: 1, renames: 1},
		{name: "still completed", list: ".claude/tasks/" + sess, files: []string{"1.json", "2.json", "3.json:completed"}, wantIn: []string{"write the parser", "drop the cache", "an earlier one"}},
		{name: "no list", wantIn: []string{"write the parser", "drop the cache", "an earlier one"}},
		{name: "list named by CLAUDE_CODE_TASK_LIST_ID", vars: map[string]string{"CLAUDE_CODE_TASK_LIST_ID": "team/x"},
			list: ".claude/tasks/team-x", files: []string{"2.json"}, wantIn: []string{"drop the cache", "an earlier one"}, drops: 1},
		{name: "config dir moved", vars: map[string]string{"CLAUDE_CONFIG_DIR": "CFG"},
			list: "CFG/tasks/" + sess, wantIn: []string{"an earlier one"}, drops: 2},
		{name: "relative HOME", vars: map[string]string{"HOME": "."}, chdir: true,
			list: ".claude/tasks/" + sess, wantIn: []string{"write the parser", "drop the cache", "an earlier one"}},
		{name: "relative config dir", vars: map[string]string{"CLAUDE_CONFIG_DIR": "cfg"}, chdir: true,
			list: "cfg/tasks/" + sess, wantIn: []string{"write the parser", "drop the cache", "an earlier one"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			for k, v := range c.vars {
				if v == "CFG" {
					v = filepath.Join(e.home, "cfg")
					c.list = strings.Replace(c.list, "CFG", "cfg", 1)
				}
				e.vars[k] = v
			}
			if c.chdir {
				t.Chdir(e.home)
			}
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(e.open("sess-zzzz-9").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-zzzz-9", TaskID: "2", Subject: "an earlier one"}, false))(t)
			en := e.open(sess)
			for i, s := range []string{"write the parser", "drop the cache", "finished"} {
				must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: strconv.Itoa(i + 1), Subject: s}, false))(t)
			}
			must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "3", Subject: "finished"}, true))(t)
			// Another session changed the workflow last: taking the deleted tasks out is
			// bookkeeping and leaves it the owner.
			must(e.open("sess-yyyy-8").SetVars(map[string]string{"WF_K": "v"}))(t)
			if c.list != "" {
				dir := filepath.Join(e.home, c.list)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range c.files {
					f, status, _ := strings.Cut(f, ":")
					status, subject, _ := strings.Cut(status, ":")
					if err := os.WriteFile(filepath.Join(dir, f), []byte(`{"status":"`+status+`","subject":"`+subject+`"}`), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, err := e.open(sess).Stop(engine.StopInput{SessionID: sess})
			if err != nil || out.DroppedErr != nil {
				t.Fatalf("Stop: %v, %v", err, out.DroppedErr)
			}
			if want := (engine.TasksFollowed{Dropped: c.drops, Reopened: c.opens, Renamed: c.renames, Completed: c.completes}); out.Followed != want {
				t.Errorf("followed %+v, want %+v", out.Followed, want)
			}
			var rec struct {
				Owner struct {
					SessionID string `json:"session_id"`
				} `json:"owner"`
			}
			data, err := os.ReadFile(filepath.Join(e.open(sess).StateDir(), "workflow-state.json"))
			if err != nil || json.Unmarshal(data, &rec) != nil {
				t.Fatalf("reading the record: %v", err)
			}
			if rec.Owner.SessionID != "sess-yyyy-8" {
				t.Errorf("the owner after the turn's end is %q, want sess-yyyy-8 as before", rec.Owner.SessionID)
			}
			r := e.open(sess).Resume(engine.ResumeOptions{ReportOnly: true})
			slices.Sort(r.OpenTasks)
			slices.Sort(c.wantIn)
			if !slices.Equal(r.OpenTasks, c.wantIn) {
				t.Errorf("open tasks %q, want %q", r.OpenTasks, c.wantIn)
			}
		})
	}
}

// A completion in a session that never saw the task's creation closes an earlier session's
// pending task of the same subject. That task kept the earlier session's id, so this
// session's turn ends never looked at it again: set back to pending in this session's list
// (no hook fires), or renamed there, it stayed done under its old subject, in no later
// report. It now takes this session's id, as a task created again does, and is followed.
func TestEarlierTaskCompletedHereIsFollowed(t *testing.T) {
	t.Parallel()
	const sess = "sess-bbbb-2"
	for _, c := range []struct {
		name, file string // this session's task 4 as its list holds it after the completion
		want       []string
		followed   engine.TasksFollowed
	}{
		{name: "reopened", file: `{"status":"pending","subject":"write the parser"}`, want: []string{"write the parser"}, followed: engine.TasksFollowed{Reopened: 1}},
		{name: "reopened and renamed", file: `{"status":"in_progress","subject":"write the JSON parser"}`, want: []string{"write the JSON parser"}, followed: engine.TasksFollowed{Reopened: 1, Renamed: 1}},
		{name: "still completed", file: `{"status":"completed","subject":"write the parser"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
			res := must(e.open(sess).RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "4", Subject: "write the parser"}, true))(t)
			if !strings.Contains(res.Message, "recorded as done") {
				t.Fatalf("the completion says %q", res.Message)
			}
			dir := filepath.Join(e.home, ".claude", "tasks", sess)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "4.json"), []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := e.open(sess).Stop(engine.StopInput{SessionID: sess})
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if out.Followed != c.followed {
				t.Errorf("followed %+v, want %+v", out.Followed, c.followed)
			}
			if r := e.open(sess).Resume(engine.ResumeOptions{ReportOnly: true}); !slices.Equal(r.OpenTasks, c.want) {
				t.Errorf("open tasks %q, want %q", r.OpenTasks, c.want)
			}
		})
	}
}

// With CLAUDE_CODE_TASK_LIST_ID, sessions share one task list: a new session has an earlier
// session's tasks. The notice said it "does not have" them, and the step had the model create
// them again with TaskCreate, a second copy of each in the shared list. It now says the list is
// shared, and the step is to look in TaskList first.
func TestEarlierSessionTasksInASharedList(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, list string
		n          int
		notice     string
		step       string
	}{
		{name: "own list", n: 1,
			notice: "1 open task came from an earlier Claude Code session's task list, which this session does not have;",
			step:   "Also create again with TaskCreate the open task from the earlier session's list if it is still to do."},
		{name: "shared list", list: "team-x", n: 1,
			notice: "1 open task came from an earlier Claude Code session; this session shares its task list (CLAUDE_CODE_TASK_LIST_ID), which holds it unless it was deleted there, and Claude Code does not say when a task is deleted. Cairn says this once; the task then stands as the workflow's own",
			step:   "Also look in TaskList for the open task from the earlier session: if it is not there and is still to do, create it again with TaskCreate."},
		{name: "shared list, two", list: "team-x", n: 2,
			notice: "2 open tasks came from an earlier Claude Code session; this session shares its task list (CLAUDE_CODE_TASK_LIST_ID), which holds each unless it was deleted there, and Claude Code does not say when a task is deleted. Cairn says this once; the tasks then stand as the workflow's own",
			step:   "Also look in TaskList for each open task from the earlier session: create again with TaskCreate one that is not there and is still to do."},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.list != "" {
				e.vars["CLAUDE_CODE_TASK_LIST_ID"] = c.list
			}
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			for i := range c.n {
				id := strconv.Itoa(i + 1)
				must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: id, Subject: "part " + id}, false))(t)
			}
			r := e.open("sess-bbbb-2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if !slices.ContainsFunc(r.Notices, func(s string) bool { return strings.HasPrefix(s, c.notice) }) {
				t.Errorf("notices %q, want %q", r.Notices, c.notice)
			}
			if !strings.HasSuffix(r.Next, c.step) {
				t.Errorf("next step %q, want it to end with %q", r.Next, c.step)
			}
		})
	}
}

// With CLAUDE_CODE_TASK_LIST_ID, a new session's list holds an earlier session's tasks, and the
// model deletes, renames or reopens them there as its own, which fires no hook. Only the
// session's own tasks were followed: a task deleted there stood open in every later report,
// and one renamed kept its old subject. A session whose shared list holds an earlier session's
// task (same number, same subject) now takes it as its own at its start, and follows it.
func TestSharedListFollowsEarlierSessionTasks(t *testing.T) {
	t.Parallel()
	const old, sess = "sess-aaaa-1", "sess-bbbb-2"
	for _, c := range []struct {
		name     string
		shared   bool
		at       []string // the list at the new session's start, "<n>:<status>:<subject>"
		after    []string // the list at its turn's end
		want     []string // open tasks after the turn's end
		followed engine.TasksFollowed
	}{
		{name: "deleted and renamed", shared: true,
			at:       []string{"1:pending:write the parser", "2:pending:drop the cache", "3:completed:finished"},
			after:    []string{"2:pending:drop the old cache", "3:pending:finished"},
			want:     []string{"an earlier one", "drop the old cache", "finished"},
			followed: engine.TasksFollowed{Dropped: 1, Renamed: 1, Reopened: 1}},
		{name: "another task of the same number is not taken", shared: true,
			at:       []string{"1:pending:something else", "2:pending:drop the cache"},
			after:    []string{"2:pending:drop the old cache"},
			want:     []string{"an earlier one", "write the parser", "drop the old cache"},
			followed: engine.TasksFollowed{Renamed: 1}},
		{name: "a list of its own", // the earlier session's list is not this one's
			at:    []string{"2:pending:drop the cache"},
			after: []string{},
			want:  []string{"an earlier one", "write the parser", "drop the cache"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			list := filepath.Join(e.home, ".claude", "tasks", sess)
			if c.shared {
				e.vars["CLAUDE_CODE_TASK_LIST_ID"] = "team-x"
				list = filepath.Join(e.home, ".claude", "tasks", "team-x")
			}
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(e.open("sess-zzzz-9").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-zzzz-9", TaskID: "9", Subject: "an earlier one"}, false))(t)
			en := e.open(old)
			for i, s := range []string{"write the parser", "drop the cache", "finished"} {
				must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: old, TaskID: strconv.Itoa(i + 1), Subject: s}, false))(t)
			}
			must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: old, TaskID: "3", Subject: "finished"}, true))(t)
			writeList := func(files []string) {
				t.Helper()
				noErr(t, os.RemoveAll(list))
				noErr(t, os.MkdirAll(list, 0o755))
				for _, f := range files {
					parts := strings.SplitN(f, ":", 3)
					noErr(t, os.WriteFile(filepath.Join(list, parts[0]+".json"), []byte(`{"id":"`+parts[0]+`","status":"`+parts[1]+`","subject":"`+parts[2]+`"}`), 0o644))
				}
			}
			writeList(c.at)
			e.open(sess).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			writeList(c.after)
			out, err := e.open(sess).Stop(engine.StopInput{SessionID: sess})
			if err != nil || out.DroppedErr != nil {
				t.Fatalf("Stop: %v, %v", err, out.DroppedErr)
			}
			if out.Followed != c.followed {
				t.Errorf("followed %+v, want %+v", out.Followed, c.followed)
			}
			if r := e.open(sess).Resume(engine.ResumeOptions{ReportOnly: true}); !slices.Equal(r.OpenTasks, c.want) {
				t.Errorf("open tasks %q, want %q", r.OpenTasks, c.want)
			}
		})
	}
}

// With CLAUDE_CODE_TASK_LIST_ID, an earlier session whose tasks were all completed (none
// pending) made every later session's start, resume_check and turn's end panic (a write
// into a nil map), so the hooks said only "internal error". They now read as with none.
func TestSharedListWithOnlyDoneEarlierTasks(t *testing.T) {
	t.Parallel()
	const old, sess = "sess-aaaa-1", "sess-bbbb-2"
	e := newEnv(t)
	e.vars["CLAUDE_CODE_TASK_LIST_ID"] = "team-x"
	must(e.open(old).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(e.open(old).RecordClaudeTask(engine.ClaudeTask{SessionID: old, TaskID: "1", Subject: "write the parser"}, true))(t)
	r := e.open(sess).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(r.Report, "Next: Continue phase analyze, then move on to plan.") {
		t.Errorf("report:\n%s", r.Report)
	}
	if _, err := e.open(sess).Stop(engine.StopInput{SessionID: sess}); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// Two sessions whose ids share their first 8 characters (sequential --session-id values, as
// scripts give them) made the same task ids: the second session's TaskCreated "1" was
// answered "already recorded; nothing changed" (its task lost), and its turn's end read the
// first session's tasks as its own, dropping one as deleted and renaming another to its
// subject. Each session's tasks are now its own.
func TestSessionsSharingAnIDPrefixKeepTheirTasks(t *testing.T) {
	t.Parallel()
	const a, b = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	for i, s := range []string{"write the parser", "drop the cache"} {
		must(e.open(a).RecordClaudeTask(engine.ClaudeTask{SessionID: a, TaskID: strconv.Itoa(i + 1), Subject: s}, false))(t)
	}
	res := must(e.open(b).RecordClaudeTask(engine.ClaudeTask{SessionID: b, TaskID: "1", Subject: "deploy"}, false))(t)
	if want := "Claude Code task 1 recorded as open in phase analyze"; res.Message != want {
		t.Errorf("session %s's task 1: %q, want %q", b, res.Message, want)
	}
	dir := filepath.Join(e.home, ".claude", "tasks", b)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.json"), []byte(`{"status":"pending","subject":"deploy"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := e.open(b).Stop(engine.StopInput{SessionID: b})
	if err != nil || out.DroppedErr != nil {
		t.Fatalf("Stop: %v, %v", err, out.DroppedErr)
	}
	if out.Followed != (engine.TasksFollowed{}) {
		t.Errorf("session %s's turn's end followed %+v in the other session's tasks, want nothing", b, out.Followed)
	}
	r := e.open(b).Resume(engine.ResumeOptions{ReportOnly: true})
	want := []string{"deploy", "drop the cache", "write the parser"}
	if slices.Sort(r.OpenTasks); !slices.Equal(r.OpenTasks, want) {
		t.Errorf("open tasks %q, want %q", r.OpenTasks, want)
	}
}

// Two live clients sharing a task list (CLAUDE_CODE_TASK_LIST_ID) working on one workflow:
// each turn's end of the one that changed the workflow last took the other's tasks in the
// list as an earlier session's, giving them its id, and the other's took them back: the ids
// swapped at every turn, each swap a journaled change, and the other session no longer
// followed its own tasks. A task of a session running in another live client stays its own.
func TestLiveSessionsSharingAListKeepTheirTasks(t *testing.T) {
	t.Parallel()
	const a, b = "sess-aaaa-1", "sess-bbbb-2"
	e := newEnv(t)
	e.vars["CLAUDE_CODE_TASK_LIST_ID"] = "team-x"
	ea, eb := e.openAs(a, os.Getpid()), e.openAs(b, os.Getppid()) // two running clients
	must(0, ea.RecordSession(engine.Session{SessionID: a, PID: os.Getpid()}))(t)
	must(0, eb.RecordSession(engine.Session{SessionID: b, PID: os.Getppid()}))(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(ea.RecordClaudeTask(engine.ClaudeTask{SessionID: a, TaskID: "1", Subject: "write the parser"}, false))(t)
	must(eb.SetVars(map[string]string{"WF_K": b}))(t) // b takes the workflow: its tasks are mirrored
	must(eb.RecordClaudeTask(engine.ClaudeTask{SessionID: b, TaskID: "2", Subject: "drop the cache"}, false))(t)
	list := filepath.Join(e.home, ".claude", "tasks", "team-x")
	noErr(t, os.MkdirAll(list, 0o755))
	for n, s := range map[string]string{"1": "write the parser", "2": "drop the cache"} {
		noErr(t, os.WriteFile(filepath.Join(list, n+".json"), []byte(`{"id":"`+n+`","status":"pending","subject":"`+s+`"}`), 0o644))
	}
	ids := func() []string {
		t.Helper()
		var r struct{ Tasks []struct{ ID string } }
		noErr(t, json.Unmarshal(ea.Resume(engine.ResumeOptions{}).Workflow, &r))
		var out []string
		for _, k := range r.Tasks {
			out = append(out, k.ID)
		}
		return out
	}
	want := ids()
	for _, turn := range []struct {
		session string
		en      *engine.Engine
	}{{b, eb}, {a, ea}, {b, eb}} {
		must(turn.en.SetVars(map[string]string{"WF_K": turn.session}))(t) // the workflow is this session's now
		out, err := turn.en.Stop(engine.StopInput{SessionID: turn.session})
		if err != nil || out.DroppedErr != nil {
			t.Fatalf("Stop: %v, %v", err, out.DroppedErr)
		}
		if out.Followed != (engine.TasksFollowed{}) {
			t.Errorf("%s's turn's end followed %+v, want nothing", turn.session, out.Followed)
		}
		if got := ids(); !slices.Equal(got, want) {
			t.Errorf("after %s's turn the tasks are %q, want %q as created", turn.session, got, want)
		}
	}
}

// Two live clients working on one workflow, each with a task of the same subject (two tasks:
// one in each session's list, or two entries of a list they share): the second one's
// TaskCreated was taken as the first one's task created again, which took the second
// session's id, so the workflow held one task for two; when the first session completed its
// task, that one task was marked done, and the second session's, still open in its list, was
// no longer listed as open. A pending task of a session still running in another client is
// that session's, not one an earlier session left: each session's task is its own.
func TestLiveSessionsTasksOfOneSubjectStayTwo(t *testing.T) {
	t.Parallel()
	const a, b = "sess-aaaa-1", "sess-bbbb-2"
	for _, list := range []string{"", "team-x"} {
		t.Run("list "+list, func(t *testing.T) {
			e := newEnv(t)
			e.vars["CLAUDE_CODE_TASK_LIST_ID"] = list
			ea, eb := e.openAs(a, os.Getpid()), e.openAs(b, os.Getppid()) // two running clients
			must(0, ea.RecordSession(engine.Session{SessionID: a, PID: os.Getpid()}))(t)
			must(0, eb.RecordSession(engine.Session{SessionID: b, PID: os.Getppid()}))(t)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(ea.RecordClaudeTask(engine.ClaudeTask{SessionID: a, TaskID: "1", Subject: "run the tests"}, false))(t)
			must(eb.SetVars(map[string]string{"WF_K": b}))(t) // b takes the workflow: its tasks are mirrored
			bTask := "2"
			if list == "" {
				bTask = "1" // its own list numbers from 1
			}
			must(eb.RecordClaudeTask(engine.ClaudeTask{SessionID: b, TaskID: bTask, Subject: "run the tests"}, false))(t)
			open := func() []string {
				t.Helper()
				return e.open(b).Resume(engine.ResumeOptions{ReportOnly: true}).OpenTasks
			}
			if got, want := open(), []string{"run the tests", "run the tests"}; !slices.Equal(got, want) {
				t.Fatalf("open tasks after both sessions created theirs: %q, want %q", got, want)
			}
			// In a shared list, either session may complete the other's task, which has its
			// number there.
			by := ea
			if list != "" {
				by = eb
			}
			must(by.RecordClaudeTask(engine.ClaudeTask{SessionID: by.SessionID(), TaskID: "1", Subject: "run the tests"}, true))(t)
			if got, want := open(), []string{"run the tests"}; !slices.Equal(got, want) {
				t.Fatalf("open tasks after task 1 was completed: %q, want %q (the other one, still open)", got, want)
			}
			var r struct{ Tasks []struct{ Status string } }
			noErr(t, json.Unmarshal(e.open(b).Resume(engine.ResumeOptions{}).Workflow, &r))
			if len(r.Tasks) != 2 {
				t.Fatalf("the workflow holds %+v, want two tasks, one done", r.Tasks)
			}
		})
	}
}

// A session started beside another client still running was told that client's session's
// open tasks came from an earlier session's list it does not have, with the step to create
// them again with TaskCreate, when the workflow's owner was not that client (here, a /clear in
// the client that took the workflow last): a second copy of a task the other session still
// holds in its list and works on. A pending task of a session another running client runs is
// that session's, and is not told as an earlier one's (a start once that client has exited
// tells of it).
func TestLiveSessionsTasksAreNotToldAsEarlier(t *testing.T) {
	t.Parallel()
	const a, b, cleared = "sess-aaaa-1", "sess-bbbb-2", "sess-bbbb-3"
	e := newEnv(t)
	ea, eb := e.openAs(a, os.Getpid()), e.openAs(b, os.Getppid()) // two running clients
	must(0, ea.RecordSession(engine.Session{SessionID: a, PID: os.Getpid()}))(t)
	must(0, eb.RecordSession(engine.Session{SessionID: b, PID: os.Getppid()}))(t)
	must(ea.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(ea.RecordClaudeTask(engine.ClaudeTask{SessionID: a, TaskID: "1", Subject: "write the parser"}, false))(t)
	must(eb.SetVars(map[string]string{"WF_K": b}))(t) // b's client takes the workflow
	ec := e.openAs(cleared, os.Getppid())             // then /clear there
	must(0, ec.RecordSession(engine.Session{SessionID: cleared, PID: os.Getppid()}))(t)
	r := ec.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !slices.Contains(r.OpenTasks, "write the parser") {
		t.Fatalf("open tasks %q, want the parser task", r.OpenTasks)
	}
	const stale = "open task came from an earlier Claude Code session"
	if strings.Contains(r.Report, stale) || containsAny(r.Notices, stale) {
		t.Errorf("the session beside a running client is told to create its task again:\n%s", r.Report)
	}
}
