package e2e

// Session 14's behaviour in the real client: open tasks mirrored from an earlier session's
// list, the bound on a workflow's tasks, the Stop hook's failure said once per session,
// resume_check's task counts, and the one next step of a report with nothing on record.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// earlierTasksNotice is how the report's notice about an earlier session's open tasks begins,
// after its count.
const earlierTasksNotice = " came from an earlier Claude Code session's task list"

// Claude Code's task list is per session. Tasks a first client creates under a workflow are
// still open when a new session (not --continue) starts with an empty list: its report says
// how many came from an earlier session's list. Once that session creates the same subjects
// again, they are its own, and its next start (--resume of the same session) has no notice;
// the open tasks are listed all along and nothing is closed.
func TestCairnEarlierSessionTasksNoticed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	subjects := []string{"write the retry loop", "measure the backoff"}
	tools := []string{cairnPlugin.AllowRule(), "TaskCreate"}
	createBoth := func(marker string) []mockapi.Step {
		return []mockapi.Step{
			mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
				mockapi.ToolUse("TaskCreate", map[string]any{"subject": subjects[0], "description": "wrap upload() in a bounded retry"})).Named(marker + " create 1"),
			mockapi.On(afterToolResult,
				mockapi.ToolUse("TaskCreate", map[string]any{"subject": subjects[1], "description": "time three failures"})).Named(marker + " create 2"),
			mockapi.On(afterToolResult, mockapi.Text("tasks noted")).Named(marker + " end"),
		}
	}
	w.Mock.Script(createBoth("FIRST-TASKS")...)
	first := w.runScript(t, RunOptions{Prompt: "FIRST-TASKS: list the work", AllowedTools: tools})
	requireToolResultsOK(t, first, 2)
	if created := requireHooksOK(t, first, "TaskCreated"); len(created) != 2 {
		t.Fatalf("%d TaskCreated hooks ran, want 2", len(created))
	}

	// A new session: both open tasks are an earlier session's.
	w.Mock.Script(createBoth("SECOND-TASKS")...)
	second := w.run(t, RunOptions{Prompt: "SECOND-TASKS: go on", AllowedTools: tools})
	requireOK(t, second)
	requireScriptUsed(t, w)
	requireToolResultsOK(t, second, 2)
	if second.SessionID() == first.SessionID() {
		t.Fatalf("the second run reused session %s", first.SessionID())
	}
	report := cairnReport(t, second.FirstMain(t))
	if !strings.Contains(report, "notice: 2 open tasks"+earlierTasksNotice) {
		t.Errorf("the new session's report does not say 2 open tasks came from an earlier session:\n%s", report)
	}
	// The step to create them again is Cairn's own, after the fence of stored data.
	ctx := fromSessionStart(t, second.FirstMain(t))
	if _, after, _ := strings.Cut(ctx, "</cairn-state "); strings.Contains(report, "create") ||
		!strings.Contains(after, "Also create again with TaskCreate each open task from the earlier session's list that is still to do.") {
		t.Errorf("the step to create the tasks again is not after the fence, alone:\n%s", ctx)
	}
	for _, s := range subjects {
		if !strings.Contains(report, "\nopen task: "+s+"\n") {
			t.Errorf("the new session's report lacks the open task %q:\n%s", s, report)
		}
	}

	// The same session started again: the tasks are its own now.
	w.Mock.Script(mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("RESUMED-TASKS")), mockapi.Text("ok")).Named("resumed"))
	resumed := w.run(t, RunOptions{Prompt: "RESUMED-TASKS: go on", Resume: second.SessionID()})
	requireOK(t, resumed)
	requireScriptUsed(t, w)
	if resumed.SessionID() != second.SessionID() {
		t.Fatalf("--resume %s ran as session %s", second.SessionID(), resumed.SessionID())
	}
	report = cairnReport(t, resumed.MainRequests()[len(resumed.MainRequests())-1])
	if strings.Contains(report, earlierTasksNotice) {
		t.Errorf("after the session created its tasks again, its report still says they are an earlier session's:\n%s", report)
	}
	for _, s := range subjects {
		if !strings.Contains(report, "\nopen task: "+s+"\n") {
			t.Errorf("the resumed session's report lacks the open task %q:\n%s", s, report)
		}
	}
	st := w.readState(t)
	if len(st.Tasks) != 2 {
		t.Fatalf("the record holds %d tasks, want the 2 (created again, not added): %+v", len(st.Tasks), st.Tasks)
	}
	own := workflow.ClaudeTaskID(engine.ClaudeTask{SessionID: second.SessionID()})
	for _, tk := range st.Tasks {
		if !strings.HasPrefix(tk.ID, own) || tk.Status != "pending" {
			t.Errorf("task %s is %s, want pending under the second session's id (%s…)", tk.ID, tk.Status, own)
		}
	}
}

// A workflow holding the most tasks it may (500) refuses a new one, and a note over
// update_task's 500 characters is refused too: the model reads what failed and what to do,
// nothing changes, and the workflow takes the next write (a transition) as before.
func TestCairnTaskBoundRefusedWorkflowWritable(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	setup := time.Now()
	e := startAt(t, w, time.Now(), engine.StartRequest{Type: "apex", Context: seedContext})
	for i := 1; i <= 500; i++ {
		if _, err := e.UpdateTask(engine.TaskRequest{ID: "t" + strconv.Itoa(i), Status: "pending"}); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	e.Close()
	t.Logf("500 tasks set up in %v", time.Since(setup).Round(time.Millisecond))
	before, tasksBefore := w.readState(t), tasksOf(t, w)
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BOUND-PROMPT")),
			mockapi.ToolUse(cairnTool("update_task"), map[string]any{"id": "t501", "status": "pending", "note": "one more"})).Named("task 501"),
		mockapi.On(afterToolResult, mockapi.ToolUse(cairnTool("update_task"), map[string]any{"id": "t1", "status": "pending", "note": strings.Repeat("€", 501)})).Named("long note"),
		mockapi.On(afterToolResult, mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "plan"})).Named("transition"),
		mockapi.On(afterToolResult, mockapi.Text("moved on")).Named("end"),
	)
	r := w.runScript(t, RunOptions{Prompt: "BOUND-PROMPT: add the task, then move on"})
	m := r.MainRequests()
	read := m[len(m)-1].ToolResults() // what the model reads in its last request
	if len(read) != 3 {
		t.Fatalf("the model reads %d tool results, want 3", len(read))
	}
	t.Logf("the model reads for task 501: %q", read[0].Text)
	for i, want := range []string{
		"task t501 not added: a workflow keeps at most 500 tasks and this one has 500; move an existing task instead, or complete this workflow and start another",
		`update_task was not run (nothing was changed): argument "note" is 501 characters, more than the limit of 500; shorten it (keep long text in a file and pass its path)`,
	} {
		if first := strings.SplitN(read[i].Text, "\n", 2)[0]; !read[i].IsError || first != want {
			t.Errorf("refusal %d: error %v, %q, want %q", i+1, read[i].IsError, first, want)
		}
	}
	if read[2].IsError || !strings.Contains(read[2].Text, "plan") {
		t.Errorf("the transition after the refusals: error %v, %q", read[2].IsError, read[2].Text)
	}
	st := w.readState(t)
	if st.State != "plan" || st.Revision != before.Revision+1 || len(st.Tasks) != 500 || tasksOf(t, w) != tasksBefore {
		t.Errorf("phase %s, revision %d (was %d), %d tasks: want the one transition to plan and the 500 tasks unchanged", st.State, st.Revision, before.Revision, len(st.Tasks))
	}
}

// State that cannot be read stays so until someone acts: the Stop hook tells the user once
// per session (two turns, one message; the mark is in this World's own XDG_CACHE_HOME), and a
// new session is told again.
func TestCairnStopFailureSaidOncePerSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.cairn(t, "start", "apex", seedContext)
	journals, _ := filepath.Glob(filepath.Join(w.stateDir(), "journal", "*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journal files %v, want one", journals)
	}
	if err := os.WriteFile(filepath.Join(w.stateDir(), "workflow-state.json"), []byte(`{"version":"2.0","workflow_id":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journals[0], []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(w.Home, ".cache", "cairn", "stop-failure-said")

	told := func(r *Run) []string {
		var msgs []string
		for _, h := range requireHooksOK(t, r, "Stop") {
			if out := parseHookOutput(t, h); out.SystemMessage != "" {
				msgs = append(msgs, out.SystemMessage)
			}
		}
		return msgs
	}
	r := w.run(t, RunOptions{Inputs: []string{"TURN-ONE: hello", "TURN-TWO: and again"}})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	if n := len(requireHooksOK(t, r, "Stop")); n != 2 {
		t.Fatalf("%d Stop hooks ran in two turns, want 2", n)
	}
	msgs := told(r)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "Cairn: the end-of-turn check failed: a workflow is on record but cannot be read: ") {
		t.Errorf("two turns on unreadable state told the user %q, want one end-of-turn failure", msgs)
	}
	if got := readFile(t, mark); !strings.HasPrefix(got, r.SessionID()+" ") {
		t.Errorf("the mark in the World's cache is %q, want this session's", got)
	}

	next := w.run(t, RunOptions{Prompt: "NEW-SESSION: hello"})
	requireOK(t, next)
	if next.SessionID() == r.SessionID() {
		t.Fatalf("the new run reused session %s", r.SessionID())
	}
	if again := told(next); len(again) != 1 || len(msgs) == 1 && again[0] != msgs[0] {
		t.Errorf("the new session's Stop told the user %q, want the same failure again (%q)", again, msgs)
	}
}

// resume_check's result as the model reads it (Claude Code passes the structured content,
// not the text) holds the task counts the report gives. With 200 blocking violations of 2,000
// characters and 20 open tasks it is still one result the model reads, not Claude Code's note
// that the output went to a file: its lists keep their first items, and a warning says what
// each holds of how many.
func TestCairnResumeCheckTaskCounts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	e := startAt(t, w, time.Now(), engine.StartRequest{Type: "apex", Context: seedContext})
	updates := []engine.TaskRequest{
		{ID: "t1", Status: "running"}, {ID: "t2", Status: "running"}, {ID: "t3", Status: "running"},
		{ID: "t1", Status: "done"}, {ID: "t2", Status: "done"}, {ID: "t3", Status: "failed"},
	}
	for i := range 20 {
		updates = append(updates, engine.TaskRequest{ID: fmt.Sprintf("open%02d", i), Status: "pending"})
	}
	for _, u := range updates {
		if _, err := e.UpdateTask(u); err != nil {
			t.Fatal(err)
		}
	}
	var vs []engine.Violation
	for i := range 200 {
		vs = append(vs, engine.Violation{Code: fmt.Sprintf("V-%03d", i), Severity: "HIGH", Details: strings.Repeat("d", 2000)})
	}
	if _, err := e.SetEnforcement(vs); err != nil {
		t.Fatal(err)
	}
	e.Close()
	const counts = "2 done, 20 pending, 1 failed (failed: t3)"
	// What a person reads: cairn status's Tasks line.
	if out := w.cairn(t, "status"); !regexp.MustCompile(`(?m)^Tasks: +` + regexp.QuoteMeta(counts) + `$`).MatchString(out) {
		t.Fatalf("cairn status lacks the Tasks line %q:\n%s", counts, out)
	}
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("COUNTS-PROMPT")),
			mockapi.ToolUse(cairnTool("resume_check"), map[string]any{})).Named("resume_check"),
		mockapi.On(afterToolResult, mockapi.Text("ok")).Named("end the turn"),
	)
	r := w.runScript(t, RunOptions{Prompt: "COUNTS-PROMPT: where were we?"})
	m := r.MainRequests()
	read := m[len(m)-1].ToolResults()
	if len(read) != 1 || read[0].IsError {
		t.Fatalf("the model reads %+v, want one resume_check result", read)
	}
	t.Logf("the model reads from resume_check (%d characters): %.600s", len(read[0].Text), read[0].Text)
	if !strings.Contains(read[0].Text, `"tasks":"`+counts+`"`) {
		t.Errorf("resume_check as the model reads it lacks the task counts %q: %s", counts, tail(read[0].Text, 2000))
	}
	// One result, its lists cut to their first items, and the warning naming what was left out.
	var got struct {
		Blocking  []engine.Violation `json:"blocking"`
		OpenTasks []string           `json:"open_tasks"`
		Warnings  []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(read[0].Text), &got); err != nil {
		t.Fatalf("resume_check did not reach the model as its structured content (%d characters): %v\n%s", len(read[0].Text), err, tail(read[0].Text, 2000))
	}
	if n := len(got.Blocking); n == 0 || n == 200 || got.Blocking[0].Code != "V-000" {
		t.Errorf("blocking holds %d violations as the model reads it, want the first ones, from V-000", n)
	}
	warnings := strings.Join(got.Warnings, "\n")
	for _, want := range []string{
		fmt.Sprintf("blocking holds the first %d of 200; the others did not fit in one result.", len(got.Blocking)),
		fmt.Sprintf("open_tasks holds the first %d of 20; the others did not fit in one result.", len(got.OpenTasks)),
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("the warnings the model reads lack %q: %q", want, got.Warnings)
		}
	}
}

// With nothing on record but a warning (a project definition that does not read), the
// SessionStart context the model reads ends with exactly one next step, saying there is
// nothing to resume.
func TestCairnNothingOnRecordOneNextStep(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.writeDefinition(t, "review.md", "---\nname: review\nphases: [read, [broken\n---\n")
	r := w.run(t, RunOptions{Prompt: "WARNED-PROMPT: hello"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	ctx := fromSessionStart(t, r.FirstMain(t))
	t.Logf("the model reads at session start:\n%.1500s", ctx)
	report := cairnReport(t, r.FirstMain(t))
	if !strings.Contains(report, "review.md") {
		t.Errorf("the report does not carry the warning about review.md:\n%s", report)
	}
	end := strings.Index(ctx, "\n</cairn-state ")
	if end < 0 {
		t.Fatalf("no fence end in the SessionStart context")
	}
	_, after, _ := strings.Cut(ctx[end+1:], "\n")
	// Cairn's context ends there: the hook's context is followed by a blank line.
	// No pointer to resume_check, which would only say it again.
	next := "Next: Nothing to resume; go on with the user's request."
	if !strings.HasPrefix(after, next+"\n\n") {
		t.Errorf("what follows the report is %q, want the one line %q and the end of Cairn's context", tail(after, 300), next)
	}
	if n := strings.Count(ctx, "Next:"); n != 1 {
		t.Errorf("the SessionStart context holds %d Next lines, want 1", n)
	}
}

// A new session is told once that an open task came from an earlier session's task list;
// after that the task stands as the workflow's own. The same session compacted, its
// resume_check, and a later new session (whose Claude Code task list is empty again) list the
// task as open without the notice, and nothing closes it.
func TestCairnEarlierSessionTasksToldOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	const subject = "write the retry loop"
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-TASKS")),
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": subject, "description": "wrap upload() in a bounded retry"})).Named("create"),
		mockapi.On(afterToolResult, mockapi.Text("task noted")).Named("end"),
	)
	first := w.runScript(t, RunOptions{Prompt: "FIRST-TASKS: list the work", AllowedTools: []string{cairnPlugin.AllowRule(), "TaskCreate"}})
	requireToolResultsOK(t, first, 1)

	told := "notice: 1 open task" + earlierTasksNotice
	listed := "\nopen task: " + subject + "\n"
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-TASKS")), mockapi.Text("ok")).Named("second"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-COMPACT")),
			mockapi.ToolUse(cairnTool("resume_check"), map[string]any{})).Named("resume_check"),
		mockapi.On(afterToolResult, mockapi.Text("checked")).Named("checked"),
	)
	second := w.run(t, RunOptions{Inputs: []string{"SECOND-TASKS: go on", "/compact", "AFTER-COMPACT: go on"}})
	requireOK(t, second)
	requireScriptUsed(t, w)
	if second.SessionID() == first.SessionID() {
		t.Fatalf("the second run reused session %s", first.SessionID())
	}
	before := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-TASKS")))
	after := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-COMPACT")))
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("%d requests before /compact and %d after, want 1 each", len(before), len(after))
	}
	if report := cairnReport(t, before[0]); !strings.Contains(report, told) || !strings.Contains(report, listed) {
		t.Errorf("the new session's report does not tell of the earlier session's task once:\n%s", report)
	}
	if report := cairnReport(t, after[0]); strings.Contains(report, earlierTasksNotice) || !strings.Contains(report, listed) {
		t.Errorf("after /compact the report tells of the earlier session's task again, or does not list it:\n%s", report)
	}
	if rc := requireToolResultsOK(t, second, 1)[0]; strings.Contains(rc.Text, earlierTasksNotice) || !strings.Contains(rc.Text, subject) {
		t.Errorf("resume_check tells of the earlier session's task again, or does not list it: %s", rc.Text)
	}

	w.Mock.Script(mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("THIRD-TASKS")), mockapi.Text("ok")).Named("third"))
	third := w.run(t, RunOptions{Prompt: "THIRD-TASKS: go on"})
	requireOK(t, third)
	requireScriptUsed(t, w)
	if report := cairnReport(t, third.FirstMain(t)); strings.Contains(report, earlierTasksNotice) || !strings.Contains(report, listed) {
		t.Errorf("a later new session is told again, or the task is not listed:\n%s", report)
	}
	if st := w.readState(t); len(st.Tasks) != 1 || st.Tasks[0].Status != "pending" {
		t.Errorf("tasks %+v, want the one task still pending", st.Tasks)
	}
}

// Two clients in one project: while a running client owns the workflow (here this test
// process, which changed it just now), a second session's own task list stays its own. Its
// TaskCreated hook mirrors nothing into the workflow and says why on stderr; the workflow
// keeps its owner and holds no task.
func TestCairnTasksBesideALiveOwnerNotMirrored(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	env := map[string]string{"HOME": w.Home, "CLAUDE_PROJECT_DIR": w.Project}
	owner, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }, WorkDir: w.Project,
		SessionID: "owner-session", PID: os.Getpid(), Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Start(engine.StartRequest{Type: "apex", Context: seedContext}); err != nil {
		t.Fatal(err)
	}
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BESIDE-TASKS")),
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": "fix the README typo", "description": "unrelated to the workflow"})).Named("create"),
		mockapi.On(afterToolResult, mockapi.Text("task noted")).Named("end"),
	)
	r := w.runScript(t, RunOptions{Prompt: "BESIDE-TASKS: a quick chore", AllowedTools: []string{cairnPlugin.AllowRule(), "TaskCreate"}})
	requireToolResultsOK(t, r, 1)
	created := requireHooksOK(t, r, "TaskCreated")
	if len(created) != 1 || !strings.Contains(created[0].Stderr, "belongs to another live session") {
		t.Errorf("TaskCreated hooks %+v, want one that says the task is kept out of the live owner's workflow", created)
	}
	if st := w.readState(t); len(st.Tasks) != 0 || st.Owner == nil || st.Owner.SessionID != "owner-session" {
		t.Errorf("tasks %+v, owner %+v: want no task and the owner kept", st.Tasks, st.Owner)
	}
}

// A client runs one session at a time: what its session before /clear wrote (here a task its
// TaskCreated hook mirrored after the last Cairn call) is not another session's change, and
// the first Cairn call after /clear carries no change notice. The MCP server acts for the new
// session.
func TestCairnNoNoticeOfOwnClientAfterClear(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BEFORE-CLEAR")),
			mockapi.ToolUse(cairnTool("get_vars"), map[string]any{})).Named("vars before"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": "write the retry loop", "description": "wrap upload() in a bounded retry"})).Named("create"),
		mockapi.On(afterToolResult, mockapi.Text("task noted")).Named("end before"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-CLEAR")),
			mockapi.ToolUse(cairnTool("get_vars"), map[string]any{})).Named("vars after"),
		mockapi.On(afterToolResult, mockapi.Text("ok")).Named("end after"),
	)
	r := w.run(t, RunOptions{Inputs: []string{"BEFORE-CLEAR: list the work", "/clear", "AFTER-CLEAR: go on"},
		AllowedTools: []string{cairnPlugin.AllowRule(), "TaskCreate"}})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	requireScriptUsed(t, w)
	results := requireToolResultsOK(t, r, 3)
	if got := results[2].Text; strings.Contains(got, "Notice:") {
		t.Errorf("the first call after /clear reports its own client's earlier session as another: %s", got)
	}
	inits := r.Inits()
	if st := w.readState(t); len(inits) < 2 || len(st.Tasks) != 1 || st.Owner == nil || st.Owner.SessionID != inits[0].SessionID {
		t.Errorf("tasks %+v, owner %+v: want the task mirrored by the session before /clear", st.Tasks, st.Owner)
	}
}
