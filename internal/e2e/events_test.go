package e2e

// Issue 16's proof in the real client: Claude Code's own events (its task list, compaction,
// the background memory writers) meet Cairn's hooks, as the pinned CLI really runs them.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// startApex starts an apex workflow in the World's project, as an earlier session would have.
func startApex(t *testing.T, w *World, to ...string) {
	t.Helper()
	startAt(t, w, time.Now(), engine.StartRequest{Type: "apex", Context: seedContext}, to...)
}

// startAt starts a workflow as an earlier session would have at the time at, and moves it
// through the phases to; it returns the engine for more. That session's client recorded it
// at its start, as Cairn's SessionStart hook does, and has exited: without the record, an
// owner with no pid and a recent heartbeat is another live session as far as anyone can tell
// (one on another machine sharing the workflow has none here), and every run's model was told
// to coordinate with it.
func startAt(t *testing.T, w *World, at time.Time, req engine.StartRequest, to ...string) *engine.Engine {
	t.Helper()
	e := engineAt(t, w, at)
	if err := e.RecordSession(engine.Session{SessionID: earlierSession, Source: "startup", PID: storetest.ExitedPID(t), StartedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(req); err != nil {
		t.Fatal(err)
	}
	for _, p := range to {
		if _, err := e.Transition(engine.TransitionRequest{To: p}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// earlierSession is the session startAt's workflow was started by.
const earlierSession = "earlier-session"

// clientRecords are the session records in sessions/ but the earlier session's (startAt's
// client, which has exited): those the test's clients wrote.
func (w *World) clientRecords() []string {
	all, _ := filepath.Glob(filepath.Join(w.stateDir(), "sessions", "*.json"))
	return slices.DeleteFunc(all, func(f string) bool {
		var s engine.Session
		b, err := os.ReadFile(f)
		return err == nil && json.Unmarshal(b, &s) == nil && s.SessionID == earlierSession
	})
}

// twoTasksThen runs a turn (its prompt starting with marker) in which the model creates two
// Claude Code tasks, "write the retry loop" and second, and then sets task 2 to status; every
// task tool must succeed.
func twoTasksThen(t *testing.T, w *World, marker, status, second string) *Run {
	t.Helper()
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": "write the retry loop", "description": "wrap upload() in a bounded retry"})).Named("create 1"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": second, "description": "the second task"})).Named("create 2"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "2", "status": status})).Named(status+" 2"),
		mockapi.On(afterToolResult, mockapi.Text("tasks noted")).Named("end"),
	)
	r := w.runScript(t, RunOptions{Prompt: marker + ": list the work", AllowedTools: []string{cairnPlugin.AllowRule(), "TaskCreate", "TaskUpdate"}})
	requireToolResultsOK(t, r, 3)
	return r
}

// Claude Code keeps its task list per session id, so a new session starts without it. Tasks
// the model creates with TaskCreate reach Cairn's TaskCreated hook and are kept with the
// workflow; the next session's first request lists the open ones, not the completed one.
func TestCairnClaudeTasksSurviveSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	r := twoTasksThen(t, w, "TASKS-PROMPT", "completed", "measure the backoff")
	created := requireHooksOK(t, r, "TaskCreated")
	completed := requireHooksOK(t, r, "TaskCompleted")
	if len(created) != 2 || len(completed) != 1 {
		t.Fatalf("%d TaskCreated and %d TaskCompleted hooks ran, want 2 and 1", len(created), len(completed))
	}
	if !strings.Contains(completed[0].Stderr, "Claude Code task 2 recorded as done in phase analyze") {
		t.Errorf("TaskCompleted stderr %q", completed[0].Stderr)
	}
	for _, h := range append(created, completed...) {
		if strings.TrimSpace(h.Stdout) != "" {
			t.Errorf("%s printed %q; a task hook prints nothing", h.Name, h.Stdout)
		}
	}
	// Claude Code kept its own store; Cairn wrote only its journal and record.
	if own, _ := filepath.Glob(filepath.Join(w.Home, ".claude", "tasks", r.SessionID(), "*.json")); len(own) != 2 {
		t.Errorf("Claude Code's task store holds %v, want its own 2 tasks", own)
	}
	var rec struct {
		Tasks []struct {
			ID, Phase, Status, Note string
		} `json:"tasks"`
	}
	readJSON(t, filepath.Join(w.stateDir(), "workflow-state.json"), &rec)
	if len(rec.Tasks) != 2 || rec.Tasks[0].Status != "pending" || rec.Tasks[1].Status != "done" || rec.Tasks[0].Phase != "analyze" {
		t.Errorf("the record's tasks %+v, want task 1 pending and task 2 done, in phase analyze", rec.Tasks)
	}

	// A new session (a new id: Claude Code's list is empty there) gets the open task in its
	// first request, and not the completed one.
	next := w.run(t, RunOptions{Prompt: "NEXT-PROMPT: go on"})
	requireOK(t, next)
	if next.SessionID() == r.SessionID() {
		t.Fatalf("the second run reused session %s", r.SessionID())
	}
	report := cairnReport(t, next.FirstMain(t))
	if !strings.Contains(report+"\n", "\nopen task: write the retry loop\n") {
		t.Errorf("the new session's report lacks the open task:\n%s", report)
	}
	if strings.Contains(report, "measure the backoff") {
		t.Errorf("the new session's report lists the completed task:\n%s", report)
	}
	// The new session is named after the workflow and phase (sessionTitle), and Claude Code
	// applies it (what the resume picker shows).
	var titles []string
	for _, e := range next.Events {
		var ev struct {
			Title string `json:"title"`
		}
		if e.Type == "system" && e.Subtype == "session_title_changed" && e.Decode(&ev) == nil {
			titles = append(titles, ev.Title)
		}
	}
	if len(titles) != 1 || titles[0] != "Cairn: apex · analyze" {
		t.Errorf("session titles applied %q, want [\"Cairn: apex · analyze\"]", titles)
	}
}

// TaskUpdate to status deleted fires no hook in Claude Code: its task store loses the task's
// file and nothing more. The end of the turn finds the file gone and takes the task out of
// the workflow, so the next session's report does not list a task the model deleted as open,
// while the task it kept stays.
func TestCairnDeletedClaudeTaskNotReported(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	r := twoTasksThen(t, w, "DELETE-PROMPT", "deleted", "drop the cache")
	if n := len(requireHooksOK(t, r, "TaskCreated")); n != 2 {
		t.Fatalf("%d TaskCreated hooks ran, want 2", n)
	}
	if c := r.Hooks("TaskCompleted"); len(c) != 0 {
		t.Fatalf("a deletion fired %d TaskCompleted hooks; this test's premise (no hook) is gone", len(c))
	}
	stops := requireHooksOK(t, r, "Stop")
	if !strings.Contains(stops[len(stops)-1].Stderr, "1 task Claude Code deleted taken out of the workflow") {
		t.Errorf("the Stop hook does not say it took the deleted task out: %q", stops[len(stops)-1].Stderr)
	}

	next := w.run(t, RunOptions{Prompt: "NEXT-PROMPT: go on"})
	requireOK(t, next)
	report := cairnReport(t, next.FirstMain(t))
	if !strings.Contains(report+"\n", "\nopen task: write the retry loop\n") {
		t.Errorf("the new session's report lacks the kept task:\n%s", report)
	}
	if strings.Contains(report, "drop the cache") {
		t.Errorf("the new session's report lists the task the model deleted:\n%s", report)
	}
}

// /compact: the PreCompact hook's anchor is in the compaction request, and the request after
// it carries the resume report again (SessionStart with source compact).
func TestCairnCompactionKeepsPosition(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w, "plan")
	r := w.run(t, RunOptions{Inputs: []string{"BEFORE-COMPACT: read the code", "/compact", "AFTER-COMPACT: go on"}})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	// Claude Code emits no hook_response for PreCompact in stream-json; it reports the hook in
	// /compact's local output instead.
	ran := false
	for _, e := range r.Events {
		raw := string(e.Raw)
		if e.Type == "user" && strings.Contains(raw, "Compacted PreCompact [") && strings.Contains(raw, "] completed successfully: Cairn workflow position") {
			ran = true
		}
	}
	if !ran {
		t.Errorf("/compact's output does not show Cairn's PreCompact hook succeeding")
	}
	compaction := w.Mock.Find(mockapi.IsCompaction)
	if len(compaction) != 1 {
		t.Fatalf("%d compaction requests, want 1", len(compaction))
	}
	text := compaction[0].LastUserText()
	i := strings.Index(text, "Additional Instructions:")
	if i < 0 || !strings.Contains(text[i:], "Cairn workflow position (keep it in the summary): workflow apex-") ||
		!strings.Contains(text[i:], "phase plan (in_progress); completed: analyze; next: ") {
		t.Errorf("the compaction request lacks Cairn's anchor after \"Additional Instructions:\":\n%s", tail(text, 2000))
	}
	after := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-COMPACT")))
	if len(after) != 1 {
		t.Fatalf("%d requests after /compact, want 1", len(after))
	}
	if !after[0].Contains("MOCK-SUMMARY") {
		t.Errorf("the request after /compact lacks the compaction summary")
	}
	if report := cairnReport(t, after[0]); !strings.Contains(report, "phase plan (in_progress)") {
		t.Errorf("the report after /compact lacks the phase:\n%s", report)
	}
	// The earlier session's client has exited: no report asks to coordinate with it.
	for _, m := range []*mockapi.MessagesRequest{r.FirstMain(t), after[0]} {
		if report := cairnReport(t, m); strings.Contains(report, liveWarning) {
			t.Errorf("the report tells of another live session:\n%s", report)
		}
	}
	if got := hookNames(requireHooksOK(t, r, "SessionStart")); strings.Join(got, ",") != "SessionStart:startup,SessionStart:compact" {
		t.Errorf("SessionStart hooks %v", got)
	}
}

// Claude Code's background memory writers may drop Cairn's line from MEMORY.md. It stays away
// while a fresh consolidation lock exists (SessionStart and Stop both wait), and is back after
// the next Stop once the lock is gone, with the other lines as they were.
func TestCairnMemoryLineRestored(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w, "plan") // writes Cairn's position line into Claude Code's memory dir
	index := filepath.Join(w.MemoryDir(), "MEMORY.md")
	ours := readFile(t, index)
	if !strings.Contains(ours, "[Cairn workflow](cairn-workflow.md)") {
		t.Fatalf("MEMORY.md has no Cairn line after the transition:\n%s", ours)
	}
	const others = "- [Build](build.md) — make test before pushing\n- [Prefs](prefs.md) — tabs, not spaces\n"
	if err := os.WriteFile(index, []byte(others), 0o644); err != nil {
		t.Fatal(err)
	}
	// A consolidation that holds its lock: this test process is its live holder.
	lock := filepath.Join(w.MemoryDir(), ".consolidate-lock")
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}

	r := w.run(t, RunOptions{Prompt: "LOCKED-PROMPT: hello"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	if got := readFile(t, index); got != others {
		t.Fatalf("MEMORY.md changed while the consolidation lock was held:\n%s", got)
	}
	if s := requireHooksOK(t, r, "SessionStart"); !strings.Contains(s[0].Stderr, "consolidation holds its lock") {
		t.Errorf("SessionStart stderr %q does not say it waited for the lock", s[0].Stderr)
	}

	// The lock goes during the next turn (after SessionStart waited again): that turn's Stop
	// puts the line back.
	var released atomic.Bool
	w.Mock.Script(mockapi.Step{Name: "release the lock", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("RELEASED-PROMPT")),
		Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			released.Store(os.Remove(lock) == nil)
			return mockapi.Text("ok")
		}})
	r = w.run(t, RunOptions{Prompt: "RELEASED-PROMPT: hello"})
	requireOK(t, r)
	requireScriptUsed(t, w)
	if !released.Load() {
		t.Fatal("could not remove the consolidation lock")
	}
	if s := requireHooksOK(t, r, "SessionStart"); !strings.Contains(s[0].Stderr, "consolidation holds its lock") {
		t.Errorf("SessionStart stderr %q does not say it waited for the lock", s[0].Stderr)
	}
	stops := requireHooksOK(t, r, "Stop")
	if !strings.Contains(stops[len(stops)-1].Stderr, "MEMORY.md line (restored)") {
		t.Errorf("the Stop hook did not report restoring the line: %q", stops[len(stops)-1].Stderr)
	}
	got := readFile(t, index)
	cairnLine := ours[strings.Index(ours, "- [Cairn workflow]"):]
	if got != others+cairnLine {
		t.Errorf("MEMORY.md after the Stop\n got %q\nwant %q", got, others+cairnLine)
	}
}

// A turn that ends in an API error fires StopFailure, not Stop. Cairn's StopFailure hook does
// the Stop hook's work (here: putting back the MEMORY.md line a background writer dropped
// during the turn), so MEMORY.md is settled before the next turn, or the next session, begins.
// Its output is ignored by Claude Code; it never makes the failed turn continue.
func TestCairnFailedTurnSettlesMemory(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w, "plan")
	index := filepath.Join(w.MemoryDir(), "MEMORY.md")
	ours := readFile(t, index)
	i := strings.Index(ours, "- [Cairn workflow]")
	if i < 0 {
		t.Fatalf("MEMORY.md has no Cairn line after the transition:\n%s", ours)
	}
	const others = "- [Build](build.md) — make test before pushing\n"
	want := others + ours[i:]

	var dropped, settled atomic.Bool
	w.Mock.Script(
		mockapi.Step{Name: "drop the line, then fail", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FAIL-PROMPT")),
			Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
				dropped.Store(os.WriteFile(index, []byte(others), 0o644) == nil)
				return mockapi.Error(500, "api_error")
			}},
		// The next turn's request comes before its own Stop: the line must be back already.
		// StopFailure hooks run in the background: the failed turn's hook is waited for, up to
		// twice the 10 s Claude Code gives it (hooks.json), a guard only.
		mockapi.Step{Name: "next turn", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("NEXT-PROMPT")),
			Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
				for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
					if b, err := os.ReadFile(index); err == nil && string(b) == want {
						settled.Store(true)
						break
					}
				}
				return mockapi.Text("ok")
			}},
	)
	r := w.runScript(t, RunOptions{Inputs: []string{"FAIL-PROMPT: hello", "NEXT-PROMPT: hello"}, Env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}})
	if !dropped.Load() {
		t.Fatal("could not drop the line from MEMORY.md")
	}
	if res := r.Results(); len(res) != 2 || !res[0].IsError || res[1].IsError {
		t.Fatalf("results %+v, want the first turn failed and the second not", res)
	}
	if n := len(r.MainRequests()); n != 2 {
		t.Errorf("%d main requests, want 2: the failed turn must not continue", n)
	}
	if !settled.Load() {
		got, _ := os.ReadFile(index)
		t.Fatalf("MEMORY.md was not settled after the failed turn, before the next one:\n got %q\nwant %q", got, want)
	}
	// The second turn's Stop found nothing left to do.
	if stops := requireHooksOK(t, r, "Stop"); len(stops) != 1 || strings.Contains(stops[0].Stderr, "restored") {
		t.Errorf("Stop hooks %d, the last one's stderr %q; want 1 with nothing restored", len(stops), stops[len(stops)-1].Stderr)
	}
}

// The plugin's binaries go during a session (a checkout pulled without make build, a data
// directory cleared) and none can be installed: the launcher says so from each hook. Claude
// Code adds PreCompact's stdout as it is to the compaction request, after "Additional
// Instructions:": what the installer says there is a line of text, not a JSON object for the
// summary to carry.
func TestCairnCompactionInstallerSaysText(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	plugin := filepath.Join(w.Dir, "plugin")
	if err := copyTree(w.Plugin, plugin); err != nil {
		t.Fatal(err)
	}
	w.Plugin = plugin
	// No Go to build with, and a download that fails at once, on 127.0.0.1.
	w.Env = append(w.Env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "CAIRN_DOWNLOAD_URL=http://127.0.0.1:1/releases")
	startApex(t, w, "plan")
	var gone atomic.Bool
	w.Mock.Script(mockapi.Step{Name: "remove the binaries", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BEFORE-COMPACT")),
		Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			gone.Store(os.RemoveAll(filepath.Join(plugin, "bin")) == nil)
			return mockapi.ToolUse("TaskCreate", map[string]any{"subject": "write the retry loop", "description": "wrap upload() in a bounded retry"})
		}}, mockapi.On(afterToolResult, mockapi.Text("ok")).Named("end"))
	r := w.run(t, RunOptions{Inputs: []string{"BEFORE-COMPACT: read the code", "/compact", "AFTER-COMPACT: go on"},
		AllowedTools: []string{cairnPlugin.AllowRule(), "TaskCreate"}})
	requireOK(t, r)
	requireScriptUsed(t, w)
	if !gone.Load() {
		t.Fatal("could not remove the plugin's binaries")
	}
	// The same line as text from the TaskCreated hook does not stop the task being created.
	requireToolResultsOK(t, r, 1)
	if created := requireHooksOK(t, r, "TaskCreated"); len(created) != 1 || !strings.HasPrefix(created[0].Stdout, "Cairn: ") {
		t.Errorf("TaskCreated hooks %+v, want one that says the line as text", created)
	}
	compaction := w.Mock.Find(mockapi.IsCompaction)
	if len(compaction) != 1 {
		t.Fatalf("%d compaction requests, want 1", len(compaction))
	}
	text := compaction[0].LastUserText()
	i := strings.Index(text, "Additional Instructions:")
	if i < 0 {
		t.Fatalf("the compaction request has no \"Additional Instructions:\":\n%s", tail(text, 2000))
	}
	added := strings.TrimSpace(text[i+len("Additional Instructions:"):])
	if !strings.HasPrefix(added, "Cairn: ") || !strings.Contains(added, "Go is not installed") || strings.Contains(added, "systemMessage") || strings.Contains(added, "{") {
		t.Errorf("the compaction request's additional instructions are not Cairn's line as text:\n%s", tail(added, 2000))
	}
}

// oneTaskEdited runs a turn (its prompt starting with marker) in which the model creates
// Claude Code task 1, "write the retry loop", and then takes the steps (each on the last tool
// result), none of which fires a hook in Claude Code: every task tool must succeed and one
// TaskCreated hook run (edit names what would have fired another). It calls turn with the
// turn's run, then runs a new session, and returns the turn's last Stop hook's stderr and the
// new session's report.
func oneTaskEdited(t *testing.T, marker, edit string, turn func(w *World, r *Run), steps ...mockapi.Step) (stop, report string) {
	t.Helper()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	tools := []string{cairnPlugin.AllowRule(), "TaskCreate", "TaskUpdate"}
	w.Mock.Script(append([]mockapi.Step{
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
			mockapi.ToolUse("TaskCreate", map[string]any{"subject": "write the retry loop", "description": "wrap upload()"})).Named("create 1"),
	}, steps...)...)
	r := w.runScript(t, RunOptions{Prompt: marker + ": list the work", AllowedTools: tools})
	for _, tr := range r.ToolResults() {
		if tr.IsError {
			t.Fatalf("a task tool failed: %s", tr.Text)
		}
	}
	if n := len(requireHooksOK(t, r, "TaskCreated")); n != 1 {
		t.Fatalf("%d TaskCreated hooks ran, want 1: %s fired one; this test's premise (no hook) is gone", n, edit)
	}
	turn(w, r)
	stops := requireHooksOK(t, r, "Stop")

	next := w.run(t, RunOptions{Prompt: "NEXT-PROMPT: go on"})
	requireOK(t, next)
	return stops[len(stops)-1].Stderr, cairnReport(t, next.FirstMain(t))
}

// A task the model set back to pending after completing it (TaskUpdate) fires no hook in
// Claude Code: its task file says pending again, and nothing more. The end of the turn finds
// the file pending and opens the task again, so the next session's report lists it.
func TestCairnReopenedClaudeTaskReported(t *testing.T) {
	t.Parallel()
	stop, report := oneTaskEdited(t, "REOPEN-PROMPT", "the reopening", func(w *World, r *Run) {
		if n := len(requireHooksOK(t, r, "TaskCompleted")); n != 1 {
			t.Fatalf("%d TaskCompleted hooks ran, want 1", n)
		}
		files, _ := filepath.Glob(filepath.Join(w.Home, ".claude", "tasks", "*", "1.json"))
		if len(files) != 1 {
			t.Fatalf("task files %q, want one 1.json", files)
		}
		if data, err := os.ReadFile(files[0]); err != nil || !strings.Contains(string(data), `"status": "pending"`) {
			t.Fatalf("the reopened task's file: %s (%v); this test's premise (it says pending) is gone", data, err)
		}
	},
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})).Named("complete 1"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "pending"})).Named("reopen 1"),
		mockapi.On(afterToolResult, mockapi.Text("tests fail; the retry loop is to do again")).Named("end"),
	)
	if !strings.Contains(stop, "1 task Claude Code set back from completed open again") {
		t.Errorf("the Stop hook does not say it opened the task again: %q", stop)
	}
	if !strings.Contains(report+"\n", "\nopen task: write the retry loop\n") {
		t.Errorf("the new session's report does not list the task the model reopened:\n%s", report)
	}
}

// A task the model renamed (TaskUpdate with a new subject) fires no hook in Claude Code: its
// task file holds the new subject, and nothing more. The end of the turn takes it up, so the
// next session's report lists the task by the subject the model gave it last.
func TestCairnRenamedClaudeTaskReported(t *testing.T) {
	t.Parallel()
	stop, report := oneTaskEdited(t, "RENAME-PROMPT", "the rename", func(*World, *Run) {},
		mockapi.On(afterToolResult,
			mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "subject": "write the backoff for upload()"})).Named("rename 1"),
		mockapi.On(afterToolResult, mockapi.Text("renamed")).Named("end"),
	)
	if !strings.Contains(stop, "1 task Claude Code renamed given its new subject") {
		t.Errorf("the Stop hook does not say it took up the new subject: %q", stop)
	}
	if !strings.Contains(report+"\n", "\nopen task: write the backoff for upload()\n") || strings.Contains(report, "write the retry loop") {
		t.Errorf("the new session's report does not list the task by its new subject:\n%s", report)
	}
}

// With CLAUDE_CODE_TASK_LIST_ID, Claude Code's sessions share one task list: a new session
// has the tasks an earlier one created, and its TaskList shows them. The report's notice said
// they came from a list "which this session does not have", and its next step had the model
// create them again with TaskCreate, a second copy of each in that list. Then it said the list
// was shared and had the model look in TaskList, but a task the new session deleted or renamed
// there (no hook fires) stood open, under its old subject, in every later report. The new
// session now takes the earlier tasks its list holds as its own: no notice, and what it
// deletes or renames there is followed at its turn's end.
func TestCairnSharedTaskListNotice(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.Env = append(w.Env, "CLAUDE_CODE_TASK_LIST_ID=team-x")
	startApex(t, w)
	r := twoTasksThen(t, w, "TASKS-PROMPT", "in_progress", "measure the backoff")
	requireHooksOK(t, r, "TaskCreated")
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("NEXT-PROMPT")), mockapi.ToolUse("TaskList", map[string]any{})).Named("list"),
		mockapi.On(afterToolResult, mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "deleted"})).Named("delete 1"),
		mockapi.On(afterToolResult, mockapi.ToolUse("TaskUpdate", map[string]any{"taskId": "2", "subject": "measure the jitter"})).Named("rename 2"),
		mockapi.On(afterToolResult, mockapi.Text("listed")).Named("end"),
	)
	next := w.runScript(t, RunOptions{Prompt: "NEXT-PROMPT: go on", AllowedTools: []string{cairnPlugin.AllowRule(), "TaskList", "TaskUpdate"}})
	trs := requireToolResultsOK(t, next, 3)
	if next.SessionID() == r.SessionID() {
		t.Fatalf("the second run reused session %s", r.SessionID())
	}
	// The premise: the new session's list holds the earlier session's tasks.
	if !strings.Contains(trs[0].Text, "write the retry loop") || !strings.Contains(trs[0].Text, "measure the backoff") {
		t.Errorf("TaskList in the new session gave %q, want the earlier session's two tasks", trs[0].Text)
	}
	text := fromSessionStart(t, next.FirstMain(t))
	for _, bad := range []string{"came from an earlier Claude Code session", "which this session does not have", "Also create again with TaskCreate each"} {
		if strings.Contains(text, bad) {
			t.Errorf("the new session's context says %q of tasks its list holds:\n%s", bad, text)
		}
	}
	stops := requireHooksOK(t, next, "Stop")
	stop := stops[len(stops)-1].Stderr
	for _, want := range []string{"1 task Claude Code deleted taken out of the workflow", "1 task Claude Code renamed given its new subject"} {
		if !strings.Contains(stop, want) {
			t.Errorf("the Stop hook does not say %q: %q", want, stop)
		}
	}
	third := w.run(t, RunOptions{Prompt: "THIRD-PROMPT: go on"})
	requireOK(t, third)
	report := cairnReport(t, third.FirstMain(t))
	if !strings.Contains(report+"\n", "\nopen task: measure the jitter\n") || strings.Contains(report, "write the retry loop") || strings.Contains(report, "measure the backoff") {
		t.Errorf("the third session's report does not list the one task left, by its new subject:\n%s", report)
	}
}
