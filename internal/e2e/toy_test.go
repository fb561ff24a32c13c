package e2e

// Scenarios that prove the harness with the throwaway toy plugin (toyplugin/, testdata/toyplugin):
// facts of the real client that Cairn's design rests on but Cairn's own scenarios (cairn_test.go)
// cannot show directly (what a hook's and the MCP server's environments hold, that the first
// request waits for a slow SessionStart hook), and that the harness's checks are not vacuous (a
// broken plugin is reported, a timeout kills the whole process group). The mechanics the Cairn
// scenarios exercise themselves (tool calls, --resume, /clear, Stop blocking, auto-memory) are
// proved there, with Cairn's binaries.

import (
	"bufio"
	"bytes"
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
	logPath := toyLogPath(w)
	w.Env = append(w.Env, "TOY_LOG="+logPath)
	return w, func() []toyCall { return readToyLog(t, logPath) }
}

func toyLogPath(w *World) string { return filepath.Join(w.Dir, "toy.jsonl") }

// toyLogHas reports whether the toy log at path has a line from who ("hook" or "mcp"). Unlike
// readToyLog it may run off the test's goroutine, and it skips a line still being written.
func toyLogHas(path, who string) bool {
	b, _ := os.ReadFile(path)
	for line := range bytes.Lines(b) {
		var c toyCall
		if json.Unmarshal(line, &c) == nil && c.Who == who {
			return true
		}
	}
	return false
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

// The plugin loads with no plugin_errors, its MCP server connects, its SessionStart hook
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

// A run killed at its timeout goes with its whole process group: its MCP server too. The
// kill is asked for (RunOptions.Kill) and takes the timeout's path.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	w.Mock.Script(mockapi.On(nil, mockapi.Reply{Delay: time.Hour}))
	// The kill comes once the MCP server has read its first message: the check needs the
	// server started, and on a loaded machine the client takes seconds to start it.
	kill, stopWaiting := make(chan struct{}), make(chan struct{})
	defer close(stopWaiting)
	go func() {
		for {
			if toyLogHas(toyLogPath(w), "mcp") {
				close(kill)
				return
			}
			select {
			case <-stopWaiting:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	r, err := w.tryRun(t, RunOptions{Prompt: "hang", Kill: kill})
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
	// Killed with its group, it is gone within moments; 30 s is for a loaded machine (the
	// mock's reply, which it would otherwise wait for, is an hour away).
	deadline := time.Now().Add(30 * time.Second)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if processAlive(pid) {
		t.Errorf("MCP server pid %d outlived the killed run", pid)
	}
}

// Claude Code appends transcript rows on a timer (100 ms), and its first append comes after
// its first request has gone out. A client killed at that request leaves no transcript, and
// `claude --continue` then starts a new session (SessionStart "startup", exit 0) as if there
// were nothing to continue; once the prompt is on disk it resumes the killed session, whose
// record in ~/.claude/sessions is left behind. Whichever way the race goes, --continue follows
// the transcript the kill left: a test that kills a client to continue it waits first for the
// rows it needs (TestCairnKilledThenContinued waits for its tool result).
func TestToyContinueFollowsTranscriptOnDisk(t *testing.T) {
	t.Parallel()
	w, _ := newToyWorld(t)
	kill := make(chan struct{})
	w.Mock.Script(mockapi.Step{Name: "kill at the first request", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("KILLED-PROMPT")),
		Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			close(kill)
			return mockapi.Reply{Delay: time.Hour}
		}})
	killed, err := w.tryRun(t, RunOptions{Prompt: "KILLED-PROMPT: hello", Kill: kill})
	if !errors.Is(err, errTimedOut) || killed.SessionID() == "" {
		t.Fatalf("the client was not killed at its first request (session %q): %v", killed.SessionID(), err)
	}
	// The client is gone: what is on disk now is what the kill left.
	prompted := w.awaitTranscript("KILLED-PROMPT", 0)
	t.Logf("after the kill a transcript holds the prompt: %v", prompted)

	r := w.run(t, RunOptions{Prompt: "CONTINUED-PROMPT: go on", Args: []string{"--continue"}})
	requireOK(t, r)
	starts := strings.Join(hookNames(r.Hooks("SessionStart")), ",")
	switch {
	case !prompted && (r.SessionID() == killed.SessionID() || starts != "SessionStart:startup"):
		t.Errorf("with no transcript on disk --continue ran session %s (killed: %s), SessionStart hooks %s; want a new session from startup", r.SessionID(), killed.SessionID(), starts)
	case prompted && (r.SessionID() != killed.SessionID() || starts != "SessionStart:resume"):
		t.Errorf("with the prompt on disk --continue ran session %s (killed: %s), SessionStart hooks %s; want the killed session resumed", r.SessionID(), killed.SessionID(), starts)
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

// Claude Code rewrites a tool call's arguments against the tool's input schema before the MCP
// server sees them, by the declared type of each top-level property: a string holding a JSON
// object becomes the object where the type is "object" (also {"type":["object","array"]}), one
// holding an array becomes the array only where the type is "array" (not for the union), "true"
// and "false" become booleans only where it is "boolean", "123" a number only where it is
// "number". A property typed "string" gets the string unchanged, whatever it holds, and values
// nested in objects and arrays are never rewritten. Cairn's argument decoding rests on this
// (mcptools/decode.go).
func TestToyArgumentsRewrittenBySchema(t *testing.T) {
	t.Parallel()
	w, _ := newToyWorld(t)
	fields := []string{"str", "bool", "num", "obj", "arr", "json", "map"}
	cases := []struct {
		value   string
		rewrite map[string]string // field -> the JSON that arrives, where not the string itself
	}{
		{"true", map[string]string{"bool": `true`}},
		{"false", map[string]string{"bool": `false`}},
		{"123", map[string]string{"num": `123`}},
		{"null", nil},
		{`{"a":1}`, map[string]string{"obj": `{"a":1}`, "json": `{"a":1}`, "map": `{"a":1}`}},
		{`["x"]`, map[string]string{"arr": `["x"]`}},
	}
	inputs := make([]map[string]any, 0, len(cases)+1)
	wants := make([]string, 0, len(cases)+1)
	for _, c := range cases {
		in, want := map[string]any{}, map[string]json.RawMessage{}
		for _, f := range fields {
			in[f] = c.value
			s, _ := json.Marshal(c.value)
			want[f] = s
			if r, ok := c.rewrite[f]; ok {
				want[f] = json.RawMessage(r)
			}
		}
		b, _ := json.Marshal(want)
		inputs, wants = append(inputs, in), append(wants, string(b))
	}
	nested := map[string]any{"map": map[string]any{"K": "true", "N": "123"}, "arr": []any{"false", `{"a":1}`}, "obj": map[string]any{"x": "null"}}
	b, _ := json.Marshal(nested)
	inputs, wants = append(inputs, nested), append(wants, string(b))

	w.Mock.Script(inTurn("PROBE-PROMPT", "probed", len(inputs), func(i int) (string, mockapi.Reply) {
		return "probe " + itoa(i), mockapi.TextThenToolUse("probing", toyPlugin.Tool("probe"), inputs[i])
	})...)
	r := w.runScript(t, RunOptions{Prompt: "PROBE-PROMPT: probe"})
	trs := r.ToolResults()
	if len(trs) != len(inputs) {
		t.Fatalf("%d tool results, want %d: %+v", len(trs), len(inputs), trs)
	}
	for i, tr := range trs {
		if got := strings.TrimPrefix(tr.Text, "TOY-ARGS: "); tr.IsError || got != wants[i] {
			t.Errorf("the model sent %v; the server got %s (error %v), want %s", inputs[i], got, tr.IsError, wants[i])
		}
	}
}

// The agent's Bash tool gets CLAUDE_PID too, the same pid the hooks get (Claude Code's own),
// and that pid is an ancestor of the shell the command runs in: cairn run there can name
// the client it runs in as the hooks and the MCP server do.
func TestToyBashSeesHooksClaudePID(t *testing.T) {
	t.Parallel()
	w, toyLog := newToyWorld(t)
	// The shell's ancestors, nearest first, each as anc=<pid>.
	cmd := `echo "CLAUDE_PID=${CLAUDE_PID-unset}"; p=$$; while [ "$p" -gt 1 ]; do echo "anc=$p"; p=$(ps -o ppid= -p "$p" | tr -d ' '); done`
	_, out := bashTurn(t, w, "PID-PROMPT", "PID-PROMPT: show the pid", map[string]any{"command": cmd, "description": "show the pid"}, "shown")
	t.Logf("Bash gave back:\n%s", out)
	starts := hookCalls(toyLog(), "SessionStart")
	if len(starts) != 1 || starts[0].Env["CLAUDE_PID"] == "" {
		t.Fatalf("SessionStart hooks %+v, want one with CLAUDE_PID", starts)
	}
	pid := starts[0].Env["CLAUDE_PID"]
	if !strings.Contains(out, "CLAUDE_PID="+pid+"\n") {
		t.Errorf("Bash's CLAUDE_PID is not the hook's %s:\n%s", pid, out)
	}
	if !strings.Contains(out, "anc="+pid+"\n") {
		t.Errorf("the hook's CLAUDE_PID %s is not an ancestor of Bash's shell:\n%s", pid, out)
	}
}
