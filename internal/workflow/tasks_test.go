package workflow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestTaskMachine(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := walk(t, def, mustStart(t, def), "architecture", "implementation")
	statuses := []workflow.TaskStatus{workflow.TaskPending, workflow.TaskRunning, workflow.TaskDone, workflow.TaskFailed}
	allowed := map[[2]workflow.TaskStatus]bool{
		{"pending", "running"}: true,
		{"running", "done"}:    true, {"running", "failed"}: true, {"running", "pending"}: true,
		{"failed", "pending"}: true, {"failed", "running"}: true,
	}
	// Reach each status by a legal path, then try every move from it.
	paths := map[workflow.TaskStatus][]workflow.TaskStatus{
		"pending": {"pending"},
		"running": {"pending", "running"},
		"done":    {"pending", "running", "done"},
		"failed":  {"pending", "running", "failed"},
	}
	for _, from := range statuses {
		for _, to := range statuses {
			t.Run(string(from)+"->"+string(to), func(t *testing.T) {
				r := base
				clock := t0.Add(time.Hour)
				for _, s := range paths[from] {
					clock = clock.Add(time.Minute)
					res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: s}, clock, alice)
					if err != nil {
						t.Fatalf("setup %s: %v", s, err)
					}
					r = res.Record
				}
				before := r.Tasks[0]
				res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: to}, clock.Add(time.Minute), alice)
				switch {
				case from == to:
					if err != nil || res.Changed {
						t.Fatalf("same status: changed=%v err=%v", res.Changed, err)
					}
				case allowed[[2]workflow.TaskStatus{from, to}]:
					if err != nil {
						t.Fatal(err)
					}
					got := res.Record.Tasks[0]
					wantAttempts := before.Attempts
					if from == "running" && (to == "failed" || to == "pending") {
						wantAttempts++
					}
					if got.Status != to || got.Attempts != wantAttempts || !got.UpdatedAt.Equal(clock.Add(time.Minute)) {
						t.Fatalf("task %+v (attempts want %d)", got, wantAttempts)
					}
					if to == "running" && !got.StartedAt.Equal(clock.Add(time.Minute)) {
						t.Fatal("started_at not stamped")
					}
					if (to == "done" || to == "failed") && !got.CompletedAt.Equal(clock.Add(time.Minute)) {
						t.Fatal("completed_at not stamped")
					}
				default:
					var te *workflow.TaskStatusError
					if !errors.As(err, &te) || te.From != from || te.To != to {
						t.Fatalf("err = %v, want *TaskStatusError", err)
					}
				}
			})
		}
	}
}

func TestTaskAddAndDetails(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture", "implementation")
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "task-001", Status: "running", Output: "memory/reports/t1.json", Note: "spawn\nexecutor"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	tk := res.Record.Tasks[0]
	if tk.Phase != "implementation" || tk.Output != "memory/reports/t1.json" || tk.Note != "spawn executor" || !tk.StartedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%+v", tk)
	}
	// Work finished before its task was added is one call, not two: the task is added done,
	// its run starting and ending then. Failed is no way for a task to start.
	nd, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t2", Status: "done", Output: "t2.md"}, t0, alice)
	if err != nil || nd.Subject != "task t2 done" {
		t.Fatalf("new done task: %+v, %v", nd, err)
	}
	if tk := nd.Record.Tasks[0]; tk.Status != workflow.TaskDone || tk.Output != "t2.md" || !tk.StartedAt.Equal(t0) || !tk.CompletedAt.Equal(t0) || tk.Phase != "implementation" {
		t.Fatalf("new done task: %+v", tk)
	}
	_, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t3", Status: "failed"}, t0, alice)
	if err == nil || !strings.Contains(err.Error(), "starts as pending, running or done") {
		t.Fatalf("new failed task: %v", err)
	}
	done, _ := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "task-001", Status: "done"}, t0.Add(2*time.Hour), alice)
	_, err = workflow.UpdateTask(done.Record, workflow.TaskUpdate{ID: "task-001", Status: "running"}, t0, alice)
	if err == nil || !strings.Contains(err.Error(), "done is final") {
		t.Fatalf("done->running: %v", err)
	}
	// Same status, new output: a change.
	out, err := workflow.UpdateTask(done.Record, workflow.TaskUpdate{ID: "task-001", Status: "done", Output: "other.json"}, t0.Add(3*time.Hour), alice)
	if err != nil || !out.Changed || out.Record.Tasks[0].Output != "other.json" {
		t.Fatalf("%v %+v", err, out)
	}
	for _, u := range []workflow.TaskUpdate{{ID: "", Status: "pending"}, {ID: "a\nb", Status: "pending"}, {ID: "x", Status: "blocked"}} {
		if _, err := workflow.UpdateTask(r, u, t0, alice); err == nil {
			t.Errorf("%+v accepted", u)
		}
	}
	c := workflow.CountTasks(done.Record, "")
	if c != (workflow.TaskCounts{Done: 1}) {
		t.Fatalf("%+v", c)
	}
}

// A new task's id with a control or invisible character would read as another task's ("t1"
// and "t1" with a zero-width space), and a line or paragraph separator breaks the line it is
// shown on: refused, as update_task's pattern refuses it. One stored so by an older Cairn
// stays updatable.
func TestLookAlikeTaskIDIsRefused(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	for _, id := range []string{"t1\u200b", "t1\u202e", "t\x1b[2J1", "t1\xff", "t1\u00ad", "t1\u2028t2", "t\u20291"} {
		if _, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: "running"}, t0, alice); err == nil ||
			!strings.Contains(err.Error(), "control or invisible") {
			t.Errorf("new task %q: %v", id, err)
		}
	}
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "run the tests", Status: "running"}, t0, alice)
	if err != nil {
		t.Fatalf("an id with spaces: %v", err)
	}
	old := res.Record
	old.Tasks = append(old.Tasks, workflow.Task{ID: "t2\u200b", Phase: old.State, Status: "running"})
	if _, err := workflow.UpdateTask(old, workflow.TaskUpdate{ID: "t2\u200b", Status: "done"}, t0, alice); err != nil {
		t.Fatalf("a stored look-alike id: %v", err)
	}
}

// TestMixedScriptTaskIDIsRefused: a new task's id with a word mixing Latin, Cyrillic or Greek
// letters ("tаsk-1" with a Cyrillic а) reads as another task's id ("task-1"), so two machines
// would each claim and run what reads as one task: refused. Words each in one alphabet, side by
// side, are ids like any other.
func TestMixedScriptTaskIDIsRefused(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	for _, tc := range []struct {
		id      string
		refused bool
	}{
		{"tаsk-1", true},          // Cyrillic а in a Latin word
		{"саt", true},             // Cyrillic с and а, then a Latin t
		{"ΑPI-2", true},           // Greek Alpha in a Latin word
		{"write the tеsts", true}, // Cyrillic е in the last word
		{"задача-1", false},       // all Cyrillic
		{"API-задача", false},     // one alphabet per word
		{"café naïve", false},     // Latin with accents
		{"αβ-3", false},           // all Greek
	} {
		_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: tc.id, Status: "running"}, t0, alice)
		if got := err != nil && strings.Contains(err.Error(), "mixes"); got != tc.refused {
			t.Errorf("new task %q: %v, want refused %v", tc.id, err, tc.refused)
		}
	}
}

// TestDetachedAccentTaskIDIsRefused: a new task's id writing an accent as a combining mark
// after its letter ("cafe" and U+0301) reads as the id with the accented letter as one
// character ("café") but is another, so two machines would each claim and run what reads as
// one task: refused. Accented letters as one character, and marks of alphabets that have no
// such letters (Devanagari), are ids like any other.
func TestDetachedAccentTaskIDIsRefused(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	for _, tc := range []struct {
		id      string
		refused bool
	}{
		{"cafe\u0301", true},                      // e and a combining acute
		{"nai\u0308ve-2", true},                   // i and a combining diaeresis
		{"\u0439\u0442", false},                   // Cyrillic й as one character
		{"\u0438\u0306\u0442", true},              // Cyrillic и and a combining breve
		{"caf\u00e9", false},                      // é as one character
		{"\u0915\u093e\u0930\u094d\u092f", false}, // Devanagari, its virama a combining mark
	} {
		_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: tc.id, Status: "running"}, t0, alice)
		if got := err != nil && strings.Contains(err.Error(), "accent"); got != tc.refused {
			t.Errorf("new task %q: %v, want refused %v", tc.id, err, tc.refused)
		}
	}
}

// TestTasksNeverFillTheRecord: a record is at most 1 MiB and every write rewrites it whole, so
// tasks that filled it would make every write fail, transitions included. Adding tasks with
// the largest fields the domain takes (and characters JSON writes as six bytes) stops, with
// an error that says why, long before that; the record stays writable and its tasks movable.
func TestTasksNeverFillTheRecord(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture")
	clock := t0.Add(time.Hour)
	note := strings.Repeat("<", 500)
	output := strings.Repeat("&", 1024)
	var refused error
	for i := 0; i < 5000 && refused == nil; i++ {
		clock = clock.Add(time.Second)
		id := fmt.Sprintf("t%d-%s", i, strings.Repeat("x", 100))
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskRunning, Note: note, Output: output}, clock, alice)
		if err != nil {
			refused = err
			break
		}
		r = res.Record
	}
	if refused == nil {
		t.Fatalf("5000 tasks of the largest size were all taken")
	}
	if msg := refused.Error(); !strings.Contains(msg, "not added") || !strings.Contains(msg, "complete this workflow") {
		t.Errorf("refusal does not say what failed and what to do: %v", refused)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > strictjson.MaxSize/2 {
		t.Errorf("record is %d bytes at the first refusal: tasks take more than half of the %d a record may hold", len(data), strictjson.MaxSize)
	}
	// The tasks already there still move, and so does the workflow.
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: r.Tasks[0].ID, Status: workflow.TaskDone}, clock.Add(time.Minute), alice)
	if err != nil || !res.Changed {
		t.Fatalf("moving a task at the cap: changed=%v err=%v", res.Changed, err)
	}
}

// TestTaskCountCap: a workflow keeps at most 500 tasks. A 501st is refused with what to do;
// a record stored with more (an older Cairn took them) still loads its tasks' moves.
func TestTaskCountCap(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture")
	clock := t0.Add(time.Hour)
	for i := range 600 {
		r.Tasks = append(r.Tasks, workflow.Task{ID: fmt.Sprintf("t%d", i), Phase: r.State, Status: workflow.TaskPending, UpdatedAt: clock})
	}
	_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "new", Status: workflow.TaskPending}, clock, alice)
	if err == nil || !strings.Contains(err.Error(), "500 tasks") {
		t.Fatalf("a new task past the cap: %v, want a refusal that names the cap", err)
	}
	for _, s := range []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskDone} {
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t599", Status: s, Note: "still movable"}, clock, alice)
		if err != nil {
			t.Fatalf("moving a stored task of a record over the cap to %s: %v", s, err)
		}
		r = res.Record
	}
}

// TestTaskFieldCaps: a note over 500 characters or an output over 1024 (update_task's
// schema's limits, which the engine counted in bytes), or an id over 128 bytes is refused by
// name, for every caller (the MCP schema bounds them too, the CLI and the hooks did not).
// An id of 128 characters that UTF-8 writes in 384 bytes, which update_task's schema allows,
// was refused as "not valid: use one short line", though it is one line; so was a blank id.
func TestTaskFieldCaps(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture")
	for _, tc := range []struct {
		u    workflow.TaskUpdate
		want string
	}{
		{workflow.TaskUpdate{ID: "t1", Status: workflow.TaskPending, Note: strings.Repeat("x", 501)}, "task t1: the note is 501 characters, the most is 500; nothing was changed"},
		{workflow.TaskUpdate{ID: "t1", Status: workflow.TaskPending, Output: strings.Repeat("a", 1025)}, "output"},
		{workflow.TaskUpdate{ID: strings.Repeat("日", 128), Status: workflow.TaskPending}, "the task id is 384 bytes, the most is 128 bytes: use a shorter one"},
		// A blank id is none: it was refused as "not valid: use one short line".
		{workflow.TaskUpdate{ID: "   ", Status: workflow.TaskPending}, "the task id is empty: give the task's id"},
		{workflow.TaskUpdate{ID: "", Status: workflow.TaskPending}, "the task id is empty: give the task's id"},
	} {
		_, err := workflow.UpdateTask(r, tc.u, t0.Add(time.Hour), alice)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s too long: %v, want a refusal naming it", tc.want, err)
		}
	}
	// At the caps, a CJK note of 500 characters and output of 1024 (1,500 and 3,072 bytes) are
	// taken.
	if _, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskPending, Note: strings.Repeat("日", 500), Output: strings.Repeat("日", 1024)}, t0.Add(time.Hour), alice); err != nil {
		t.Errorf("fields at the caps: %v", err)
	}
}

// TestTaskNoteOfOnlyInvisibleCharacters: a note that cleans to nothing (a zero-width space, a
// control character) is no note: it leaves the stored note as it is, as an empty note does,
// rather than wiping it.
func TestTaskNoteOfOnlyInvisibleCharacters(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture")
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning, Note: "keep me"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskDone} {
		res, err = workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "t1", Status: st, Note: "\u200b\x01"}, t0.Add(2*time.Hour), alice)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Record.Tasks[0].Note; got != "keep me" {
			t.Errorf("to %s with an invisible note: note %q, want %q kept", st, got, "keep me")
		}
		if st == workflow.TaskRunning && res.Changed {
			t.Errorf("the same status with an invisible note changed the record")
		}
	}
}

// A task id may hold spaces; a message shows such an id quoted, so that it reads as one id and
// the words after it as the message's.
func TestTaskIDWithSpacesIsQuoted(t *testing.T) {
	r := startedApex(t)
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "write the tests", Status: "finished"}, now, workflow.Actor{})
	if err == nil || !strings.HasPrefix(err.Error(), `task "write the tests": status "finished" is not valid`) {
		t.Errorf("error %v", err)
	}
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "write the tests", Status: workflow.TaskRunning}, now, workflow.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "write the tests", Status: workflow.TaskDone}, now, workflow.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = workflow.UpdateTask(done.Record, workflow.TaskUpdate{ID: "write the tests", Status: workflow.TaskRunning}, now, workflow.Actor{})
	if err == nil || !strings.HasPrefix(err.Error(), `task "write the tests" cannot go from done to running`) {
		t.Errorf("error %v", err)
	}
	_, acts, err := workflow.Recover(res.Record, now, nil, workflow.Actor{})
	if err != nil || len(acts) != 1 || !strings.HasPrefix(acts[0], `task "write the tests" was running with no output`) {
		t.Errorf("recovery said %q (%v)", acts, err)
	}
	if got := workflow.TaskID("t1"); got != "t1" {
		t.Errorf("TaskID(t1) = %s", got)
	}
}

// A pending task that ran may be reported done only when recovery put it back (its run taken
// as interrupted by a crash or /clear, its work possibly finished): the answer says so. A task
// the agent put back itself, from a run it ended or one that failed, has no run that finished
// its work: done is refused as for a task never run, and nothing speaks of a crash.
func TestDoneAfterAPutBack(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := walk(t, def, mustStart(t, def), "architecture", "implementation")
	for _, tc := range []struct {
		name    string
		path    []workflow.TaskStatus // after pending and running; "" is recovery
		allowed bool
	}{
		{"recovery", []workflow.TaskStatus{""}, true},
		{"the agent", []workflow.TaskStatus{workflow.TaskPending}, false},
		{"a failed run", []workflow.TaskStatus{workflow.TaskFailed, workflow.TaskPending}, false},
		{"a failed run, recovered before", []workflow.TaskStatus{"", workflow.TaskRunning, workflow.TaskFailed, workflow.TaskPending}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			clock := t0.Add(time.Hour)
			for _, s := range append([]workflow.TaskStatus{workflow.TaskPending, workflow.TaskRunning}, tc.path...) {
				clock = clock.Add(time.Minute)
				var res workflow.Result
				var err error
				if s == "" {
					res, _, err = workflow.Recover(r, clock, nil, alice)
				} else {
					res, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: s}, clock, alice)
				}
				if err != nil {
					t.Fatalf("setup %q: %v", s, err)
				}
				r = res.Record
			}
			if r.Tasks[0].Status != workflow.TaskPending {
				t.Fatalf("setup left the task %s", r.Tasks[0].Status)
			}
			res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskDone}, clock.Add(time.Minute), alice)
			if !tc.allowed {
				var te *workflow.TaskStatusError
				if !errors.As(err, &te) || err.Error() != "task t1 cannot go from pending to done: allowed next: running" {
					t.Errorf("done = %v, %q; want it refused as for a task never run", err, res.Warnings)
				}
				return
			}
			if err != nil || res.Record.Tasks[0].Status != workflow.TaskDone || !strings.Contains(strings.Join(res.Warnings, "\n"), "after a crash or /clear") {
				t.Errorf("done = %v, %q; want it recorded done, saying recovery had put it back", err, res.Warnings)
			}
		})
	}
}

// A task named again in another letter case (T1 for t1, as a model or a person retyping it
// may) was added as a second task beside the first: two open tasks for one piece of work, the
// first never closed. A new id that differs from a stored one only in letter case is refused,
// naming the stored one; ids that differ otherwise are other tasks.
func TestTaskIDCaseTwinIsRefused(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "write-Tests", Status: workflow.TaskRunning}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	r = res.Record
	for _, id := range []string{"write-tests", "WRITE-TESTS", " Write-Tests "} {
		// Done or failed too: "task write-tests is new and cannot start as done" sent the
		// caller to add the twin, which is then refused.
		for _, st := range []workflow.TaskStatus{workflow.TaskPending, workflow.TaskRunning, workflow.TaskDone, workflow.TaskFailed} {
			_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: st}, t0, alice)
			if err == nil || !strings.Contains(err.Error(), "task write-Tests is on record") {
				t.Errorf("new task %q as %s beside write-Tests: %v", id, st, err)
			}
		}
	}
	if res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "write-tests-2", Status: workflow.TaskPending}, t0, alice); err != nil || len(res.Record.Tasks) != 2 {
		t.Errorf("another id: %v", err)
	}
}

// An output of spaces only names no file: stored, every resume after the task is done warned
// "referenced outputs are missing" about it and asked whether to start fresh, and no file can
// be written at that path to settle it. Refused as transition refuses such an output, the task
// left as it was; the same call without it is taken.
func TestTaskBlankOutputIsRefused(t *testing.T) {
	r := startedApex(t)
	for _, st := range []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskPending} {
		_, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: st, Output: " \t "}, t0, alice)
		if err == nil || !strings.Contains(err.Error(), "task t1: the output path is empty, nothing was changed: name the file the task wrote, or leave the output out") {
			t.Errorf("new task %s with a blank output: %v; want a refusal", st, err)
		}
	}
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskDone, Output: "   "}, t0, alice); err == nil {
		t.Error("done with a blank output: taken; want a refusal")
	}
	done, err := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskDone}, t0, alice)
	if err != nil || done.Record.Tasks[0].Output != "" {
		t.Fatalf("done without an output: %+v, %v", done.Record.Tasks, err)
	}
	// One an earlier Cairn stored so is no output either: nothing the model can write settles
	// a warning about it.
	done.Record.Tasks[0].Output = "   "
	findings := workflow.Check(workflow.CheckInput{Record: done.Record, Now: t0, Exists: func(string) bool { return false }})
	for _, f := range findings {
		if f.Code == workflow.FindingOutputMissing {
			t.Errorf("a task done with a blank output stored: %s", f.Text)
		}
	}
}

// A refusal repeated a task id's invisible characters as they are: "task t1‎ is new and cannot
// start as done" (a left-to-right mark after t1) read as if t1, on record, were new, and its
// step (start it as running) was refused next for the mark. The id is now shown with each such
// character written out, and a new id that holds one is refused for it first.
func TestTaskIDWithInvisibleCharactersIsShownSo(t *testing.T) {
	r := startedApex(t)
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id     string
		status workflow.TaskStatus
		want   string
	}{
		{"t1\u200e", workflow.TaskDone, "control or invisible"},
		{"t1\u200b", workflow.TaskFailed, "control or invisible"},
		{"t1\u200e", "finished", `task "t1\u200e": status "finished" is not valid`},
		{"t1\ufe0f x", "finished", `task "t1\ufe0f x": status "finished" is not valid`},
		{"t1\u3164", "finished", `task "t1\u3164": status "finished" is not valid`},
	} {
		_, err := workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: tc.id, Status: tc.status}, t0, alice)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\u200e\u200b\ufe0f\u3164") {
			t.Errorf("task %q %s: %q; want %q, no invisible character", tc.id, tc.status, err, tc.want)
		}
	}
	if got := workflow.TaskID("tâche \"1\""); got != `"tâche \"1\""` {
		t.Errorf("TaskID of an id with a space, an accent and quotes: %s", got)
	}
}

// A model numbers its tasks afresh in each phase: t1 of plan, given while analyze's t1 is done,
// was refused with "done is final; add a new task to redo the work", which spoke of redoing
// work it never meant and named no id to use, so adding t1 again was refused again. The
// refusal now says whose task t1 is and that a new task needs another id.
func TestFinalTaskOfAnotherPhaseSaysSo(t *testing.T) {
	def := mustDef(t, "apex")
	r := startedApex(t)
	for _, s := range []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskDone} {
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: s}, t0, alice)
		if err != nil {
			t.Fatal(err)
		}
		r = res.Record
	}
	for _, tc := range []struct {
		phase string
		want  string
	}{
		{"analyze", "task t1 cannot go from done to running: done is final; to redo the work, add a task with another id"},
		{"plan", "task t1 is phase analyze's and cannot go from done to running: done is final; for this phase's work, add a task with another id"},
	} {
		at := r
		if tc.phase != at.State {
			at = walk(t, def, r, tc.phase)
		}
		_, err := workflow.UpdateTask(at, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning}, t0.Add(time.Hour), alice)
		if err == nil || err.Error() != tc.want {
			t.Errorf("in %s: %v\nwant %s", tc.phase, err, tc.want)
		}
	}
}

// A running task recovery put back to pending (its run taken as interrupted by a crash or
// /clear, counted as an attempt) reported failed, as the call the interruption cut off would
// have: it was refused ("allowed next: running"), so recording the failure took a run that
// never happened, and a second attempt counted for the one run. It is recorded failed, its
// run counted once. A task the agent put back itself has no run to have failed.
func TestFailedAfterAPutBack(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := walk(t, def, mustStart(t, def), "architecture", "implementation")
	var r *workflow.Record
	at := t0.Add(time.Hour)
	task := tasker(t, &r, &at)
	for _, tc := range []struct {
		name     string
		putBack  func()
		attempts int // after the failed, when taken
	}{
		{"recovery", func() {
			res, _, err := workflow.Recover(r, at, nil, alice)
			if err != nil {
				t.Fatal(err)
			}
			r = res.Record
		}, 1},
		{"the agent", func() { task("t1", workflow.TaskPending) }, 0},
	} {
		r = base
		task("t1", workflow.TaskRunning)
		tc.putBack()
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskFailed}, at.Add(time.Minute), alice)
		if tc.attempts == 0 {
			if err == nil || err.Error() != "task t1 cannot go from pending to failed: allowed next: running" {
				t.Errorf("%s: failed = %v; want it refused as for a task never run", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: failed = %v; want it recorded", tc.name, err)
		}
		got := res.Record.Tasks[0]
		if got.Status != workflow.TaskFailed || got.Attempts != tc.attempts || got.CompletedAt.IsZero() ||
			!strings.Contains(strings.Join(res.Warnings, "\n"), "after a crash or /clear") {
			t.Errorf("%s: %+v, warnings %q; want failed, attempts %d, saying recovery had put it back", tc.name, got, res.Warnings, tc.attempts)
		}
	}
}
