package workflow_test

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func startedApex(t *testing.T) *workflow.Record {
	t.Helper()
	def, ok := workflow.BuiltinDefinition("apex")
	if !ok {
		t.Fatal("no apex")
	}
	res, err := workflow.Start(def, nil, workflow.StartRequest{Type: "apex", Context: "c", ID: "apex-1"}, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), workflow.Actor{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Record
}

// taskEvent is one TaskCreated (done false) or TaskCompleted (done true) event.
type taskEvent struct {
	session, id, subject string
	done                 bool
}

func TestRecordClaudeTask(t *testing.T) {
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		events   []taskEvent
		wantOpen []string
		wantDone int
		wantErr  bool
		// runFirst sets the first event's task running after it (update_task, as a machine
		// sharing the workflow does under its claim).
		runFirst bool
	}{
		{name: "created tasks are open, in order",
			events:   []taskEvent{{"sess-aaaa-1", "1", "write the parser", false}, {"sess-aaaa-1", "2", "test it", false}},
			wantOpen: []string{"write the parser", "test it"}},
		{name: "a completed one is no longer open",
			events:   []taskEvent{{"sess-aaaa-1", "1", "write the parser", false}, {"sess-aaaa-1", "2", "test it", false}, {"sess-aaaa-1", "1", "write the parser", true}},
			wantOpen: []string{"test it"}, wantDone: 1},
		{name: "the same subject created again by a new session is the same task",
			events:   []taskEvent{{"sess-aaaa-1", "1", "write the parser", false}, {"sess-bbbb-2", "1", "Write the parser", false}},
			wantOpen: []string{"write the parser"}},
		{name: "a new session completes a task by its subject",
			events:   []taskEvent{{"sess-aaaa-1", "3", "write the parser", false}, {"sess-bbbb-2", "1", "write the parser", true}},
			wantDone: 1},
		{name: "same id in two sessions: two tasks",
			events:   []taskEvent{{"sess-aaaa-1", "1", "one", false}, {"sess-bbbb-2", "1", "two", false}},
			wantOpen: []string{"one", "two"}},
		{name: "a completion never created is recorded done",
			events:   []taskEvent{{"sess-aaaa-1", "7", "already done", true}},
			wantDone: 1},
		{name: "completed twice changes nothing the second time",
			events:   []taskEvent{{"sess-aaaa-1", "1", "x", false}, {"sess-aaaa-1", "1", "x", true}, {"sess-aaaa-1", "1", "x", true}},
			wantDone: 1},
		{name: "the same subject twice in one session is two tasks",
			events:   []taskEvent{{"sess-aaaa-1", "1", "run the tests", false}, {"sess-aaaa-1", "2", "run the tests", false}, {"sess-aaaa-1", "1", "run the tests", true}},
			wantOpen: []string{"run the tests"}, wantDone: 1},
		{name: "another session's running task is not completed by its subject",
			events:   []taskEvent{{"sess-aaaa-1", "1", "write the parser", false}, {"sess-bbbb-2", "1", "write the parser", true}},
			runFirst: true, wantOpen: []string{"write the parser (running)"}, wantDone: 1},
		{name: "another session's running task is not taken by a creation",
			events:   []taskEvent{{"sess-aaaa-1", "1", "write the parser", false}, {"sess-bbbb-2", "1", "write the parser", false}},
			runFirst: true, wantOpen: []string{"write the parser (running)", "write the parser"}},
		{name: "no task id is refused",
			events:  []taskEvent{{"sess-aaaa-1", "", "x", false}},
			wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startedApex(t)
			var err error
			for i, ev := range tc.events {
				var res workflow.Result
				task := workflow.ClaudeTask{SessionID: ev.session, TaskID: ev.id, Subject: ev.subject}
				res, err = workflow.RecordClaudeTask(r, task, ev.done, now, workflow.Actor{SessionID: ev.session})
				if err != nil {
					break
				}
				if res.Changed {
					r = res.Record
				}
				if i == 0 && tc.runFirst {
					if res, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: workflow.ClaudeTaskID(task), Status: workflow.TaskRunning}, now, workflow.Actor{SessionID: ev.session}); err != nil {
						t.Fatal(err)
					}
					r = res.Record
				}
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %t", err, tc.wantErr)
			}
			if got := workflow.OpenTasks(r, false); !slices.Equal(got, tc.wantOpen) {
				t.Errorf("open tasks %q, want %q", got, tc.wantOpen)
			}
			if got := workflow.CountTasks(r, "").Done; got != tc.wantDone {
				t.Errorf("%d done, want %d", got, tc.wantDone)
			}
			for _, task := range r.Tasks {
				if task.Phase != "analyze" || task.Attempts != 0 {
					t.Errorf("task %+v: want phase analyze and no failed attempts", task)
				}
			}
		})
	}
}

func TestRecordClaudeTaskNeedsActive(t *testing.T) {
	r := startedApex(t)
	r.Status = workflow.StatusCompleted
	if _, err := workflow.RecordClaudeTask(r, workflow.ClaudeTask{TaskID: "1", Subject: "x"}, false, time.Now(), workflow.Actor{}); err == nil {
		t.Fatal("a task was recorded on a completed workflow")
	}
}

func TestOpenTasksNamesOtherPhases(t *testing.T) {
	r := startedApex(t)
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	res, err := workflow.RecordClaudeTask(r, workflow.ClaudeTask{SessionID: "s1", TaskID: "1", Subject: "read the code"}, false, now, workflow.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Record
	res, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: "own-task", Status: workflow.TaskRunning, Note: "by the MCP tool"}, now, workflow.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	r = at(res.Record, "plan")
	// One parenthesis per task, however much it says.
	want := []string{"read the code (phase analyze)", "own-task: by the MCP tool (running, phase analyze)"}
	if got := workflow.OpenTasks(r, false); !slices.Equal(got, want) {
		t.Errorf("OpenTasks = %q, want %q", got, want)
	}
	want[1] = "own-task: by the MCP tool (running when its session ended, phase analyze)"
	if got := workflow.OpenTasks(r, true); !slices.Equal(got, want) {
		t.Errorf("OpenTasks(ended) = %q, want %q", got, want)
	}
}

// Finished mirrored tasks are capped (oldest dropped first); open ones and the workflow's own
// tasks are never dropped.
func TestRecordClaudeTaskPrunesDone(t *testing.T) {
	r := startedApex(t)
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "own", Status: workflow.TaskRunning}, now, workflow.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Record
	record := func(id string, done bool) {
		t.Helper()
		res, err := workflow.RecordClaudeTask(r, workflow.ClaudeTask{SessionID: "s1", TaskID: id, Subject: "task " + id}, done, now, workflow.Actor{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed {
			r = res.Record
		}
	}
	record("open", false)
	for i := range 60 {
		record(strconv.Itoa(i), true)
	}
	c := workflow.CountTasks(r, "")
	if c.Done != 50 || c.Pending != 1 || c.Running != 1 {
		t.Errorf("counts %+v, want 50 done, the open one and the workflow's own", c)
	}
	id := func(task string) string {
		return workflow.ClaudeTaskID(workflow.ClaudeTask{SessionID: "s1", TaskID: task})
	}
	if r.Tasks[0].ID != "own" || r.Tasks[1].ID != id("open") || r.Tasks[2].ID != id("10") {
		t.Errorf("kept %s, %s, %s first; want own, %s, %s", r.Tasks[0].ID, r.Tasks[1].ID, r.Tasks[2].ID, id("open"), id("10"))
	}
}

// The id named the session by its first 8 characters, which sequential session ids share
// ("…-000000000001", "…-000000000002"): their tasks had one id, and one session's events
// changed the other's tasks. It names it by 8 hex digits of a hash of the whole id now, valid
// UTF-8 whatever the session id holds.
func TestClaudeTaskIDTellsSessionsApart(t *testing.T) {
	ids := map[string]string{}
	for _, session := range []string{
		"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
		"0f3e9a7c-1b2d-4e5f-8a9b-0c1d2e3f4a5b", "日本語のセッション", "ab\U0001F680cdef", "abcdefg\u00e9",
	} {
		got := workflow.ClaudeTaskID(workflow.ClaudeTask{SessionID: session, TaskID: " 1 "})
		hash, ok := strings.CutSuffix(strings.TrimPrefix(got, workflow.ClaudeTaskPrefix), "-1")
		if !ok || len(hash) != 8 || strings.Trim(hash, "0123456789abcdef") != "" || !utf8.ValidString(got) {
			t.Errorf("ClaudeTaskID(session %q) = %q, want claude-<8 hex digits>-1", session, got)
		}
		if other, seen := ids[got]; seen {
			t.Errorf("sessions %q and %q both give %s", other, session, got)
		}
		ids[got] = session
	}
	if got := workflow.ClaudeTaskID(workflow.ClaudeTask{SessionID: " \t", TaskID: "1"}); got != "claude-nosession-1" {
		t.Errorf("ClaudeTaskID(no session) = %q, want claude-nosession-1", got)
	}
}

// Ids an earlier version stored (the session id's first 8 bytes, cut back to a whole
// character, then the task's number) are still the session's own: its events find its tasks
// there, its list follows them, and no report tells them as an earlier session's.
func TestEarlierVersionsClaudeTaskIDsStayTheSessions(t *testing.T) {
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	for _, c := range []struct{ session, prefix string }{
		{"0f3e9a7c-1b2d-4e5f-8a9b-0c1d2e3f4a5b", "claude-0f3e9a7c-"},
		{"日本語のセッション", "claude-日本-"},
		{"ab\U0001F680cdef", "claude-ab\U0001F680cd-"},
		{"abcdefg\u00e9", "claude-abcdefg-"},
	} {
		r := startedApex(t)
		for _, k := range []struct{ id, note string }{{"1", "write the parser"}, {"2", "drop the cache"}, {"x", "not a number"}} {
			res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: c.prefix + k.id, Status: workflow.TaskPending, Note: k.note}, now, workflow.Actor{})
			if err != nil {
				t.Fatal(err)
			}
			r = res.Record
		}
		if n := workflow.EarlierClaudeTasks(r, c.session); n != 1 {
			t.Errorf("session %q: %d earlier session's tasks, want 1 (%sx, not a number)", c.session, n, c.prefix)
		}
		own := workflow.OwnClaudeTasks(r, c.session, workflow.TaskPending)
		if want := map[string]string{c.prefix + "1": "1", c.prefix + "2": "2"}; !maps.Equal(own, want) {
			t.Errorf("session %q: own tasks %v, want %v", c.session, own, want)
		}
		res, err := workflow.RecordClaudeTask(r, workflow.ClaudeTask{SessionID: c.session, TaskID: "1", Subject: "write the parser"}, false, now, workflow.Actor{})
		if err != nil || res.Changed {
			t.Errorf("session %q: its task 1 created again changed %v, %v; want nothing changed", c.session, res.Changed, err)
		}
		res, err = workflow.RecordClaudeTask(r, workflow.ClaudeTask{SessionID: c.session, TaskID: "2", Subject: "drop the cache"}, true, now, workflow.Actor{})
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := workflow.FindTask(res.Record, c.prefix+"2"); !ok || k.Status != workflow.TaskDone || len(res.Record.Tasks) != 3 {
			t.Errorf("session %q: completing its task 2 left %+v; want %s2 done, no task added", c.session, res.Record.Tasks, c.prefix)
		}
	}
}

// A task's subject is cut to 200 characters for its note, and the cut may make a secret of a
// token glued to more text ("ghp_…-x" cut after its body) that the whole subject does not
// hold: the task was refused, named as holding a secret it did not have. It is recorded, its
// note ending before that word.
func TestClaudeTaskSubjectCutMakesNoSecret(t *testing.T) {
	pad := strings.Repeat("word ", 31) // the token's body then ends at the cut, 199 characters
	subject := pad + secrettest.GluedToken(t) + " and more words after it"
	res, err := workflow.RecordClaudeTask(startedApex(t), workflow.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: subject}, false, time.Now(), workflow.Actor{})
	if err != nil {
		t.Fatalf("the task was not recorded: %v", err)
	}
	open := workflow.OpenTasks(res.Record, false)
	if len(open) != 1 || secrets.ScanString(open[0]) != nil || !strings.HasPrefix(open[0], strings.TrimSpace(pad)) {
		t.Errorf("open tasks %q, want one, its note the words before the token, no secret", open)
	}
}

// The report lists a mirrored Claude Code task by its subject, so the subject is what the
// agent (update_task) or a person (cairn task) may give as the id: that adds no second task
// for the same work beside the open one, and the refusal names the id to use. Once the
// mirrored task is finished, the subject is free to be a task of its own.
func TestTaskIDOfAnOpenMirroredTasksSubject(t *testing.T) {
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	by := workflow.Actor{SessionID: "sess-bbbb-2"}
	r := startedApex(t)
	res, err := workflow.RecordClaudeTask(r, workflow.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false, now, workflow.Actor{SessionID: "sess-aaaa-1"})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Record
	id := workflow.ClaudeTaskID(workflow.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1"})
	for _, status := range []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskPending} {
		_, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: "Write the parser", Status: status}, now, by)
		if err == nil || !strings.Contains(err.Error(), "use "+id) {
			t.Fatalf("update_task %s by the subject: %v; want a refusal naming %s", status, err, id)
		}
	}
	running, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskRunning}, now, by)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.UpdateTask(running.Record, workflow.TaskUpdate{ID: "write the parser", Status: workflow.TaskRunning}, now, by); err == nil {
		t.Fatal("a running mirrored task's subject added as a task of its own")
	}
	done, err := workflow.UpdateTask(running.Record, workflow.TaskUpdate{ID: id, Status: workflow.TaskDone}, now, by)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.UpdateTask(done.Record, workflow.TaskUpdate{ID: "write the parser", Status: workflow.TaskRunning}, now, by); err != nil {
		t.Fatalf("the subject of a finished mirrored task as a new task: %v", err)
	}
}

// TestOpenTasksRunningElsewhere: a running task another machine sharing the workflow holds
// under a live claim read "t1 (running)", as this session's own running work, which it would
// go on with beside that machine (and update_task refuses it here). It now says where it runs;
// one with no claim read, which may be this machine's, reads as before.
func TestOpenTasksRunningElsewhere(t *testing.T) {
	r := startedApex(t)
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	for _, id := range []string{"t1", "t2", "t3"} {
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskRunning}, now, workflow.Actor{})
		if err != nil {
			t.Fatal(err)
		}
		r = res.Record
	}
	claims := map[string][3]bool{"t1": {true, false, true}, "t2": {true, true, true}, "t3": {false, false, true}}
	elsewhere := func(task string) (held, lapsed, ok bool) { c := claims[task]; return c[0], c[1], c[2] }
	want := []string{"t1 (running on another machine)", "t2 (running on another machine, whose claim of it lapsed)", "t3 (running)"}
	if got := workflow.OpenTasksExcept(r, true, elsewhere); !slices.Equal(got, want) {
		t.Errorf("OpenTasksExcept = %q, want %q", got, want)
	}
}

// A task Claude Code set back from completed (FollowClaudeTasks) kept the started_at of its
// run, which only recovery's put-back keeps: update_task then took it for a run interrupted by
// a crash or /clear, saying so, and let it go to failed as if that run had been counted as an
// attempt. Reopened, it is put back as the agent's own move to pending puts it: no run stands.
func TestReopenedClaudeTaskHasNoInterruptedRun(t *testing.T) {
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	by := workflow.Actor{SessionID: "sess-aaaa-1"}
	ct := workflow.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}
	id := workflow.ClaudeTaskID(ct)
	r := startedApex(t)
	for _, done := range []bool{false, true} {
		res, err := workflow.RecordClaudeTask(r, ct, done, now, by)
		if err != nil {
			t.Fatal(err)
		}
		r = res.Record
	}
	res, err := workflow.FollowClaudeTasks(r, workflow.ClaudeListChanges{Reopened: []string{id}}, now.Add(time.Minute), by)
	if err != nil || !res.Changed {
		t.Fatalf("FollowClaudeTasks: changed %v, %v", res.Changed, err)
	}
	for _, to := range []workflow.TaskStatus{workflow.TaskDone, workflow.TaskFailed} {
		got, err := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: id, Status: to}, now.Add(2*time.Minute), by)
		var se *workflow.TaskStatusError
		if !errors.As(err, &se) || se.From != workflow.TaskPending || len(got.Warnings) != 0 {
			t.Errorf("update_task %s of the reopened task: %v, warnings %q; want it refused as a pending task's, which has no run to end", to, err, got.Warnings)
		}
	}
	if k, _ := workflow.FindTask(res.Record, id); !k.StartedAt.IsZero() || !k.CompletedAt.IsZero() {
		t.Errorf("reopened task %+v keeps the times of its finished run", k)
	}
}
