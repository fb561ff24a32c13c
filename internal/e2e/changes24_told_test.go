package e2e

// Session 24's changes in the real client: what the model reads when record_learning replaces
// a learning or MEMORY.md is full, start_workflow into a terminal phase, the report after an
// archive a full disk cut short, and another machine's running task.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
)

// A learning recorded over another of the same title is gone: the result says so, quotes what
// it said, and names the tool that keeps it. The scripted model does what it says, and both
// learnings are then in MEMORY.md, as the next session loads it. In that session (tool search
// off) record_learning's definition tells the model a body's limits; with MEMORY.md full a new
// learning is refused with a step that loses none (add it to a related one), which the model
// takes; and a memory of the model's own at the topic file's name is left as it is, the move
// saying to rename it.
func TestCairnLearningReplacedIsQuoted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	const first, second = "run go clean -cache after a toolchain bump", "the build cache is shared by every worktree"
	var mu sync.Mutex
	var told string
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("LEARN-PROMPT")),
			mockapi.ToolUse(cairnTool("record_learning"), map[string]any{"title": "Build cache", "body": first})).Named("first"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse(cairnTool("record_learning"), map[string]any{"title": "Build cache", "body": second})).Named("same title"),
		mockapi.Step{Name: "keep the first", When: afterToolResult, Reply: func(m *mockapi.MessagesRequest) mockapi.Reply {
			trs := m.ToolResults()
			text := trs[len(trs)-1].Text
			mu.Lock()
			told = text
			mu.Unlock()
			// The words the result quotes, under another title, as it says.
			_, was, _ := strings.Cut(text, "which said: “")
			was, _, _ = strings.Cut(was, "”")
			return mockapi.ToolUse(cairnTool("record_learning"), map[string]any{"title": "Toolchain bumps", "body": was})
		}},
		mockapi.On(afterToolResult, mockapi.Text("both kept")).Named("end"),
	)
	r := w.runScript(t, RunOptions{Prompt: "LEARN-PROMPT: remember these"})
	trs := requireToolResultsOK(t, r, 3)
	t.Logf("record_learning over the same title told the model: %q", told)
	want := "this replaced the learning cairn-learning-build-cache.md held, which said: “" + first +
		"”; if that still holds, call " + cairnTool("record_learning") + " with it under another title"
	if !strings.Contains(strings.ToLower(told), want) {
		t.Errorf("record_learning over the same title told the model\n%s\nwant it to say %q", told, want)
	}
	for _, i := range []int{0, 2} {
		if strings.Contains(trs[i].Text, "replaced") {
			t.Errorf("record_learning %d, under a new title, says it replaced one: %s", i+1, trs[i].Text)
		}
	}

	// The next session: MEMORY.md indexes 50 learnings, the most Cairn adds, and the model's
	// Write tool has put a memory of its own at Cairn's topic file's name. With tool search
	// off, Claude Code sends every tool's whole definition with each request.
	w.cairn(t, "start", "apex", seedContext)
	e := personEngine(t, w)
	for i := range memory.MaxLearnings - 2 {
		if _, err := e.RecordLearning(engine.LearningRequest{Title: fmt.Sprintf("Planted %02d", i), Body: "a learning kept for the count"}); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	topic := filepath.Join(w.MemoryDir(), memory.TopicFile)
	const usersOwn = "---\nname: cairn-workflow\ndescription: How this team runs Cairn\nmetadata:\n  type: project\n---\n\nWe always run analyze before plan, and the plan goes to the team channel.\n"
	if err := os.WriteFile(topic, []byte(usersOwn), 0o644); err != nil {
		t.Fatal(err)
	}
	const third = "the upload test is flaky on a cold cache: run it twice before filing a bug"
	var stepTold bool
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("NEXT-SESSION")),
			mockapi.ToolUse(cairnTool("record_learning"), map[string]any{"title": "Flaky upload test", "body": third})).Named("a new learning, MEMORY.md full"),
		mockapi.Step{Name: "add it to a related one, if told to", When: afterToolResult, Reply: func(m *mockapi.MessagesRequest) mockapi.Reply {
			trs := m.ToolResults()
			if !strings.Contains(trs[len(trs)-1].Text, "add it to a related learning instead (call "+cairnTool("record_learning")+" with that learning's title and both bodies") {
				return mockapi.Text("no step given")
			}
			mu.Lock()
			stepTold = true
			mu.Unlock()
			return mockapi.ToolUse(cairnTool("record_learning"), map[string]any{"title": "Build cache", "body": second + "\n" + third})
		}},
		mockapi.On(afterToolResult, mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "plan"})).Named("move on"),
		mockapi.On(afterToolResult, mockapi.Text("ok")).Named("next"),
	)
	next := w.run(t, RunOptions{Prompt: "NEXT-SESSION: hello", Env: []string{"ENABLE_TOOL_SEARCH=false"}})
	requireOK(t, next)
	w.requirePluginLoaded(t, next)
	requireBodyDescribed(t, next.FirstMain(t))
	read := next.ToolResults()
	if len(read) == 0 {
		t.Fatal("no tool result in the next session")
	}
	t.Logf("record_learning with MEMORY.md full told the model: %q", read[0].Text)
	mu.Lock()
	followed := stepTold
	mu.Unlock()
	if !read[0].IsError || !followed || !strings.Contains(read[0].Text, "MEMORY.md already indexes 50 learnings") ||
		!strings.Contains(read[0].Text, "or ask the user which learnings may go") || strings.Contains(strings.ToLower(read[0].Text), "delete") {
		t.Errorf("record_learning with MEMORY.md full told the model (error %v):\n%s\nwant a refusal whose step adds it to a related learning, and no delete", read[0].IsError, read[0].Text)
	}
	requireScriptUsed(t, w)
	if len(read) != 3 {
		t.Fatalf("%d tool results in the next session, want 3: %+v", len(read), read)
	}
	if read[1].IsError || strings.Contains(read[1].Text, "replaced") {
		t.Errorf("record_learning adding to a related learning, as told: %s", read[1].Text)
	}
	if got := readFile(t, filepath.Join(w.MemoryDir(), "cairn-learning-build-cache.md")); !strings.Contains(got, second) || !strings.Contains(got, third) {
		t.Errorf("the related learning does not hold both bodies:\n%s", got)
	}
	if exists(filepath.Join(w.MemoryDir(), "cairn-learning-flaky-upload-test.md")) {
		t.Errorf("the refused learning was written")
	}
	// The memory of the model's own at the topic file's name is left as it is, turn's end
	// included, and the move says how to make room for Cairn's line.
	var moved struct{ Warnings []string }
	if err := json.Unmarshal([]byte(read[2].Text), &moved); err != nil || read[2].IsError {
		t.Fatalf("transition's result %q (error %v): %v", read[2].Text, read[2].IsError, err)
	}
	if ws := strings.Join(moved.Warnings, "\n"); !strings.Contains(ws, memory.TopicFile+" is a memory that is not Cairn's (none of Cairn's lines are in it); Cairn leaves it as it is for the user to rename it, and its link in MEMORY.md, to a name of its own") {
		t.Errorf("the move's warnings do not say to rename the memory at %s: %q", memory.TopicFile, moved.Warnings)
	}
	requireHooksOK(t, next, "Stop")
	if got := readFile(t, topic); got != usersOwn {
		t.Errorf("the memory at %s was changed:\n%s", memory.TopicFile, got)
	}
	mem, _, ok := AutoMemory(next.FirstMain(t))
	if !ok {
		t.Fatal("the next session's first request carries no MEMORY.md")
	}
	for _, f := range []string{"cairn-learning-build-cache.md", "cairn-learning-toolchain-bumps.md"} {
		if !strings.Contains(mem, "("+f+")") {
			t.Errorf("MEMORY.md as the next session loads it does not index %s:\n%s", f, mem)
		}
	}
	if got := readFile(t, filepath.Join(w.MemoryDir(), "cairn-learning-toolchain-bumps.md")); !strings.Contains(got, first) {
		t.Errorf("the learning recorded again under another title does not hold the first one's words:\n%s", got)
	}
}

// A project's definition whose first phase is terminal: start_workflow's result gives the step
// that ends the workflow, and the scripted model's complete_workflow, called as it says,
// completes and archives it.
func TestCairnStartInATerminalPhaseSaysToComplete(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.writeDefinition(t, "one.md", "---\nphases: [only]\n---\nTag the release.\n")
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("ONE-PROMPT")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "one", "context": "tag the release"})).Named("start"),
		mockapi.Step{Name: "complete, if told to", When: afterToolResult, Reply: func(m *mockapi.MessagesRequest) mockapi.Reply {
			trs := m.ToolResults()
			if !strings.Contains(trs[len(trs)-1].Text, "complete_workflow") {
				return mockapi.Text("no step given")
			}
			return mockapi.ToolUse(cairnTool("complete_workflow"), map[string]any{"outcome": "v1.2 tagged"})
		}},
		mockapi.On(afterToolResult, mockapi.Text("done")).Named("end"),
	)
	r := w.run(t, RunOptions{Prompt: "ONE-PROMPT: tag the release"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	const next = "Phase only is a terminal phase, so no move leads out of it: once its work is done, call complete_workflow with the outcome to finish the workflow."
	if trs := r.ToolResults(); len(trs) == 0 || !strings.Contains(trs[0].Text, next) {
		t.Fatalf("start_workflow into a terminal phase told the model %q, want the step %q", toolTexts(trs), next)
	}
	requireScriptUsed(t, w)
	t.Logf("complete_workflow told the model: %q", requireToolResultsOK(t, r, 2)[1].Text)
	if exists(filepath.Join(w.stateDir(), store.WorkflowFile)) {
		t.Errorf("the workflow is still active after complete_workflow")
	}
	index := readJSONL[struct {
		Reason string `json:"reason"`
	}](t, filepath.Join(w.stateDir(), "archive", "index.jsonl"))
	if len(index) != 1 || index[0].Reason != "completed" {
		t.Errorf("archive/index.jsonl = %+v, want the workflow archived completed", index)
	}
}

// An archive whose last steps a full disk refused (its index line, the memory line, the
// record of the ending, and l2-state.json, so nothing owes the line), planted as the disk left
// them: the archive holds the workflow, memory's last line calls it active. The next session
// is told it was archived, not that its state is missing, and MEMORY.md gets the ending line,
// which the session after loads.
func TestCairnArchiveCutShortByAFullDisk(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	e := startAt(t, w, time.Now().Add(-time.Hour), engine.StartRequest{Type: "apex", Context: seedContext}, "plan")
	// What the archive's last steps would write, as it was before them.
	kept := map[string][]byte{}
	for _, p := range []string{
		filepath.Join(w.MemoryDir(), "MEMORY.md"), filepath.Join(w.MemoryDir(), "cairn-workflow.md"),
		filepath.Join(w.stateDir(), "l2-state.json"), filepath.Join(w.stateDir(), "l2-mark.json"), filepath.Join(w.stateDir(), "last-ending.json"),
		filepath.Join(w.stateDir(), "archive", "index.jsonl"),
	} {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		kept[p] = data
	}
	if _, err := e.Archive("because"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	for p, data := range kept {
		var err error
		if data == nil {
			err = os.Remove(p)
		} else {
			err = os.WriteFile(p, data, 0o600)
		}
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if dirs, _ := filepath.Glob(filepath.Join(w.stateDir(), "archive", "*", store.WorkflowFile)); len(dirs) != 1 {
		t.Fatalf("the archive holds %d records, want the workflow's", len(dirs))
	}
	if mem := readFile(t, filepath.Join(w.MemoryDir(), "MEMORY.md")); !strings.Contains(mem, "Active APEX workflow") {
		t.Fatalf("the planted MEMORY.md does not call the workflow active:\n%s", mem)
	}

	// The first session's context holds MEMORY.md as it was (Claude Code reads it before the
	// hook writes the ending's line), which calls the workflow active: the hook's line says
	// it was archived. The session after loads the ending's line and is not told again.
	const ending = "Abandoned APEX workflow at plan for “" + seedContext + "”, archived"
	want := `Cairn: no active workflow, nothing to resume; the last one ended ("` + ending + `"); go on with the user's request.`
	for i, prompt := range []string{"AFTER-FULL-DISK: anything to resume?", "SECOND-AFTER: anything to resume?"} {
		r := w.run(t, RunOptions{Prompt: prompt})
		requireOK(t, r)
		w.requirePluginLoaded(t, r)
		first := r.FirstMain(t)
		mem, _, _ := AutoMemory(first)
		switch i {
		case 0:
			if !first.Contains(sessionStartContext) || !first.Contains(want) || first.Contains("missing") {
				t.Errorf("the session after the cut archive, whose MEMORY.md reads\n%s\nwas not told %q:\n%s", mem, want, tail(first.MessagesText(), 2000))
			}
		case 1:
			if first.Contains(sessionStartContext) {
				t.Errorf("the second session after the cut archive was told again:\n%s", tail(fromSessionStart(t, first), 2000))
			}
			if !strings.Contains(mem, "— "+ending) || strings.Contains(mem, "Active APEX") {
				t.Errorf("MEMORY.md as the second session loads it does not say the workflow was archived:\n%s", mem)
			}
		}
	}
}

// Machine A's agent claims task t1 and A pushes it; A's session has ended. Machine B's
// session is told t1 is running (on A), not "running when its session ended", which reads as
// a task this machine's crash left.
//
// Meanwhile each machine changed the workflow, A pushing first, and the remote now refuses
// pushes of a workflow's line: B's background sync loses the race (B's copy archived, A's line
// taken, B's change replayed on it) and then cannot push. One tool result tells the model
// both, what the sync did here and that it failed.
func TestCairnTaskRunningOnAnotherMachine(t *testing.T) {
	t.Parallel()
	a, b, bare := sharedPair(t, "wf-elsewhere")
	a.Mock.Script(inTurn("CLAIM-A", "claimed", 1, func(int) (string, mockapi.Reply) {
		return "claim t1", mockapi.ToolUse(cairnTool("update_task"), map[string]any{"id": "t1", "status": "running"})
	})...)
	requireToolResultsOK(t, a.runScript(t, RunOptions{Prompt: "CLAIM-A: take task t1"}), 1)
	a.cairn(t, "sync")
	b.cairn(t, "sync")
	if got := tasksOf(t, b); !strings.Contains(got, `"running"`) {
		t.Fatalf("machine B did not pull A's claim: %s", got)
	}
	b.cairn(t, "vars", "set", "WF_ON_B", "b")
	a.cairn(t, "vars", "set", "WF_ON_A", "a")
	a.cairn(t, "sync")
	refuse := "#!/bin/sh\nwhile read old new ref; do case $ref in refs/cairn/wf/*) echo 'no pushes today' >&2; exit 1;; esac; done\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(refuse), 0o755); err != nil {
		t.Fatal(err)
	}

	b.Mock.Script(inTurn("ON-B", "ok", 2, func(i int) (string, mockapi.Reply) {
		name := []string{"resume_check", "get_vars"}[i]
		return name, mockapi.ToolUse(cairnTool(name), map[string]any{})
	})...)
	r := b.run(t, RunOptions{Inputs: []string{"ON-B: where are we?", "/clear", "AFTER-CLEAR-B: and now?"}})
	requireOK(t, r)
	b.requirePluginLoaded(t, r)
	requireScriptUsed(t, b)
	trs := requireToolResultsOK(t, r, 2)
	var told string
	for _, tr := range trs {
		var res struct{ Notice string }
		if json.Unmarshal([]byte(tr.Text), &res) == nil && strings.Contains(res.Notice, "another machine changed workflow") {
			told = res.Notice
			break
		}
	}
	t.Logf("machine B's sync told the model: %q", told)
	for _, want := range []string{"another machine changed workflow wf-elsewhere first (via origin)", "is kept in archive/conflict-wf-elsewhere-",
		"1 of its 1 change was replayed on top", "could not sync with origin", "the remote refused the push, and said: no pushes today",
		"every sync fails the same way until the host takes it"} {
		if !strings.Contains(told, want) {
			t.Errorf("no tool result tells the model %q; they read:\n%s", want, strings.Join(toolTexts(trs), "\n"))
		}
	}
	var st struct{ Vars map[string]string }
	readJSON(t, filepath.Join(b.stateDir(), "workflow-state.json"), &st)
	if st.Vars["WF_ON_A"] != "a" || st.Vars["WF_ON_B"] != "b" {
		t.Errorf("machine B's workflow has vars %v, want A's line with B's change replayed on it", st.Vars)
	}
	// Once B's sync has read A's claim (after the /clear), the report says where t1 runs: it
	// read "t1 (running)", as this session's own work.
	for marker, want := range map[string]string{"ON-B": "t1 (running)", "AFTER-CLEAR-B": "t1 (running on another machine)"} {
		report := cairnReport(t, onlyRequest(t, b, marker))
		if !strings.Contains(report, "\nopen task: "+want+"\n") {
			t.Errorf("%s: the report does not list A's task as %q:\n%s", marker, want, report)
		}
	}
}

// requireBodyDescribed fails unless m, sent with tool search off, carries record_learning's
// whole definition with the body's description: the limits the server holds a body to (40
// lines of 500 characters) are what the model reads before it writes one.
func requireBodyDescribed(t testing.TB, m *mockapi.MessagesRequest) {
	t.Helper()
	for _, tool := range m.Tools {
		if tool.Name != cairnTool("record_learning") {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
				MaxLength   int    `json:"maxLength"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatalf("record_learning's input schema as Claude Code sent it: %s: %v", tool.InputSchema, err)
		}
		if body := schema.Properties["body"]; body.Description != "At most 40 lines, each at most 500 characters." || body.MaxLength != 4000 {
			t.Errorf("record_learning's body as the model reads it: %s", tool.InputSchema)
		}
		return
	}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
	}
	t.Fatalf("the request carries no definition of record_learning (tools: %v)", names)
}
