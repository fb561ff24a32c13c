package e2e

// Scenarios that prove the harness with the throwaway toy plugin (toyplugin/, testdata/toyplugin):
// what Cairn's own scenarios rely on, checked against the real client.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// toyCall is one line of the toy plugin's log: a hook call or a JSON-RPC message the MCP
// server read.
type toyCall struct {
	Who     string            `json:"who"` // "hook" or "mcp"
	PID     int               `json:"pid"`
	PPID    int               `json:"ppid"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
	Session string            `json:"session"` // the MCP server's CLAUDE_CODE_SESSION_ID
	// PluginDataExists: the hook found CLAUDE_PLUGIN_DATA already made.
	PluginDataExists bool `json:"plugin_data_exists"`
	Stdin            struct {
		Event          string `json:"hook_event_name"`
		Source         string `json:"source"`
		SessionID      string `json:"session_id"`
		StopHookActive bool   `json:"stop_hook_active"`
		TranscriptPath string `json:"transcript_path"`
		Cwd            string `json:"cwd"`
	} `json:"stdin"`
	RPC struct {
		Method string `json:"method"`
		Params struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	} `json:"rpc"`
}

// newToyWorld is a World for the toy plugin with its log at <Dir>/toy.jsonl.
func newToyWorld(t *testing.T) (*World, func() []toyCall) {
	t.Helper()
	w := newWorld(t, toyPlugin)
	logPath := filepath.Join(w.Dir, "toy.jsonl")
	w.Env = append(w.Env, "TOY_LOG="+logPath)
	return w, func() []toyCall { return readToyLog(t, logPath) }
}

func readToyLog(t *testing.T, path string) []toyCall {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the toy plugin's log: %v", err)
	}
	defer f.Close()
	var out []toyCall
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c toyCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("toy log line %q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

func hookCalls(calls []toyCall, event string) []toyCall {
	var out []toyCall
	for _, c := range calls {
		if c.Who == "hook" && c.Stdin.Event == event {
			out = append(out, c)
		}
	}
	return out
}

func rpcMethods(calls []toyCall) []string {
	var out []string
	for _, c := range calls {
		if c.Who == "mcp" && c.RPC.Method != "" {
			out = append(out, c.RPC.Method)
		}
	}
	return out
}

func hookNames(hs []HookEvent) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

// (a) The plugin loads with no plugin_errors, its MCP server connects, its SessionStart hook
// runs, and the hook's additionalContext reaches the first model request.
func TestToyPluginLoads(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	r := w.run(t, RunOptions{Prompt: "hello"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)

	sid := r.SessionID()
	init := r.Init(t)
	if !containsString(init.Tools, toyPlugin.Tool("echo")) {
		t.Errorf("init tools lack %s: %v", toyPlugin.Tool("echo"), init.Tools)
	}
	if got := hookNames(r.Hooks("SessionStart")); strings.Join(got, ",") != "SessionStart:startup" {
		t.Errorf("SessionStart hooks = %v", got)
	}

	first := w.Mock.FirstMain()
	if first == nil {
		t.Fatalf("the mock got no agent-loop request: %v", w.Mock.Paths())
	}
	want := "SessionStart hook additional context: TOY-CONTEXT source=startup session=" + sid
	if !first.Contains(want) {
		t.Errorf("first request lacks %q", want)
	}
	// The MCP server's instructions go into the same request, under its own heading.
	if !first.Contains("## plugin:toy:toy\nTOY-INSTRUCTIONS: the toy server echoes.") {
		t.Errorf("first request lacks the MCP server's instructions")
	}

	calls := toyLog()
	starts := hookCalls(calls, "SessionStart")
	if len(starts) != 1 {
		t.Fatalf("SessionStart ran %d times, want 1", len(starts))
	}
	h := starts[0]
	if h.Stdin.Source != "startup" || h.Stdin.SessionID != sid || h.Stdin.Cwd != w.Project {
		t.Errorf("SessionStart stdin = %+v", h.Stdin)
	}
	for k, v := range map[string]string{
		"CLAUDE_PLUGIN_ROOT": w.Plugin, "CLAUDE_PROJECT_DIR": w.Project, "HOME": w.Home,
		"CLAUDE_PLUGIN_DATA": filepath.Join(w.Home, ".claude", "plugins", "data", "toy-inline"),
	} {
		if h.Env[k] != v {
			t.Errorf("hook env %s = %q, want %q", k, h.Env[k], v)
		}
	}
	if !h.PluginDataExists {
		t.Errorf("CLAUDE_PLUGIN_DATA %s did not exist when the hook ran", h.Env["CLAUDE_PLUGIN_DATA"])
	}
	var server *toyCall
	for i := range calls {
		if calls[i].Who == "mcp" {
			server = &calls[i]
			break
		}
	}
	if server == nil {
		t.Fatal("the MCP server logged nothing")
	}
	// The server is spawned with the plugin variables but without CLAUDE_PID, in the launch dir.
	for k, v := range map[string]string{"CLAUDE_PLUGIN_ROOT": w.Plugin, "CLAUDE_PROJECT_DIR": w.Project,
		"CLAUDE_PLUGIN_DATA": h.Env["CLAUDE_PLUGIN_DATA"], "CLAUDE_CODE_SESSION_ID": sid} {
		if server.Env[k] != v {
			t.Errorf("MCP server env %s = %q, want %q", k, server.Env[k], v)
		}
	}
	if pid, ok := server.Env["CLAUDE_PID"]; ok {
		t.Errorf("MCP server env has CLAUDE_PID=%s; claude-code.md says only hooks get it", pid)
	}
	if server.Cwd != w.Project {
		t.Errorf("MCP server cwd %q, want %q", server.Cwd, w.Project)
	}
	// mcp-go v1.2.1 answers server/discover, so Claude Code talks the 2026-07-28 protocol: no
	// initialize at all.
	if m := rpcMethods(calls); len(m) < 2 || m[0] != "server/discover" || !containsString(m, "tools/list") {
		t.Errorf("MCP server read %v, want server/discover first, then tools/list", m)
	}
	// A hook's CLAUDE_PID and the MCP server's parent pid meet: both are Claude Code.
	for _, c := range calls {
		if c.Who == "mcp" && h.Env["CLAUDE_PID"] != itoa(c.PPID) {
			t.Errorf("MCP server's parent pid %d, hook's CLAUDE_PID %s", c.PPID, h.Env["CLAUDE_PID"])
			break
		}
	}
}

// Claude Code holds the first model request until the SessionStart hook is done: a slow hook's
// context still reaches it. Cairn's report depends on this.
func TestToySlowSessionStartHoldsFirstRequest(t *testing.T) {
	t.Parallel()
	w, _ := newToyWorld(t)
	const sleep = 1500 * time.Millisecond
	r := w.run(t, RunOptions{Prompt: "hello", Env: []string{"TOY_SESSION_START_SLEEP_MS=" + strconv.Itoa(int(sleep/time.Millisecond))}})
	requireOK(t, r)
	if !r.FirstMain(t).Contains("TOY-CONTEXT source=startup session=" + r.SessionID()) {
		t.Errorf("a SessionStart hook slept %v and its context missed the first request", sleep)
	}
}

// (b) The scripted model calls the toy MCP tool and the tool_result comes back to it.
func TestToyToolCall(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	tool := toyPlugin.Tool("echo")
	w.Mock.Script(
		mockapi.On(mockapi.OffersTool("ToolSearch"), mockapi.ToolUse(tool, map[string]any{"text": "pebble"})).Named("call echo"),
		mockapi.On(mockapi.EndsWithToolResult, mockapi.Text("echoed")).Named("after the result"),
	)
	r := w.run(t, RunOptions{Prompt: "echo pebble"})
	requireOK(t, r)
	if u := w.Mock.Unused(); len(u) > 0 {
		t.Fatalf("script steps never reached: %v", u)
	}
	sid := r.SessionID()
	res := r.Result(t)
	if res.Result != "echoed" || len(res.PermissionDenials) != 0 {
		t.Errorf("result %q, permission denials %s", res.Result, res.PermissionDenials)
	}

	reqs := w.Mock.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d agent-loop requests, want 2", len(reqs))
	}
	toolUse := reqs[1].ToolUses()
	trs := reqs[1].ToolResults()
	if len(toolUse) != 1 || len(trs) != 1 || trs[0].ToolUseID != toolUse[0].ID {
		t.Fatalf("tool uses %+v, tool results %+v", toolUse, trs)
	}
	wantText := "TOY-ECHO: pebble session=" + sid
	if trs[0].IsError || !strings.HasPrefix(trs[0].Text, wantText) {
		t.Errorf("tool result %+v, want it to start with %q", trs[0], wantText)
	}
	if got := r.ToolResults(); len(got) != 1 || got[0].Text != trs[0].Text {
		t.Errorf("stream-json tool results %+v", got)
	}

	var call *toyCall
	calls := toyLog()
	for i := range calls {
		if calls[i].RPC.Method == "tools/call" {
			call = &calls[i]
		}
	}
	if call == nil {
		t.Fatalf("the MCP server got no tools/call: %v", rpcMethods(calls))
	}
	if call.RPC.Params.Name != "echo" || call.RPC.Params.Meta["claudecode/toolUseId"] != toolUse[0].ID {
		t.Errorf("tools/call params %+v", call.RPC.Params)
	}
}

// (c) --resume continues the session and fires SessionStart with source resume.
func TestToyResume(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	w.Mock.Script(
		mockapi.On(mockapi.LastUserContains("PROMPT-ONE"), mockapi.Text("first answer")),
		mockapi.On(mockapi.LastUserContains("PROMPT-TWO"), mockapi.Text("second answer")),
	)
	r1 := w.run(t, RunOptions{Prompt: "PROMPT-ONE"})
	requireOK(t, r1)
	sid := r1.SessionID()
	r2 := w.run(t, RunOptions{Prompt: "PROMPT-TWO", Resume: sid})
	requireOK(t, r2)
	w.requirePluginLoaded(t, r2)

	if r2.SessionID() != sid {
		t.Errorf("resumed session %s, want %s", r2.SessionID(), sid)
	}
	if got := hookNames(r2.Hooks("SessionStart")); strings.Join(got, ",") != "SessionStart:resume" {
		t.Errorf("SessionStart hooks on resume = %v", got)
	}
	starts := hookCalls(toyLog(), "SessionStart")
	if len(starts) != 2 || starts[1].Stdin.Source != "resume" || starts[1].Stdin.SessionID != sid {
		t.Fatalf("SessionStart calls %+v", starts)
	}
	if _, _, ok := AutoMemory(r2.FirstMain(t)); ok {
		t.Errorf("AutoMemory found a MEMORY.md where none was written")
	}
	reqs := r2.MainRequests()
	if len(reqs) != 1 || len(r1.MainRequests()) != 1 {
		t.Fatalf("runs sent %d and %d requests, want 1 each", len(r1.MainRequests()), len(reqs))
	}
	last := reqs[0]
	if !last.Contains("SessionStart hook additional context: TOY-CONTEXT source=resume session="+sid) ||
		!last.Contains("first answer") {
		t.Errorf("the resumed request lacks the resume context or the earlier turn")
	}
	if h := r2.Requests[len(r2.Requests)-1].Header.Get("X-Claude-Code-Session-Id"); h != sid {
		t.Errorf("X-Claude-Code-Session-Id %q, want %q", h, sid)
	}
}

// --resume with --fork-session fires SessionStart with source fork and a new session id;
// /compact over stream-json input fires it with source compact and the same id. Cairn's
// SessionStart hook must handle both (no matcher that misses one).
func TestToyForkAndCompact(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	r1 := w.run(t, RunOptions{Prompt: "PROMPT-ONE"})
	requireOK(t, r1)
	parent := r1.SessionID()
	r2 := w.run(t, RunOptions{Resume: parent, Args: []string{"--fork-session"},
		Inputs: []string{"PROMPT-TWO", "/compact", "PROMPT-THREE"}})
	requireOK(t, r2)
	w.requirePluginLoaded(t, r2)

	fork := r2.SessionID()
	if fork == parent || fork == "" {
		t.Fatalf("forked session id %q, parent %q", fork, parent)
	}
	if got := hookNames(r2.Hooks("SessionStart")); strings.Join(got, ",") != "SessionStart:fork,SessionStart:compact" {
		t.Errorf("SessionStart hooks = %v", got)
	}
	starts := hookCalls(toyLog(), "SessionStart")
	if len(starts) != 3 || starts[1].Stdin.Source != "fork" || starts[1].Stdin.SessionID != fork ||
		starts[2].Stdin.Source != "compact" || starts[2].Stdin.SessionID != fork {
		t.Fatalf("SessionStart calls %+v", starts)
	}
	// One compaction request: the mock's default summary is accepted the first time.
	var compactions, mains int
	for _, q := range r2.Requests {
		switch {
		case q.Messages == nil:
		case mockapi.IsCompaction(q.Messages):
			compactions++
		case mockapi.IsMain(q.Messages):
			mains++
		}
	}
	if compactions != 1 || mains != 2 {
		t.Errorf("%d compaction and %d agent-loop requests, want 1 and 2", compactions, mains)
	}
	after := r2.MainRequests()[mains-1]
	if !after.Contains("MOCK-SUMMARY") || !after.Contains("TOY-CONTEXT source=compact session="+fork) {
		t.Errorf("the request after /compact lacks the summary or the compact context")
	}
}

// (d) /clear sent over stream-json input fires SessionStart with source clear and a new
// session id, in the same process; the MCP server is not restarted and keeps the old id.
func TestToyClear(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	tool := toyPlugin.Tool("echo")
	w.Mock.Script(
		mockapi.On(mockapi.LastUserContains("PROMPT-ONE"), mockapi.Text("before clear")),
		mockapi.On(mockapi.LastUserContains("PROMPT-TWO"), mockapi.ToolUse(tool, map[string]any{"text": "after"})),
		mockapi.On(mockapi.EndsWithToolResult, mockapi.Text("after clear")),
	)
	r := w.run(t, RunOptions{Inputs: []string{"PROMPT-ONE", "/clear", "PROMPT-TWO"}})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	if u := w.Mock.Unused(); len(u) > 0 {
		t.Fatalf("script steps never reached: %v", u)
	}

	inits := r.Inits()
	if len(inits) < 2 {
		t.Fatalf("%d init events, want one at start-up and one after /clear", len(inits))
	}
	oldID, newID := inits[0].SessionID, inits[len(inits)-1].SessionID
	if oldID == newID {
		t.Fatalf("/clear kept session %s", oldID)
	}
	if got := hookNames(r.Hooks("SessionStart")); strings.Join(got, ",") != "SessionStart:startup,SessionStart:clear" {
		t.Errorf("SessionStart hooks = %v", got)
	}
	calls := toyLog()
	starts := hookCalls(calls, "SessionStart")
	if len(starts) != 2 || starts[1].Stdin.Source != "clear" || starts[1].Stdin.SessionID != newID {
		t.Fatalf("SessionStart calls %+v", starts)
	}

	after := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("PROMPT-TWO")))
	if len(after) != 1 {
		t.Fatalf("%d requests for the prompt after /clear, want 1", len(after))
	}
	if !after[0].Contains("TOY-CONTEXT source=clear session="+newID) || after[0].Contains("PROMPT-ONE") {
		t.Errorf("the request after /clear lacks the clear context or still holds the old conversation")
	}
	if n := strings.Count(strings.Join(rpcMethods(calls), " "), "server/discover"); n != 1 {
		t.Errorf("the MCP server was contacted %d times with server/discover, want 1 (no restart on /clear)", n)
	}
	trs := r.ToolResults()
	if len(trs) != 1 || !strings.Contains(trs[0].Text, "session="+oldID) {
		t.Errorf("tool result after /clear %+v, want the server's stale session %s", trs, oldID)
	}
}

// (e) A Stop hook's decision:block makes the model continue once; the next Stop has
// stop_hook_active true, and the hook lets it end.
func TestToyStopBlocksOnce(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	w.Mock.Script(
		mockapi.On(nil, mockapi.Text("first answer")),
		mockapi.On(mockapi.LastUserContains("TOY-STOP-REASON"), mockapi.Text("chore finished")),
	)
	r := w.run(t, RunOptions{Prompt: "do the thing", Env: []string{"TOY_STOP_BLOCK=1"}})
	requireOK(t, r)
	if u := w.Mock.Unused(); len(u) > 0 {
		t.Fatalf("the model was not asked to continue: unused steps %v", u)
	}
	if res := r.Result(t); res.Result != "chore finished" {
		t.Errorf("result %q", res.Result)
	}
	stops := hookCalls(toyLog(), "Stop")
	if len(stops) != 2 || stops[0].Stdin.StopHookActive || !stops[1].Stdin.StopHookActive {
		t.Fatalf("Stop calls (want active false then true): %+v", stops)
	}
	if n := len(w.Mock.MainRequests()); n != 2 {
		t.Errorf("%d model requests, want 2 (one continuation)", n)
	}
	cont := w.Mock.MainRequests()[1]
	if got := cont.LastUserText(); !strings.Contains(got, "Stop hook feedback:\nTOY-STOP-REASON: finish the toy chore first") {
		t.Errorf("continuation's last user message %q", got)
	}
	if hs := r.Hooks("Stop"); len(hs) != 2 || !strings.Contains(hs[0].Stdout, `"decision":"block"`) {
		t.Errorf("Stop hook events %+v", hs)
	}
}

// (f) Auto-memory: MEMORY.md under ~/.claude/projects/<sanitized git root>/memory/ reaches the
// first request as the first block of the first user message, a system-reminder naming the file.
func TestToyAutoMemory(t *testing.T) {
	t.Parallel()
	w, _ := newToyWorld(t)
	line := "- [Toy fact](toy.md) — TOY-MEMORY-LINE pebbles are round"
	path := w.writeMemory(t, line+"\n")
	r := w.run(t, RunOptions{Prompt: "what do you remember"})
	requireOK(t, r)

	if got := r.Init(t).MemoryPaths["auto"]; got != w.MemoryDir()+string(filepath.Separator) {
		t.Errorf("init memory_paths.auto = %q, want %q", got, w.MemoryDir()+"/")
	}
	first := r.FirstMain(t)
	if len(first.Messages) == 0 || len(first.Messages[0].Content) == 0 {
		t.Fatalf("first request has no messages")
	}
	if text, from, ok := AutoMemory(first); !ok || text != line || from != path {
		t.Errorf("AutoMemory = %q from %q (%v), want %q from %q", text, from, ok, line, path)
	}
	m0 := first.Messages[0]
	block := m0.Content[0].Text
	wantHead := "Contents of " + path + " (user's auto-memory, persists across conversations):\n\n" + line
	if m0.Role != "user" || !strings.HasPrefix(block, "<system-reminder>") || !strings.Contains(block, wantHead) {
		t.Errorf("messages[0] (%s) block 0 = %q, want a system-reminder holding %q", m0.Role, block, wantHead)
	}
	if strings.Contains(first.SystemText(), "TOY-MEMORY-LINE") {
		t.Errorf("MEMORY.md is in the system prompt too; expected it only in messages[0]")
	}
	if !strings.Contains(first.SystemText(), "You have a persistent file-based memory at `"+w.MemoryDir()+"/`") {
		t.Errorf("the system prompt does not name the memory directory %s", w.MemoryDir())
	}
}

// A broken manifest is reported in init's plugin_errors (and the run still exits 0), so
// requirePluginLoaded's check is not vacuous.
func TestBrokenPluginIsReported(t *testing.T) {
	t.Parallel()
	w, _ := newToyWorld(t)
	broken := t.TempDir()
	if err := copyTree(w.Plugin, broken); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, ".claude-plugin", "plugin.json"), []byte(`{"name": 42}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Plugin = broken
	r := w.run(t, RunOptions{Prompt: "hi"})
	if r.ExitCode != 0 {
		t.Errorf("exit %d; a broken plugin was expected to load silently with exit 0", r.ExitCode)
	}
	init := r.Init(t)
	if len(init.PluginErrors) != 1 || init.PluginErrors[0].Path != broken ||
		!strings.Contains(init.PluginErrors[0].Message, "invalid manifest") {
		t.Errorf("plugin_errors = %+v", init.PluginErrors)
	}
	if len(r.Hooks("SessionStart")) != 0 || len(init.MCPServers) != 0 {
		t.Errorf("a dropped plugin still ran hooks %v or servers %v", r.Hooks("SessionStart"), init.MCPServers)
	}
}

// The hard timeout kills Claude Code with its whole process group: its MCP server too.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	w.Mock.Script(mockapi.On(nil, mockapi.Reply{Delay: time.Hour}))
	r, err := w.tryRun(t, RunOptions{Prompt: "hang", Timeout: 4 * time.Second})
	if !errors.Is(err, errTimedOut) {
		t.Fatalf("tryRun err = %v, want errTimedOut (exit %d)", err, r.ExitCode)
	}
	if runtime.GOOS == "windows" {
		return
	}
	var pid int
	for _, c := range toyLog() {
		if c.Who == "mcp" {
			pid = c.PID
		}
	}
	if pid == 0 {
		t.Fatal("the MCP server never started, so the kill cannot be checked")
	}
	deadline := time.Now().Add(3 * time.Second)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if processAlive(pid) {
		t.Errorf("MCP server pid %d outlived the killed run", pid)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
