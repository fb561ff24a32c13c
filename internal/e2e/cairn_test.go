package e2e

// Issue 6's proof in the real client: Cairn's plugin (cairnPlugin: the repository's manifests
// and the binaries `make build` makes) run by the pinned Claude Code against the scripted mock
// model. Each scenario checks three things the real client alone can show: the stream-json
// events, the requests the model got, and the files on disk (the project's .claude/cairn/ and
// Claude Code's own auto-memory directory).
//
// Scenarios 2 to 5 share one World and run in order (a session changes the state, the next
// sessions must find it), so that chain costs four Claude Code runs; 1, 6, 7 and the Stop hook's
// part of 5 have Worlds of their own and run in parallel with it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// cairnTools are the 15 tools cairn-mcp must offer (README, "The agent's tools").
var cairnTools = []string{
	"resume_check", "start_workflow", "transition", "complete_workflow", "update_task",
	"set_enforcement", "expire_ttl", "save_checkpoint", "load_checkpoint", "list_checkpoints",
	"set_vars", "get_vars", "append_log", "record_learning", "initiative",
}

const (
	seedContext    = "add retries to the uploader"
	checkpointName = "findings"
)

// The phrases the real client wraps around what the plugin says (Claude Code 2.1.330).
const (
	sessionStartContext = "SessionStart hook additional context:"
	stopFeedback        = "Stop hook feedback:\n"
)

// stateDir is the project's Cairn state directory.
func (w *World) stateDir() string { return filepath.Join(w.Project, ".claude", "cairn") }

// stateRecord is the part of workflow-state.json the scenarios check.
type stateRecord struct {
	Version     string `json:"version"`
	WorkflowID  string `json:"workflow_id"`
	Type        string `json:"type"`
	Context     string `json:"context"`
	State       string `json:"state"`
	PhaseStatus string `json:"phase_status"`
	Status      string `json:"status"`
	Phases      map[string]struct {
		Completed bool           `json:"completed"`
		Metadata  map[string]any `json:"metadata"`
	} `json:"phases"`
	History []struct {
		From      string `json:"from"`
		To        string `json:"to"`
		SessionID string `json:"session_id"`
	} `json:"history"`
	Enforcement *struct {
		Blocking   bool `json:"blocking"`
		Violations []struct {
			Code     string `json:"code"`
			Severity string `json:"severity"`
		} `json:"violations"`
	} `json:"enforcement"`
	Tasks []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"tasks"`
	TTL   string `json:"ttl"`
	Owner *struct {
		SessionID string `json:"session_id"`
		PID       int    `json:"pid"`
	} `json:"owner"`
	Revision int64 `json:"revision"`
}

func (w *World) readState(t testing.TB) stateRecord {
	t.Helper()
	var r stateRecord
	readJSON(t, filepath.Join(w.stateDir(), "workflow-state.json"), &r)
	return r
}

// journalEntry is one line of journal/<workflow_id>.jsonl; Detail is the event's own JSON.
type journalEntry struct {
	Seq      int64 `json:"seq"`
	Revision int64 `json:"revision"`
	Event    struct {
		Kind   string `json:"kind"`
		Detail string `json:"detail"`
	} `json:"event"`
	Snapshot json.RawMessage `json:"snapshot"`
}

// journalDetail is what the engine records in an event's detail.
type journalDetail struct {
	Actor   string `json:"actor"`
	Session string `json:"session_id"`
	From    string `json:"from"`
	To      string `json:"to"`
}

func (j journalEntry) detail(t testing.TB) journalDetail {
	t.Helper()
	var d journalDetail
	if j.Event.Detail != "" {
		if err := json.Unmarshal([]byte(j.Event.Detail), &d); err != nil {
			t.Fatalf("journal record %d: detail %q: %v", j.Seq, j.Event.Detail, err)
		}
	}
	return d
}

func (w *World) readJournal(t testing.TB, workflowID string) []journalEntry {
	t.Helper()
	return readJSONL[journalEntry](t, filepath.Join(w.stateDir(), "journal", workflowID+".jsonl"))
}

func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(data)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// hookOutput is what a Cairn hook printed on stdout (empty when it printed nothing).
type hookOutput struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	SystemMessage string `json:"systemMessage"`
	Specific      *struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func parseHookOutput(t testing.TB, h HookEvent) hookOutput {
	t.Helper()
	var o hookOutput
	if s := strings.TrimSpace(h.Stdout); s != "" {
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			t.Fatalf("hook %s printed %q, which is not one JSON object: %v", h.Name, s, err)
		}
	}
	return o
}

// requireHooksOK fails unless every hook of event ran and succeeded, and at least one ran.
func requireHooksOK(t testing.TB, r *Run, event string) []HookEvent {
	t.Helper()
	hs := r.Hooks(event)
	if len(hs) == 0 {
		t.Fatalf("no %s hook ran", event)
	}
	for _, h := range hs {
		if h.Outcome != "success" || h.ExitCode != 0 {
			t.Errorf("%s hook: outcome %q, exit %d, stderr %q", h.Name, h.Outcome, h.ExitCode, h.Stderr)
		}
	}
	return hs
}

var reportRE = regexp.MustCompile(`(?s)<cairn-state nonce="([0-9a-f]{16,})">\n(.*?)\n</cairn-state nonce="([0-9a-f]{16,})">`)

// fromSessionStart is the text of m's messages from Claude Code's last SessionStart context
// header on; it fails the test when there is none.
func fromSessionStart(t testing.TB, m *mockapi.MessagesRequest) string {
	t.Helper()
	text := m.MessagesText()
	i := strings.LastIndex(text, sessionStartContext)
	if i < 0 {
		t.Fatalf("the request has no %q: Cairn's SessionStart context did not reach the model:\n%s", sessionStartContext, tail(text, 3000))
	}
	return text[i:]
}

// cairnReport returns the body of the fenced resume report the model got in its request, after
// Claude Code's SessionStart context header; it fails the test when there is none or the
// fence's nonces differ.
func cairnReport(t testing.TB, m *mockapi.MessagesRequest) string {
	t.Helper()
	text := fromSessionStart(t, m)
	match := reportRE.FindStringSubmatch(text)
	if match == nil {
		t.Fatalf("the SessionStart context has no fenced <cairn-state> report:\n%s", tail(text, 3000))
	}
	if match[1] != match[3] {
		t.Fatalf("the report opens with nonce %s and closes with %s", match[1], match[3])
	}
	return match[2] + "\n"
}

// cairnTool is the name the model calls one of Cairn's tools by.
func cairnTool(name string) string { return cairnPlugin.Tool(name) }

// afterToolResult matches the agent-loop request that carries a tool result.
var afterToolResult = mockapi.All(mockapi.IsMain, mockapi.EndsWithToolResult)

// inTurn scripts a turn that makes n calls one after another: the first reply answers the
// main request whose last user message holds marker, each later one the tool result before
// it, and after the last the model says end. reply gives the i-th call's step name and reply.
func inTurn(marker, end string, n int, reply func(i int) (string, mockapi.Reply)) []mockapi.Step {
	steps := make([]mockapi.Step, 0, n+1)
	for i := range n {
		when := afterToolResult
		if i == 0 {
			when = mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker))
		}
		name, r := reply(i)
		steps = append(steps, mockapi.On(when, r).Named(name))
	}
	return append(steps, mockapi.On(afterToolResult, mockapi.Text(end)).Named("end"))
}

// requireToolResultsOK fails unless the run fed the model exactly n tool results and none is
// an error.
func requireToolResultsOK(t testing.TB, r *Run, n int) []ToolResultEvent {
	t.Helper()
	trs := r.ToolResults()
	if len(trs) != n {
		t.Fatalf("%d tool results, want %d: %+v", len(trs), n, trs)
	}
	for i, tr := range trs {
		if tr.IsError {
			t.Errorf("tool result %d is an error: %s", i+1, tr.Text)
		}
	}
	if res := r.Result(t); len(res.PermissionDenials) != 0 {
		t.Errorf("permission denials: %s", res.PermissionDenials)
	}
	return trs
}

// ---- 1. the plugin loads ----

// 1. The plugin loads with no plugin_errors, its MCP server cairn connects offering the 15
// tools, and its SessionStart and Stop hooks run and succeed. With nothing on record, Cairn
// puts nothing in front of the model but its server's instructions, and records the session.
func TestCairnPluginLoads(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	r := w.run(t, RunOptions{Prompt: "hello"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	sid := r.SessionID()

	var got []string
	for _, name := range r.Init(t).Tools {
		if rest, ok := strings.CutPrefix(name, cairnPlugin.AllowRule()+"__"); ok {
			got = append(got, rest)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(cairnTools))
	if !slices.Equal(got, want) {
		t.Errorf("init lists Cairn tools %v, want %v", got, want)
	}

	starts := requireHooksOK(t, r, "SessionStart")
	if got := hookNames(starts); strings.Join(got, ",") != "SessionStart:startup" {
		t.Errorf("SessionStart hooks %v", got)
	}
	// Nothing on record: nothing the model must read.
	if out := parseHookOutput(t, starts[0]); out.Specific != nil || out.SystemMessage != "" {
		t.Errorf("SessionStart printed %q with nothing on record", starts[0].Stdout)
	}
	stops := requireHooksOK(t, r, "Stop")
	if out := parseHookOutput(t, stops[0]); out.Decision != "" || out.SystemMessage != "" {
		t.Errorf("Stop printed %q with nothing on record", stops[0].Stdout)
	}

	first := r.FirstMain(t)
	if first.Contains("<cairn-state") || first.Contains(sessionStartContext) {
		t.Errorf("the first request carries a SessionStart context with nothing on record")
	}
	if !first.Contains("## plugin:cairn:cairn\nCairn keeps this project's multi-phase workflow state across sessions") {
		t.Errorf("the system prompt lacks cairn-mcp's instructions")
	}

	// The hook recorded the session under Claude Code's pid, for the MCP server to find.
	sessions, _ := filepath.Glob(filepath.Join(w.stateDir(), "sessions", "*.json"))
	if len(sessions) != 1 {
		t.Fatalf("sessions/ holds %v, want one record", sessions)
	}
	var s engine.Session
	readJSON(t, sessions[0], &s)
	if s.SessionID != sid || s.Source != "startup" || filepath.Base(sessions[0]) != itoa(s.PID)+".json" {
		t.Errorf("session record %s = %+v, want session %s from startup", sessions[0], s, sid)
	}
	if !exists(filepath.Join(w.stateDir(), ".gitignore")) {
		t.Errorf("the state directory has no .gitignore")
	}
}

// ---- 2 to 5: one project across sessions ----

// seedScript makes the model start an apex workflow, move it to plan and save a checkpoint, in
// one turn answering the prompt that contains marker.
func seedScript(w *World, marker string) {
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "apex", "context": seedContext})).Named("start_workflow"),
		mockapi.On(afterToolResult,
			mockapi.TextThenToolUse("analysis done", cairnTool("transition"), map[string]any{
				"to": "plan", "note": "analysis done", "checkpoint": map[string]any{"files": []string{"upload.go"}}})).Named("transition"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse(cairnTool("save_checkpoint"), map[string]any{
				"name": checkpointName, "data": map[string]any{"files": []string{"upload.go"}, "risk": "low"}})).Named("save_checkpoint"),
		mockapi.On(afterToolResult, mockapi.Text("planned")).Named("end of seed turn"),
	)
}

func requireScriptUsed(t testing.TB, w *World) {
	t.Helper()
	if u := w.Mock.Unused(); len(u) > 0 {
		t.Fatalf("script steps never reached: %v", u)
	}
}

// runScript runs a turn the script plays to its end: it must succeed, with the plugin loaded
// and every step of the script reached.
func (w *World) runScript(t *testing.T, o RunOptions) *Run {
	t.Helper()
	r := w.run(t, o)
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	requireScriptUsed(t, w)
	return r
}

// TestCairnAcrossSessions is scenarios 2 to 5 on one project, in order.
func TestCairnAcrossSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	var seedSession, workflowID string
	var nextRun *Run

	// 2. A scripted model calls start_workflow, transition and save_checkpoint through Claude
	// Code; every result is a success and the state lands on disk.
	ok := t.Run("2-tools-land-on-disk", func(t *testing.T) {
		seedScript(w, "SEED-PROMPT")
		r := w.runScript(t, RunOptions{Prompt: "SEED-PROMPT: plan the uploader retries"})
		seedSession = r.SessionID()
		if res := r.Result(t); res.Result != "planned" {
			t.Errorf("result %q", res.Result)
		}

		trs := requireToolResultsOK(t, r, 3)
		// The model got the same results in its requests.
		reqs := r.MainRequests()
		if got := reqs[len(reqs)-1].ToolResults(); len(got) != 3 || got[2].Text != trs[2].Text {
			t.Errorf("the last request's tool results %+v", got)
		}
		if !strings.Contains(trs[0].Text, `"analyze"`) || !strings.Contains(trs[1].Text, `"plan"`) || !strings.Contains(trs[2].Text, checkpointName) {
			t.Errorf("tool results do not say what happened:\n%s\n%s\n%s", trs[0].Text, trs[1].Text, trs[2].Text)
		}

		st := w.readState(t)
		workflowID = st.WorkflowID
		if st.Version != "2.0" || st.Type != "apex" || st.Context != seedContext || st.State != "plan" ||
			st.Status != "active" || !strings.HasPrefix(st.WorkflowID, "apex-") {
			t.Errorf("workflow-state.json = %+v", st)
		}
		if !st.Phases["analyze"].Completed || st.Phases["plan"].Completed {
			t.Errorf("phases %+v: want analyze completed, plan not", st.Phases)
		}
		// transition's checkpoint argument is kept in the metadata of the phase it left.
		left, _ := st.Phases["analyze"].Metadata["checkpoint"].(map[string]any)
		if files, _ := left["files"].([]any); len(files) != 1 || files[0] != "upload.go" {
			t.Errorf("phases.analyze.metadata = %v, want the transition's checkpoint", st.Phases["analyze"].Metadata)
		}
		if st.Owner == nil || st.Owner.SessionID != seedSession {
			t.Errorf("owner %+v, want session %s", st.Owner, seedSession)
		}
		if n := len(st.History); n == 0 || st.History[n-1].From != "analyze" || st.History[n-1].To != "plan" || st.History[n-1].SessionID != seedSession {
			t.Errorf("history %+v", st.History)
		}

		j := w.readJournal(t, workflowID)
		if len(j) < 2 {
			t.Fatalf("journal has %d records, want start and transition", len(j))
		}
		last := j[len(j)-1]
		if last.Revision != st.Revision {
			t.Errorf("journal ends at revision %d, snapshot is at %d", last.Revision, st.Revision)
		}
		var sawStart, sawMove bool
		for _, e := range j {
			d := e.detail(t)
			if d.Actor != "mcp" || d.Session != seedSession {
				t.Errorf("journal record %d (%s) detail %+v, want actor mcp, session %s", e.Seq, e.Event.Kind, d, seedSession)
			}
			sawStart = sawStart || e.Revision == 1
			sawMove = sawMove || (d.From == "analyze" && d.To == "plan")
		}
		if !sawStart || !sawMove {
			t.Errorf("journal lacks the start or the analyze->plan move: %+v", j)
		}

		var cp map[string]any
		readJSON(t, filepath.Join(w.stateDir(), "checkpoints", checkpointName+".json"), &cp)
		if cp["risk"] != "low" {
			t.Errorf("checkpoints/%s.json = %v", checkpointName, cp)
		}
	})
	if !ok {
		return
	}

	// 3 and 5 read the same run: the next session in the same project.
	t.Run("3-startup-gets-resume-report", func(t *testing.T) {
		// The seed session's client has exited. Its record, made older than an hour, is
		// removed by the next client's MCP server when it starts.
		exited, _ := filepath.Glob(filepath.Join(w.stateDir(), "sessions", "*.json"))
		past := time.Now().Add(-2 * time.Hour)
		for _, f := range exited {
			if err := os.Chtimes(f, past, past); err != nil {
				t.Fatal(err)
			}
		}
		nextRun = w.run(t, RunOptions{Prompt: "NEXT-SESSION: where were we?"})
		requireOK(t, nextRun)
		w.requirePluginLoaded(t, nextRun)
		if len(exited) != 1 {
			t.Errorf("after the seed session sessions/ held %v, want its one record", exited)
		}
		for _, f := range exited {
			if exists(f) {
				t.Errorf("the exited client's record %s was kept", filepath.Base(f))
			}
		}
		if now, _ := filepath.Glob(filepath.Join(w.stateDir(), "sessions", "*.json")); len(now) != 1 {
			t.Errorf("sessions/ holds %v, want this client's record only", now)
		}
		if nextRun.SessionID() == seedSession {
			t.Fatalf("a new session kept id %s", seedSession)
		}
		starts := requireHooksOK(t, nextRun, "SessionStart")
		if got := hookNames(starts); strings.Join(got, ",") != "SessionStart:startup" {
			t.Errorf("SessionStart hooks %v", got)
		}
		if out := parseHookOutput(t, starts[0]); out.Specific == nil || out.Specific.HookEventName != "SessionStart" {
			t.Errorf("SessionStart printed %q, want hookSpecificOutput with hookEventName", starts[0].Stdout)
		}
		// The previous session's client has exited: nothing needs the user's eye, and the
		// model is not told that another live session holds the workflow.
		if out := parseHookOutput(t, starts[0]); out.SystemMessage != "" {
			t.Errorf("SessionStart told the user %q, though the previous client has exited", out.SystemMessage)
		}
		report := cairnReport(t, nextRun.FirstMain(t))
		if strings.Contains(report, "another live session") {
			t.Errorf("the report calls the exited session live:\n%s", report)
		}
		for _, want := range []string{
			"workflow: " + workflowID + " (apex)",
			"context: " + seedContext,
			"phase plan (in_progress)",
			"completed: analyze\n",
		} {
			if !strings.Contains(report, want) {
				t.Errorf("the report lacks %q:\n%s", want, report)
			}
		}
	})

	// 5. The transition (or the Stop hook) wrote the position line into the auto-memory
	// directory Claude Code uses, and Claude Code itself loaded it into the next session.
	t.Run("5-auto-memory-loads", func(t *testing.T) {
		if nextRun == nil {
			t.Skip("scenario 3's run did not finish")
		}
		wantLine := "Active APEX workflow: analyze completed, planning “" + seedContext + "”"
		if got := nextRun.Init(t).MemoryPaths["auto"]; got != w.MemoryDir()+string(filepath.Separator) {
			t.Errorf("Claude Code's auto-memory dir %q, want %q", got, w.MemoryDir()+"/")
		}
		topic := readFile(t, filepath.Join(w.MemoryDir(), "cairn-workflow.md"))
		if !strings.Contains(topic, wantLine) {
			t.Errorf("cairn-workflow.md lacks %q:\n%s", wantLine, topic)
		}
		text, from, ok := AutoMemory(nextRun.FirstMain(t))
		if !ok {
			t.Fatal("the next session's first request carries no MEMORY.md")
		}
		if from != filepath.Join(w.MemoryDir(), "MEMORY.md") {
			t.Errorf("MEMORY.md loaded from %s, want %s", from, w.MemoryDir())
		}
		if !strings.Contains(text, "[Cairn workflow](cairn-workflow.md)") || !strings.Contains(text, wantLine) {
			t.Errorf("MEMORY.md as loaded lacks the Cairn entry with %q:\n%s", wantLine, text)
		}
		for _, h := range requireHooksOK(t, nextRun, "Stop") {
			if out := parseHookOutput(t, h); out.Decision != "" || out.SystemMessage != "" {
				t.Errorf("Stop printed %q", h.Stdout)
			}
		}
	})

	// 4. --resume gets the report, and so does /clear; after /clear the MCP server acts for
	// the new session.
	t.Run("4-resume-and-clear", func(t *testing.T) {
		// plan is an approval gate: a person approves before the move (claude -p cannot ask).
		if _, err := personEngine(t, w).Approve("go ahead"); err != nil {
			t.Fatal(err)
		}
		w.Mock.Script(
			mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("RESUMED-PROMPT")), mockapi.Text("resumed")).Named("resumed turn"),
			mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-CLEAR")),
				mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "implement", "from": "plan"})).Named("transition after /clear"),
			mockapi.On(afterToolResult, mockapi.Text("implementing")).Named("after the transition"),
		)
		r := w.runScript(t, RunOptions{Resume: seedSession, Inputs: []string{"RESUMED-PROMPT", "/clear", "AFTER-CLEAR: go on"}})

		inits := r.Inits()
		if len(inits) < 2 {
			t.Fatalf("%d init events, want one for the resumed session and one after /clear", len(inits))
		}
		if inits[0].SessionID != seedSession {
			t.Errorf("resumed session %s, want %s", inits[0].SessionID, seedSession)
		}
		cleared := inits[len(inits)-1].SessionID
		if cleared == seedSession || cleared == "" {
			t.Fatalf("/clear left session %q", cleared)
		}
		resumed, afterClear := requireTwoStarts(t, w, r, "resume", "RESUMED-PROMPT", "clear", "AFTER-CLEAR",
			"phase plan (in_progress)", "completed: analyze\n")
		if !resumed.Contains("planned") {
			t.Errorf("the resumed request lacks the earlier conversation")
		}
		// The person's yes is for plan's result: the step is to move on, not to plan again.
		if !resumed.Contains("Next: Phase plan is approved (by a person, with cairn approve): move on to implement or analyze.") {
			t.Errorf("the report after the approval does not say to move on")
		}
		if afterClear.Contains("RESUMED-PROMPT") {
			t.Errorf("the request after /clear still holds the conversation before it")
		}

		// The session before /clear ran in this same client, so it is over: the move after
		// /clear is not warned about another live session.
		if tr := requireToolResultsOK(t, r, 1)[0]; strings.Contains(tr.Text, "another live session") {
			t.Errorf("the transition after /clear warns of another live session: %s", tr.Text)
		}
		st := w.readState(t)
		if st.State != "implement" || !st.Phases["plan"].Completed {
			t.Errorf("after the transition the state is %+v", st)
		}
		if st.Owner == nil || st.Owner.SessionID != cleared {
			t.Errorf("owner %+v, want the session after /clear %s (the MCP server was started in %s)", st.Owner, cleared, seedSession)
		}
		j := w.readJournal(t, st.WorkflowID)
		d := j[len(j)-1].detail(t)
		if d.From != "plan" || d.To != "implement" || d.Session != cleared {
			t.Errorf("the journal's last record %+v, want plan->implement by session %s", d, cleared)
		}
	})

	// The two other SessionStart sources: a forked session (--fork-session, a new id) and
	// /compact (the same id) get the report too, with the phase scenario 4 left.
	t.Run("4-fork-and-compact", func(t *testing.T) {
		r := w.run(t, RunOptions{Resume: seedSession, Args: []string{"--fork-session"},
			Inputs: []string{"FORK-PROMPT", "/compact", "AFTER-COMPACT: go on"}})
		requireOK(t, r)
		w.requirePluginLoaded(t, r)
		fork := r.SessionID()
		if fork == seedSession || fork == "" {
			t.Fatalf("forked session %q, parent %s", fork, seedSession)
		}
		_, compacted := requireTwoStarts(t, w, r, "fork", "FORK-PROMPT", "compact", "AFTER-COMPACT",
			"phase implement (in_progress)", "completed: analyze, plan\n")
		if !compacted.Contains("MOCK-SUMMARY") {
			t.Errorf("the request after /compact lacks the compaction summary")
		}
	})
}

// requireTwoStarts checks that run r started two sessions, from sources first and second
// (SessionStart hooks that told the user nothing), and that the one main request after each
// prompt carries a report with phase and completed that calls no ended session live. It
// returns the two requests.
func requireTwoStarts(t *testing.T, w *World, r *Run, first, firstPrompt, second, secondPrompt, phase, completed string) (*mockapi.MessagesRequest, *mockapi.MessagesRequest) {
	t.Helper()
	starts := requireHooksOK(t, r, "SessionStart")
	if got := strings.Join(hookNames(starts), ","); got != "SessionStart:"+first+",SessionStart:"+second {
		t.Errorf("SessionStart hooks %v", got)
	}
	for _, h := range starts {
		if out := parseHookOutput(t, h); out.SystemMessage != "" {
			t.Errorf("%s told the user %q", h.Name, out.SystemMessage)
		}
	}
	a := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(firstPrompt)))
	b := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(secondPrompt)))
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("%d requests after %s and %d after %s, want 1 each", len(a), firstPrompt, len(b), secondPrompt)
	}
	for name, req := range map[string]*mockapi.MessagesRequest{first: a[0], second: b[0]} {
		report := cairnReport(t, req)
		if !strings.Contains(report, phase) || !strings.Contains(report, completed) {
			t.Errorf("after %s the report lacks %q or %q:\n%s", name, phase, completed, report)
		}
		if strings.Contains(report, "another live session") {
			t.Errorf("after %s the report calls an ended session live:\n%s", name, report)
		}
	}
	return a[0], b[0]
}

// 5, the Stop hook's part. When the position line cannot be written at the transition (here
// the topic file is blocked by a directory of the same name), the tool call still succeeds and
// says the line is owed; once the blockage is gone, the Stop hook at the end of the same turn
// writes it into Claude Code's auto-memory directory.
func TestCairnStopWritesOwedPositionLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	topic := filepath.Join(w.MemoryDir(), "cairn-workflow.md")
	if err := os.MkdirAll(topic, 0o755); err != nil {
		t.Fatal(err)
	}
	var unblocked atomic.Bool // set by the mock's handler goroutine
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("OWED-PROMPT")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "apex", "context": seedContext})).Named("start_workflow"),
		mockapi.On(afterToolResult, mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "plan"})).Named("transition"),
		// The transition has run when its result comes back: clear the blockage before the turn ends.
		mockapi.Step{Name: "unblock, end the turn", When: afterToolResult, Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			unblocked.Store(os.Remove(topic) == nil)
			return mockapi.Text("planned")
		}},
	)
	r := w.runScript(t, RunOptions{Prompt: "OWED-PROMPT: plan it"})
	if !unblocked.Load() {
		t.Fatalf("could not remove the directory blocking %s", topic)
	}
	trs := requireToolResultsOK(t, r, 2)
	if !strings.Contains(trs[1].Text, "auto-memory line not written") {
		t.Errorf("the transition's result does not say the L2 line is owed: %s", trs[1].Text)
	}

	wantLine := "Active APEX workflow: analyze completed, planning “" + seedContext + "”"
	stops := requireHooksOK(t, r, "Stop")
	if len(stops) != 1 || !strings.Contains(stops[0].Stderr, "wrote "+wantLine) {
		t.Errorf("the Stop hook did not report writing the owed line; Stop hooks: %+v", stops)
	}
	if got := readFile(t, topic); !strings.Contains(got, wantLine) {
		t.Errorf("cairn-workflow.md lacks %q:\n%s", wantLine, got)
	}
	if index := readFile(t, filepath.Join(w.MemoryDir(), "MEMORY.md")); !strings.Contains(index, "[Cairn workflow](cairn-workflow.md)") || !strings.Contains(index, wantLine) {
		t.Errorf("MEMORY.md lacks the Cairn entry with %q:\n%s", wantLine, index)
	}
	var l2 struct {
		Owed []string `json:"owed"`
	}
	readJSON(t, filepath.Join(w.stateDir(), "l2-state.json"), &l2)
	if len(l2.Owed) != 0 {
		t.Errorf("l2-state.json still owes %q", l2.Owed)
	}
}

// ---- 6. expiry ----

// engineAt opens Cairn's engine in this test process on the World's project, as a process
// running at a fixed time would, with the World's HOME (so L2 goes where Claude Code looks).
func engineAt(t *testing.T, w *World, at time.Time) *engine.Engine {
	t.Helper()
	return engineAs(t, w, at, earlierSession)
}

// engineAs is engineAt as the Claude Code session session.
func engineAs(t *testing.T, w *World, at time.Time, session string) *engine.Engine {
	t.Helper()
	env := map[string]string{"HOME": w.Home, "CLAUDE_PROJECT_DIR": w.Project}
	e, err := engine.Open(engine.Config{
		Getenv:    func(k string) string { return env[k] },
		WorkDir:   w.Project,
		Now:       func() time.Time { return at },
		SessionID: session,
		Actor:     "cli",
		YAML:      yamldoc.Codec{},
	})
	if err != nil {
		t.Fatalf("opening the engine on %s: %v", w.Project, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// personEngine opens the engine as a person's `cairn` command in the project does: no
// Claude Code session, so what it records takes no session's place.
func personEngine(t *testing.T, w *World) *engine.Engine {
	t.Helper()
	env := map[string]string{"HOME": w.Home, "CLAUDE_PROJECT_DIR": w.Project}
	e, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }, WorkDir: w.Project, Actor: "cli", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatalf("opening the engine on %s: %v", w.Project, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// 6. A workflow whose TTL passed is archived at the next session start, not deleted; the model
// is told in the report and the user gets a systemMessage; the expiry line goes to L2.
func TestCairnExpiredWorkflowArchived(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	// Started and moved two hours ago with a one-hour TTL: the record is what an abandoned
	// workflow looks like, written by the engine itself, not by hand.
	e := engineAt(t, w, time.Now().Add(-2*time.Hour))
	res, err := e.Start(engine.StartRequest{Type: "apex", Context: "migrate the billing tables", TTL: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	var rec stateRecord
	if err := json.Unmarshal(res.Workflow, &rec); err != nil || rec.WorkflowID == "" {
		t.Fatalf("start returned workflow %s: %v", res.Workflow, err)
	}
	id := rec.WorkflowID
	e.Close()

	r := w.run(t, RunOptions{Prompt: "EXPIRED: anything on record?"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)

	// L1: the active slot is empty and the archive holds the workflow, marked expired.
	if exists(filepath.Join(w.stateDir(), "workflow-state.json")) {
		t.Errorf("workflow-state.json is still there after the expiry")
	}
	index := readJSONL[struct {
		Dir        string `json:"dir"`
		WorkflowID string `json:"workflow_id"`
		Reason     string `json:"reason"`
	}](t, filepath.Join(w.stateDir(), "archive", "index.jsonl"))
	if len(index) != 1 || index[0].WorkflowID != id || index[0].Reason != "expired" {
		t.Fatalf("archive/index.jsonl = %+v, want %s expired", index, id)
	}
	archived := filepath.Join(w.stateDir(), "archive", index[0].Dir)
	var kept []string
	_ = filepath.WalkDir(archived, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte(id)) && bytes.Contains(data, []byte(`"status":"expired"`)) {
				kept = append(kept, p)
			}
		}
		return nil
	})
	if len(kept) == 0 {
		t.Errorf("archive dir %s holds no record of %s with status expired", archived, id)
	}

	// The model is told, in one line: what ended, and that there is nothing to resume.
	wantLine := `Cairn: no active workflow, nothing to resume; the last one ended ("Expired APEX workflow at plan for “migrate the billing tables”, archived"); go on with the user's request.`
	if first := r.FirstMain(t); !first.Contains(sessionStartContext) || !first.Contains(wantLine) || first.Contains("<cairn-state") {
		t.Errorf("the first request does not carry the one ending line %q:\n%s", wantLine, tail(first.MessagesText(), 2000))
	}
	// The user is told.
	starts := requireHooksOK(t, r, "SessionStart")
	out := parseHookOutput(t, starts[0])
	if !strings.HasPrefix(out.SystemMessage, "Cairn: ") || !strings.Contains(out.SystemMessage, "expired") || !strings.Contains(out.SystemMessage, id) {
		t.Errorf("SessionStart systemMessage %q, want one naming the expired workflow", out.SystemMessage)
	}
	// L2 has the expiry line.
	wantLine = "Expired APEX workflow at plan for “migrate the billing tables”, archived"
	if topic := readFile(t, filepath.Join(w.MemoryDir(), "cairn-workflow.md")); !strings.Contains(topic, wantLine) {
		t.Errorf("cairn-workflow.md lacks %q:\n%s", wantLine, topic)
	}
}

// A project with a workflow definition of its own: the hook binaries read it themselves, in the
// real client too. The report in the first request follows the project's definition (its
// phases and allowed moves), and both hooks end cleanly. A second definition named with an
// upper-case .MD, which Cairn does not read, is named with the step that makes it read, to the
// model (the report) and to the person (the SessionStart hook's line).
func TestCairnProjectDefinition(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	def := "---\nname: review-flow\nphases: [draft, read, comment]\ntransitions: {draft: [read], read: [comment, draft]}\nverbs: {read: reading}\n---\nReview a change.\n"
	w.writeDefinition(t, "review-flow.md", def)
	w.writeDefinition(t, "triage.MD", "---\nphases: [sort, fix]\n---\n")
	const notRead = "workflow definition .claude/workflows/triage.MD: not read: Cairn reads only files ending in .md, in lower case; rename it to triage.md"
	// An hour ago: an owner heard from a minute ago is another live session, whose report
	// asks to coordinate first; this test is about the definition's next phases.
	startAt(t, w, time.Now().Add(-time.Hour), engine.StartRequest{Type: "review-flow", Context: "review the uploader"}, "read").Close()

	r := w.run(t, RunOptions{Prompt: "PROJECT-DEFINITION: where are we?"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	report := cairnReport(t, r.FirstMain(t))
	if !r.FirstMain(t).Contains("Next: Continue phase read, then move on to comment or draft: entering comment completes the workflow: do its work first.") {
		t.Errorf("the next step does not follow the project's definition")
	}
	for _, want := range []string{"(review-flow)", "phase read", "completed: draft"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "no YAML reader") {
		t.Errorf("the hook did not read the project's definition:\n%s", report)
	}
	if !strings.Contains(report, notRead) {
		t.Errorf("the report does not tell the model triage.MD is not read:\n%s", report)
	}
	if out := parseHookOutput(t, requireHooksOK(t, r, "SessionStart")[0]); !strings.Contains(out.SystemMessage, notRead) {
		t.Errorf("the person is not told triage.MD is not read: %q", out.SystemMessage)
	}
	requireHooksOK(t, r, "Stop")
}

// ---- 7. blocking violations ----

// 7. Blocking violations make the Stop hook ask once, and only once: one "Stop hook feedback"
// continuation naming the violation, then the turn ends; a later turn with the same
// violations is not asked again. A new set of violations is a new question, asked once too.
func TestCairnStopAsksOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	const code, code2 = "V-TEST-03", "V-SEC-01"
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("REVIEW-PROMPT")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "apex", "context": "review the uploader"})).Named("start_workflow"),
		mockapi.On(afterToolResult, mockapi.ToolUse(cairnTool("set_enforcement"), map[string]any{
			"violations": []map[string]any{{"code": code, "severity": "HIGH", "details": "retry path has no tests"}}})).Named("set_enforcement"),
		mockapi.On(afterToolResult, mockapi.Text("review recorded")).Named("end of turn 1"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(stopFeedback)), mockapi.Text("I will write the tests next")).Named("answer the Stop hook"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-PROMPT")), mockapi.Text("second turn done")).Named("turn 2"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("THIRD-PROMPT")), mockapi.ToolUse(cairnTool("set_enforcement"), map[string]any{
			"violations": []map[string]any{
				{"code": code, "severity": "HIGH", "details": "retry path has no tests"},
				{"code": code2, "severity": "CRITICAL", "details": "token written to a log"}}})).Named("turn 3: a new set"),
		mockapi.On(afterToolResult, mockapi.Text("findings updated")).Named("end of turn 3"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(stopFeedback)), mockapi.Text("I will fix the log first")).Named("answer the Stop hook again"),
	)
	r := w.runScript(t, RunOptions{Inputs: []string{"REVIEW-PROMPT: review it", "SECOND-PROMPT: anything else?", "THIRD-PROMPT: look again"}})
	requireToolResultsOK(t, r, 3)

	st := w.readState(t)
	if st.Enforcement == nil || !st.Enforcement.Blocking || len(st.Enforcement.Violations) != 2 {
		t.Fatalf("enforcement on disk %+v, want two blocking violations", st.Enforcement)
	}

	feedback := stopFeedbacks(r)
	// One continuation for the first set (not repeated in turn 2), one for the second.
	if len(feedback) != 2 {
		t.Fatalf("the model got %d Stop hook continuations, want 2 (one per set of violations): %q", len(feedback), feedback)
	}
	if !strings.Contains(feedback[0], code+" (HIGH)") || strings.Contains(feedback[0], code2) {
		t.Errorf("the first continuation does not name just %s: %q", code, feedback[0])
	}
	if !strings.Contains(feedback[1], code2+" (CRITICAL)") {
		t.Errorf("the second continuation does not name %s: %q", code2, feedback[1])
	}

	// Turn 1: block, then the continuation's Stop (stop_hook_active) lets it end; turn 2: the
	// same set, not asked again; turn 3: a new set, asked once, then let end.
	if got := stopDecisions(t, r); got != "block,-,-,block,-" {
		t.Errorf("Stop decisions %s, want block,-,-,block,-", got)
	}
	var results []string
	for _, res := range r.Results() {
		results = append(results, res.Result)
	}
	if want := []string{"I will write the tests next", "second turn done", "I will fix the log first"}; !slices.Equal(results, want) {
		t.Errorf("turn results %q, want %q", results, want)
	}
}

// stopFeedbacks are the last user messages of r's agent-loop requests that carry a Stop
// hook's continuation ("Stop hook feedback"), in order: what the model was asked.
func stopFeedbacks(r *Run) []string {
	var out []string
	for _, m := range r.MainRequests() {
		if txt := m.LastUserText(); strings.Contains(txt, stopFeedback) {
			out = append(out, txt)
		}
	}
	return out
}

// lastToolResults are the tool results in r's last agent-loop request: what the model read.
func lastToolResults(t testing.TB, r *Run) []mockapi.ToolResult {
	t.Helper()
	reqs := r.MainRequests()
	if len(reqs) == 0 {
		t.Fatalf("this run sent the model no request (exit %d); stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return reqs[len(reqs)-1].ToolResults()
}

// writeDefinition writes the project's workflow definition .claude/workflows/<file>.
func (w *World) writeDefinition(t testing.TB, file, text string) {
	t.Helper()
	path := filepath.Join(w.Project, ".claude", "workflows", file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stopDecisions is the Stop hooks' decisions in order, "-" for one that let the turn end:
// "block,-" is a block and the continuation it asked for.
func stopDecisions(t testing.TB, r *Run) string {
	t.Helper()
	var decisions []string
	for _, h := range requireHooksOK(t, r, "Stop") {
		d := parseHookOutput(t, h).Decision
		if d == "" {
			d = "-"
		}
		decisions = append(decisions, d)
	}
	return strings.Join(decisions, ",")
}
