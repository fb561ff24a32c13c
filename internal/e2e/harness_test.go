package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// runTimeout bounds one Claude Code process; the whole process group is killed after it.
const runTimeout = 90 * time.Second

// buildRoot holds the plugins built once per test binary (see buildPlugin).
var buildRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-e2e-build-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: making a build directory: %v\n", err)
		os.Exit(1)
	}
	// Resolved, so plugin paths compare equal to what Claude Code reports (macOS /var).
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	buildRoot = dir
	killGroupsOnSignal(func() { os.RemoveAll(buildRoot) })
	code := m.Run()
	os.RemoveAll(buildRoot)
	os.Exit(code)
}

// ---- Claude Code itself ----

var claude struct {
	once sync.Once
	path string
	skip string
	err  error
}

// claudeBin returns the Claude Code executable: $CAIRN_CLAUDE_BIN when set, else the one
// .ci/install-claude.sh installs (or finds) in its cache. It skips the test only when Node.js
// or npm is missing; any other problem fails it.
func claudeBin(t testing.TB) string {
	t.Helper()
	claude.once.Do(func() {
		if p := os.Getenv("CAIRN_CLAUDE_BIN"); p != "" {
			claude.path = p
			if _, err := os.Stat(p); err != nil {
				claude.err = fmt.Errorf("CAIRN_CLAUDE_BIN=%s: %w; unset it to let the harness run .ci/install-claude.sh", p, err)
			}
			return
		}
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				claude.skip = fmt.Sprintf("end-to-end suite skipped: %s is not on PATH; install Node.js 20+ (with npm) or set CAIRN_CLAUDE_BIN to a Claude Code executable", tool)
				return
			}
		}
		root, err := rootOnce()
		if err != nil {
			claude.err = fmt.Errorf("finding .ci/install-claude.sh: %w", err)
			return
		}
		script := filepath.Join(root, ".ci", "install-claude.sh")
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "CI=true")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			claude.err = fmt.Errorf("installing Claude Code with %s: %w\n%s", script, err, stderr.String())
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		claude.path = strings.TrimSpace(lines[len(lines)-1])
		if _, err := os.Stat(claude.path); err != nil {
			claude.err = fmt.Errorf("install-claude.sh printed %q, which is not a file: %w", claude.path, err)
		}
	})
	if claude.skip != "" {
		t.Skip(claude.skip)
	}
	if claude.err != nil {
		t.Fatal(claude.err)
	}
	return claude.path
}

var rootOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's working directory")
		}
		dir = parent
	}
})

// repoRoot is the module root (the directory holding go.mod).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := rootOnce()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	return dir
}

// ---- plugins ----

// PluginSpec says how to assemble a plugin directory for --plugin-dir.
type PluginSpec struct {
	Name   string // plugin name from plugin.json (tool names are mcp__plugin_<Name>_<Server>__<tool>)
	Server string // MCP server name from .mcp.json
	// Src is the plugin source directory, relative to the repository root.
	Src string
	// Files lists the entries of Src to copy (files or directories); nil copies all of Src.
	Files []string
	// Binaries maps a name under the plugin's bin/ to the Go package (relative to the repository
	// root, "./...") built there.
	Binaries map[string]string
}

// AllowRule is the --allowedTools rule that lets every tool of the plugin's MCP server run in -p.
func (p PluginSpec) AllowRule() string { return toolPrefix(p.Name, p.Server) }

// Tool is the name the model uses for one of the plugin's MCP tools.
func (p PluginSpec) Tool(name string) string { return toolPrefix(p.Name, p.Server) + "__" + name }

var unsafeToolChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func toolPrefix(plugin, server string) string {
	return "mcp__plugin_" + unsafeToolChars.ReplaceAllString(plugin, "_") + "_" + unsafeToolChars.ReplaceAllString(server, "_")
}

// toyPlugin is the throwaway plugin that proves the harness.
var toyPlugin = PluginSpec{
	Name:   "toy",
	Server: "toy",
	Src:    "internal/e2e/testdata/toyplugin",
	Binaries: map[string]string{
		"toy-hook": "./internal/e2e/toyplugin/toy-hook",
		"toy-mcp":  "./internal/e2e/toyplugin/toy-mcp",
	},
}

// cairnPlugin is Cairn itself, assembled as `make build` would for --plugin-dir use: the
// plugin files from the repository root and the binaries in bin/, stamped with the plugin's
// release/checksums.txt (hooks/launch runs bin/<name> first while the stamp matches). The lead's scenarios use it once those packages exist.
var cairnPlugin = PluginSpec{
	Name:   "cairn",
	Server: "cairn",
	Src:    ".",
	Files:  []string{".claude-plugin", ".mcp.json", "hooks", "skills", "commands", "release"},
	Binaries: map[string]string{
		"cairn-mcp":           "./mcpserver",
		"cairn-session-start": "./hooks/sessionstart",
		"cairn-stop":          "./hooks/stop",
		"cairn-event":         "./hooks/event",
		"cairn":               "./cmd/cairn",
	},
}

var plugins struct {
	mu    sync.Mutex
	built map[string]*builtPlugin
}

type builtPlugin struct {
	once sync.Once
	dir  string
	err  error
}

// buildPlugin assembles spec into a directory of its own (copying its files and building its
// binaries into bin/) once per test binary, and returns that directory for --plugin-dir.
// Scenarios share it: nothing writes there at run time (per-install data goes to
// CLAUDE_PLUGIN_DATA under the isolated HOME).
func buildPlugin(t testing.TB, spec PluginSpec) string {
	t.Helper()
	plugins.mu.Lock()
	if plugins.built == nil {
		plugins.built = map[string]*builtPlugin{}
	}
	b := plugins.built[spec.Name]
	if b == nil {
		b = &builtPlugin{}
		plugins.built[spec.Name] = b
	}
	plugins.mu.Unlock()
	b.once.Do(func() {
		root, err := rootOnce()
		if err != nil {
			b.err = err
			return
		}
		b.dir, b.err = assemble(root, spec)
	})
	if b.err != nil {
		t.Fatalf("building plugin %s: %v", spec.Name, b.err)
	}
	return b.dir
}

func assemble(root string, spec PluginSpec) (string, error) {
	dst := filepath.Join(buildRoot, spec.Name)
	src := filepath.Join(root, filepath.FromSlash(spec.Src))
	entries := spec.Files
	if entries == nil {
		list, err := os.ReadDir(src)
		if err != nil {
			return "", err
		}
		for _, e := range list {
			entries = append(entries, e.Name())
		}
	}
	for _, e := range entries {
		if err := copyTree(filepath.Join(src, e), filepath.Join(dst, e)); err != nil {
			return "", err
		}
	}
	// In parallel: linking dominates once the build cache is warm.
	errs := make(chan error, len(spec.Binaries))
	for name, pkg := range spec.Binaries {
		go func() {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dst, "bin", name), pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
				return
			}
			errs <- nil
		}()
	}
	var all []error
	for range spec.Binaries {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return "", err
	}
	// make build's stamp: these binaries are of this plugin's sources, and the hooks check that
	// themselves (.self-check, hooks/launch).
	if sums, err := os.ReadFile(filepath.Join(dst, "release", "checksums.txt")); err == nil {
		if err := os.WriteFile(filepath.Join(dst, "bin", ".checksums"), sums, 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, "bin", ".self-check"), nil, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// copyTree copies a file or a directory tree, keeping the executable bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

// ---- a world: mock API, HOME, project ----

// World is one isolated setting for Claude Code runs: its own mock API, HOME and git project.
// Runs in one World share the mock (and its script and recordings), HOME and project, so a
// scenario can start, resume and start again against the same state.
type World struct {
	Dir     string // the temp directory holding the rest
	Home    string // HOME for every run
	Project string // a git repository; the launch directory
	Tmp     string // TMPDIR: Claude Code's sockets (cc-socks/) and scratch; short, for socket paths
	Plugin  string // --plugin-dir; "" for an install World, which runs its installed plugins
	Spec    PluginSpec
	Mock    *mockapi.Server
	// Env is added to every run's environment (after the harness's own variables).
	Env []string

	runMu sync.Mutex // runs in one World are sequential: Run.Requests relies on it
}

// newWorld makes a World for the plugin built from spec.
func newWorld(t *testing.T, spec PluginSpec) *World {
	t.Helper()
	claudeBin(t) // skip before building anything when Node is missing
	w := newBareWorld(t, spec)
	w.Plugin = buildPlugin(t, spec)
	return w
}

// newBareWorld is a World without a built plugin: its own mock, HOME, short TMPDIR and a
// fresh git project. The caller provides the plugin (newWorld builds one; the install test
// installs one through the claude CLI).
func newBareWorld(t *testing.T, spec PluginSpec) *World {
	t.Helper()
	dir := t.TempDir()
	// Resolve symlinks so paths compare equal to what Claude Code reports (macOS /var -> /private/var).
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	w := &World{
		Dir:     dir,
		Home:    filepath.Join(dir, "home"),
		Project: filepath.Join(dir, "project"),
		Spec:    spec,
		Mock:    mockapi.New(),
	}
	t.Cleanup(w.Mock.Close)
	// Unix socket paths are capped near 104 bytes, so TMPDIR is not under the (long) TempDir.
	tmp, err := os.MkdirTemp("", "ce2e")
	if err != nil {
		t.Fatal(err)
	}
	w.Tmp = tmp
	t.Cleanup(func() { os.RemoveAll(tmp) })
	for _, d := range []string{w.Home, w.Project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := exec.Command("git", "init", "-q", w.Project)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v\n%s", w.Project, err, out)
	}
	return w
}

// MemoryDir is Claude Code's auto-memory directory for the World's project:
// ~/.claude/projects/<sanitized git root>/memory.
func (w *World) MemoryDir() string {
	return filepath.Join(w.TranscriptDir(), "memory")
}

// TranscriptDir holds Claude Code's session transcripts (<session id>.jsonl) for the World's
// project; `--continue` picks from these.
func (w *World) TranscriptDir() string {
	return filepath.Join(w.Home, ".claude", "projects", sanitizePath(w.Project))
}

// awaitTranscript waits until a transcript of the project holds s, and reports whether one did
// within limit. Claude Code appends its queued transcript rows on a timer, not as each row is
// made, so a row the model's request already carries may not be on disk yet.
func (w *World) awaitTranscript(s string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(10 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(w.TranscriptDir(), "*.jsonl"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil && bytes.Contains(data, []byte(s)) {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// sanitizePath is Claude Code's project directory name: every character outside [A-Za-z0-9]
// becomes '-'. (Paths over 200 characters are also cut and hashed; temp paths never are.)
func sanitizePath(p string) string { return nonAlnum.ReplaceAllString(p, "-") }

// env is the environment of a run: the test's own, less anything that would reach a real
// account or leak the caller's Claude Code session, plus the isolation and the mock.
func (w *World) env(extra []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CLAUDE"), strings.HasPrefix(k, "ANTHROPIC"),
			strings.HasPrefix(k, "OTEL_"), strings.HasPrefix(k, "XDG_"),
			strings.EqualFold(k, "HTTP_PROXY"), strings.EqualFold(k, "HTTPS_PROXY"),
			strings.EqualFold(k, "ALL_PROXY"), strings.EqualFold(k, "NO_PROXY"),
			k == "HOME", k == "PWD", k == "OLDPWD", k == "TMPDIR", k == "MCP_TIMEOUT":
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"HOME="+w.Home,
		"TMPDIR="+w.Tmp,
		"XDG_CONFIG_HOME="+filepath.Join(w.Home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(w.Home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(w.Home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(w.Home, ".local", "state"),
		"ANTHROPIC_BASE_URL="+w.Mock.URL,
		"ANTHROPIC_API_KEY=sk-test-dummy",
		"NO_PROXY=127.0.0.1,localhost",
		"CLAUDE_CODE_MCP_STARTUP_WAIT_MS=10000",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
	)
	out = append(out, w.Env...)
	return append(out, extra...)
}

// ---- one run ----

// RunOptions says how to start Claude Code for one run.
type RunOptions struct {
	// Prompt is the -p prompt. Ignored when Inputs is set.
	Prompt string
	// Inputs are user messages sent over stream-json input (--input-format stream-json), in
	// order, each after the previous one's turn ended; slash commands such as "/clear" work.
	Inputs []string
	// Resume continues a session: --resume <id>.
	Resume string
	// AllowedTools defaults to the plugin's MCP server rule (Spec.AllowRule).
	AllowedTools []string
	Args         []string // more flags
	Env          []string // more environment, after World.Env
	Timeout      time.Duration
	// Kill, once closed, ends the run as its timeout would: a test that needs the kill after
	// some event closes it then, rather than guessing how long the event takes.
	Kill <-chan struct{}
}

// Run is one finished Claude Code process.
type Run struct {
	Args     []string
	Events   []Event
	Stdout   string
	Stderr   string
	ExitCode int
	Duration time.Duration
	// Requests are the requests the mock received while this run was going (runs in one World
	// are sequential, so these are this run's).
	Requests []mockapi.Request
}

// MainRequests are this run's agent-loop Messages requests (mockapi.IsMain), in order.
func (r *Run) MainRequests() []*mockapi.MessagesRequest {
	var out []*mockapi.MessagesRequest
	for _, q := range r.Requests {
		if q.Messages != nil && mockapi.IsMain(q.Messages) {
			out = append(out, q.Messages)
		}
	}
	return out
}

// FirstMain is this run's first agent-loop request: what the model saw first in this session.
// It fails the test when the run sent none.
func (r *Run) FirstMain(t testing.TB) *mockapi.MessagesRequest {
	t.Helper()
	m := r.MainRequests()
	if len(m) == 0 {
		t.Fatalf("this run sent the model no request (exit %d); stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return m[0]
}

// autoMemoryHeader ends the line that introduces MEMORY.md in a request (Claude Code 2.1.330).
const autoMemoryHeader = " (user's auto-memory, persists across conversations):\n\n"

// AutoMemory returns the MEMORY.md text Claude Code put in the request and the file it came
// from, or ok false when there is none. It sits in the first user message as a
// <system-reminder> block: "Contents of <path> (user's auto-memory, ...):\n\n<text>".
func AutoMemory(m *mockapi.MessagesRequest) (text, path string, ok bool) {
	for _, msg := range m.Messages {
		if msg.Role != "user" {
			continue
		}
		for _, b := range msg.Content {
			i := strings.Index(b.Text, autoMemoryHeader)
			if b.Type != "text" || i < 0 {
				continue
			}
			head := b.Text[:i]
			j := strings.LastIndex(head, "Contents of ")
			if j < 0 {
				continue
			}
			body := strings.TrimSuffix(b.Text[i+len(autoMemoryHeader):], "</system-reminder>")
			return strings.TrimSuffix(body, "\n"), head[j+len("Contents of "):], true
		}
		return "", "", false // only the first user message carries it
	}
	return "", "", false
}

// Event is one stream-json output line.
type Event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Raw       json.RawMessage
}

// Decode unmarshals the whole event into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Raw, v) }

// InitEvent is the system/init event: one at start-up and one more after each /clear.
type InitEvent struct {
	SessionID  string      `json:"session_id"`
	Cwd        string      `json:"cwd"`
	Model      string      `json:"model"`
	Version    string      `json:"claude_code_version"`
	Tools      []string    `json:"tools"`
	MCPServers []MCPServer `json:"mcp_servers"`
	Plugins    []Plugin    `json:"plugins"`
	// PluginErrors is absent from the event when there are none. An invalid hooks.json is not
	// reported here (its hooks are dropped silently): check that the hooks ran.
	PluginErrors []PluginError `json:"plugin_errors"`
	// MemoryPaths["auto"] is the auto-memory directory, with a trailing slash.
	MemoryPaths map[string]string `json:"memory_paths"`
}

// MCPServer is one entry of init's mcp_servers; plugin servers are named "plugin:<plugin>:<server>".
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "connected", "failed", ...
	Source string `json:"source"`
}

// Plugin is one entry of init's plugins; a --plugin-dir plugin has source "<name>@inline".
type Plugin struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Source  string `json:"source"`
	Version string `json:"version"`
}

// PluginError is one entry of init's plugin_errors.
type PluginError struct {
	Plugin  string `json:"plugin"`
	Type    string `json:"type"`
	Message string `json:"message"`
	Path    string `json:"path"`
}

// HookEvent is a system/hook_response event (--include-hook-events).
type HookEvent struct {
	HookID    string `json:"hook_id"`
	Name      string `json:"hook_name"`  // "SessionStart:startup", "SessionStart:clear", "Stop", ...
	Event     string `json:"hook_event"` // "SessionStart", "Stop", ...
	Output    string `json:"output"`     // stdout and stderr together
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  int    `json:"exit_code"`
	Outcome   string `json:"outcome"` // "success", ...
	SessionID string `json:"session_id"`
}

// ResultEvent is the result event that ends each turn (and each /clear).
type ResultEvent struct {
	Subtype           string            `json:"subtype"` // "success" or an error kind
	IsError           bool              `json:"is_error"`
	Result            string            `json:"result"`
	StopReason        string            `json:"stop_reason"`
	NumTurns          int               `json:"num_turns"`
	SessionID         string            `json:"session_id"`
	TerminalReason    string            `json:"terminal_reason"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
}

// ToolResultEvent is a tool_result the client fed back to the model, from a "user" event.
type ToolResultEvent struct {
	ToolUseID string
	Text      string
	IsError   bool
	SessionID string
}

// Inits returns every init event, in order.
func (r *Run) Inits() []InitEvent { return decodeAll[InitEvent](r, "system", "init") }

// Init is the first init event; it fails the test when there is none.
func (r *Run) Init(t testing.TB) InitEvent {
	t.Helper()
	inits := r.Inits()
	if len(inits) == 0 {
		t.Fatalf("claude printed no init event; stderr:\n%s", r.Stderr)
	}
	return inits[0]
}

// SessionID is the session of the first init event ("" when there is none).
func (r *Run) SessionID() string {
	if inits := r.Inits(); len(inits) > 0 {
		return inits[0].SessionID
	}
	return ""
}

// Hooks returns the hook_response events of one hook event ("SessionStart", "Stop"), in order.
func (r *Run) Hooks(event string) []HookEvent {
	var out []HookEvent
	for _, h := range decodeAll[HookEvent](r, "system", "hook_response") {
		if h.Event == event {
			out = append(out, h)
		}
	}
	return out
}

// Results returns every result event, in order.
func (r *Run) Results() []ResultEvent { return decodeAll[ResultEvent](r, "result", "") }

// Result is the last result event; it fails the test when there is none.
func (r *Run) Result(t testing.TB) ResultEvent {
	t.Helper()
	res := r.Results()
	if len(res) == 0 {
		t.Fatalf("claude printed no result event (exit %d); stderr:\n%s", r.ExitCode, r.Stderr)
	}
	return res[len(res)-1]
}

// ToolResults returns the tool results the client sent back to the model, in order.
func (r *Run) ToolResults() []ToolResultEvent {
	var out []ToolResultEvent
	for _, e := range r.Events {
		if e.Type != "user" {
			continue
		}
		var u struct {
			Message struct {
				Content mockapi.Content `json:"content"`
			} `json:"message"`
		}
		if e.Decode(&u) != nil {
			continue
		}
		for _, b := range u.Message.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResultEvent{ToolUseID: b.ToolUseID, Text: b.Content.Text(), IsError: b.IsError, SessionID: e.SessionID})
			}
		}
	}
	return out
}

// decodeAll decodes the events of one type (and subtype, unless empty).
func decodeAll[T any](r *Run, typ, subtype string) []T {
	var out []T
	for _, e := range r.Events {
		if e.Type != typ || (subtype != "" && e.Subtype != subtype) {
			continue
		}
		var v T
		if e.Decode(&v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// requireOK fails the test unless the run exited 0 and its last turn ended without error.
func requireOK(t testing.TB, r *Run) {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("claude exited %d; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	if res := r.Result(t); res.IsError {
		t.Fatalf("claude's last turn ended in error (%s): %s", res.Subtype, res.Result)
	}
}

// requirePluginLoaded fails the test unless every init event shows the World's plugin loaded
// from its --plugin-dir with no plugin_errors and its MCP server connected, and at least one
// SessionStart hook ran and succeeded.
func (w *World) requirePluginLoaded(t testing.TB, r *Run) {
	t.Helper()
	inits := r.Inits()
	if len(inits) == 0 {
		t.Fatalf("claude printed no init event; stderr:\n%s", r.Stderr)
	}
	server := "plugin:" + w.Spec.Name + ":" + w.Spec.Server
	for _, in := range inits {
		if len(in.PluginErrors) > 0 {
			t.Errorf("init lists plugin_errors: %+v", in.PluginErrors)
		}
		found := false
		for _, p := range in.Plugins {
			if p.Name == w.Spec.Name && p.Path == w.Plugin {
				found = true
			}
		}
		if !found {
			t.Errorf("init's plugins do not include %s from %s: %+v", w.Spec.Name, w.Plugin, in.Plugins)
		}
		status := "missing"
		for _, s := range in.MCPServers {
			if s.Name == server {
				status = s.Status
			}
		}
		if status != "connected" {
			t.Errorf("MCP server %s is %s, want connected (mcp_servers: %+v)", server, status, in.MCPServers)
		}
	}
	ok := false
	for _, h := range r.Hooks("SessionStart") {
		if h.Outcome != "success" || h.ExitCode != 0 {
			t.Errorf("SessionStart hook %s: outcome %s, exit %d, stderr %q", h.Name, h.Outcome, h.ExitCode, h.Stderr)
		}
		ok = true
	}
	if !ok {
		t.Errorf("no SessionStart hook ran (an invalid hooks.json is dropped silently)")
	}
	if t.Failed() {
		t.FailNow()
	}
}

// errTimedOut says a run was killed, with its process group, at its timeout.
var errTimedOut = errors.New("claude ran past its timeout and was killed with its process group")

// run starts Claude Code in the World's project and waits for it (bounded by the timeout).
// It fails the test when the process cannot start or is killed by the timeout, not when it
// exits non-zero: scenarios check ExitCode themselves.
func (w *World) run(t *testing.T, o RunOptions) *Run {
	t.Helper()
	r, err := w.tryRun(t, o)
	if err != nil {
		t.Fatalf("claude %s: %v\nstderr:\n%s\nstdout (tail):\n%s", strings.Join(r.Args, " "), err, r.Stderr, tail(r.Stdout, 8000))
	}
	return r
}

// tryRun is run that returns the timeout (errTimedOut) or a start failure instead of failing.
func (w *World) tryRun(t *testing.T, o RunOptions) (*Run, error) {
	t.Helper()
	w.runMu.Lock()
	defer w.runMu.Unlock()
	args := []string{"-p"}
	if len(o.Inputs) == 0 {
		args = append(args, o.Prompt)
	} else {
		args = append(args, "--input-format", "stream-json")
	}
	args = append(args, "--output-format", "stream-json", "--verbose", "--include-hook-events")
	if w.Plugin != "" { // else the plugins installed with `claude plugin install`
		args = append(args, "--plugin-dir", w.Plugin)
	}
	allowed := o.AllowedTools
	if allowed == nil {
		allowed = []string{w.Spec.AllowRule()}
	}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowed, ","))
	}
	if o.Resume != "" {
		args = append(args, "--resume", o.Resume)
	}
	args = append(args, o.Args...)

	timeout := o.Timeout
	if timeout == 0 {
		timeout = runTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if o.Kill != nil {
		go func() {
			select {
			case <-o.Kill:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	cmd := exec.CommandContext(ctx, claudeBin(t), args...)
	cmd.Dir = w.Project
	cmd.Env = w.env(o.Env)
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(&stdout, pw)

	var stdin io.WriteCloser
	if len(o.Inputs) > 0 {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}

	// Parse events as they come, so stream-json input can wait for each turn's result.
	results := make(chan struct{}, 64)
	var events []Event
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 || line[0] != '{' {
				continue
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil {
				continue
			}
			e.Raw = append(json.RawMessage(nil), line...)
			events = append(events, e)
			if e.Type == "result" {
				select { // never block parsing; feed needs at most one pending result
				case results <- struct{}{}:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()

	seen := len(w.Mock.Requests())
	start := time.Now()
	if err := startGroup(cmd); err != nil {
		return &Run{Args: args}, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	if stdin != nil {
		go feed(ctx, stdin, o.Inputs, results)
	}
	err := cmd.Wait()
	killGroup(cmd)
	pw.Close()
	<-parsed
	r := &Run{Args: args, Events: events, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	r.Requests = w.Mock.Requests()[seen:]
	if ctx.Err() != nil {
		r.ExitCode = -1
		return r, fmt.Errorf("%w (after %v)", errTimedOut, r.Duration.Round(time.Millisecond))
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitCode()
	case err != nil:
		return r, err
	}
	t.Logf("claude %s: exit %d in %v, %d events", strings.Join(args[:2], " "), r.ExitCode, r.Duration.Round(time.Millisecond), len(events))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("claude %s\nexit %d\nstderr:\n%s\nstdout (tail):\n%s\nmock requests: %v\nunused script steps: %v",
				strings.Join(args, " "), r.ExitCode, r.Stderr, tail(r.Stdout, 8000), w.Mock.Paths(), w.Mock.Unused())
		}
	})
	return r, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// feed writes each input as a stream-json user message, waiting for the previous turn's result
// event before sending the next, then closes stdin so Claude Code exits.
func feed(ctx context.Context, stdin io.WriteCloser, inputs []string, results <-chan struct{}) {
	defer stdin.Close()
	for _, in := range inputs {
		msg, _ := json.Marshal(map[string]any{
			"type":    "user",
			"message": map[string]any{"role": "user", "content": in},
		})
		if _, err := stdin.Write(append(msg, '\n')); err != nil {
			return
		}
		select {
		case <-results:
		case <-ctx.Done():
			return
		}
	}
}
