package mcptools_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// binDir holds the binaries built for this test run (builtBinary); TestMain removes it.
var binDir string

// builtBinary is a binary of this module, built into binDir once, when a test first runs it:
// a run of tests that run none builds none.
type builtBinary struct {
	name, pkg string
	once      sync.Once
	path      string
	err       error
}

var (
	mcpBinary   = &builtBinary{name: "cairn-mcp", pkg: "github.com/cairn-dev/cairn/mcpserver"}
	cairnBinary = &builtBinary{name: "cairn", pkg: "github.com/cairn-dev/cairn/cmd/cairn"}
)

// get returns the binary's path, building it first if no test has.
func (b *builtBinary) get(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.path = filepath.Join(binDir, b.name)
		if runtime.GOOS == "windows" {
			b.path += ".exe"
		}
		if out, err := exec.Command("go", "build", "-o", b.path, b.pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", b.name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// copyBinary copies the built cairn-mcp to dst, for a test that runs it from a directory
// of its own.
func copyBinary(t testing.TB, dst string) {
	t.Helper()
	in, err := os.Open(mcpBinary.get(t))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
}

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "cairn-mcp-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	if agedState != "" { // BenchmarkTransitionAged's set-up, shared by its runs
		os.RemoveAll(agedState)
	}
	os.Exit(code)
}

// project is a throwaway project for the binary: its own state and memory directories and a
// home that keeps the real ~/.claude out of reach.
type project struct {
	root, state, memory, home string
	session                   string
	// terminal, when set, runs the binary under a shell of its own, as a second terminal's
	// Claude Code would: its parent, the client cairn-mcp acts for, is not the test's process.
	terminal bool
	// asUser, when set, is applied to the binary's command (another user's credentials), and
	// bin, when set, is the binary run in place of the one built.
	asUser func(*exec.Cmd)
	bin    string
	more   []string // added to env
}

func newProject(t testing.TB) *project {
	t.Helper()
	base := t.TempDir()
	p := &project{
		root:    filepath.Join(base, "project"),
		state:   filepath.Join(base, "project", ".claude", "cairn"),
		memory:  filepath.Join(base, "memory"),
		home:    filepath.Join(base, "home"),
		session: "sess-1",
	}
	for _, d := range []string{p.root, p.memory, p.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(p.root, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// env is the whole environment the binary runs with: nothing leaks in from the test's own.
func (p *project) env() []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + p.home,
		"CLAUDE_PROJECT_DIR=" + p.root,
		"CAIRN_STATE_DIR=" + p.state,
		"CAIRN_MEMORY_DIR=" + p.memory,
		"CLAUDE_CODE_SESSION_ID=" + p.session,
	}, p.more...)
}

func (p *project) getenv(session string) func(string) string {
	m := map[string]string{}
	for _, kv := range p.env() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	m["CLAUDE_CODE_SESSION_ID"] = session
	return mapEnv(m)
}

// stdioClient starts the binary under mcp-go's stdio client at the given protocol version.
func stdioClient(t testing.TB, p *project, version string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	bin := cmp.Or(p.bin, mcpBinary.get(t))
	tr := transport.NewStdioWithOptions(bin, nil, nil,
		transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			if p.terminal {
				cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", `"$0" "$@"; exit $?`, command}, args...)...)
			}
			cmd.Dir, cmd.Env = p.root, p.env()
			if p.asUser != nil {
				p.asUser(cmd)
			}
			return cmd, nil
		}))
	c := client.NewClient(tr, append([]client.ClientOption{client.WithProtocolVersion(version)}, opts...)...)
	ctx := testCtx(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize at %s: %v", version, err)
	}
	if res.ProtocolVersion != version {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
	}
	// The version is plugin.json's (cairn.Version, which the root package's test holds to the
	// manifest), with the commit as build metadata when the build has one.
	if want := cairn.Version(); res.ServerInfo.Version != want && !strings.HasPrefix(res.ServerInfo.Version, want+"+") {
		t.Errorf("initialize gives version %q, want plugin.json's %q", res.ServerInfo.Version, want)
	}
	if !strings.Contains(res.Instructions, "resume_check") || !strings.Contains(res.Instructions, "complete_workflow") {
		t.Errorf("instructions do not teach the protocol: %q", res.Instructions)
	}
	return c
}

// rawServer runs the binary with plain pipes, for what mcp-go's client cannot send or observe.
type rawServer struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	lines  chan []byte
	mu     sync.Mutex
	all    [][]byte // every stdout line
}

func startRaw(t testing.TB, p *project) *rawServer {
	t.Helper()
	cmd := exec.Command(cmp.Or(p.bin, mcpBinary.get(t)))
	cmd.Dir, cmd.Env = p.root, p.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rawServer{t: t, cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}, lines: make(chan []byte, 1024)}
	cmd.Stderr = &lockedWriter{w: r.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.out = bufio.NewReaderSize(stdout, 1<<20)
	go func() {
		defer close(r.lines)
		for {
			line, err := r.out.ReadBytes('\n')
			if len(line) > 0 {
				r.mu.Lock()
				r.all = append(r.all, line)
				r.mu.Unlock()
				r.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	return r
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (r *rawServer) send(msg string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, msg+"\n"); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// hangGuard only turns a hang into a failure: no answer the stdio tests wait for is timed, and
// a loaded machine under -race may take seconds for one.
const hangGuard = time.Minute

// next reads the next response within d.
func (r *rawServer) next(d time.Duration) rpcResponse {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("server closed stdout; stderr:\n%s", r.stderr)
		}
		var resp rpcResponse
		if err := json.Unmarshal(line, &resp); err != nil || resp.JSONRPC != "2.0" {
			r.t.Fatalf("stdout line is not JSON-RPC 2.0: %q", line)
		}
		return resp
	case <-time.After(d):
		r.t.Fatalf("no response within %s", d)
	}
	return rpcResponse{}
}

func (r *rawServer) initialize() {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp := r.next(hangGuard); resp.Error != nil {
		r.t.Fatalf("initialize: %+v", resp.Error)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// wait waits for the process to exit and returns its exit code.
func (r *rawServer) wait(d time.Duration) int {
	r.t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case <-done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		r.cmd.Process.Kill()
		r.t.Fatalf("server did not exit within %s; stderr:\n%s", d, r.stderr)
	}
	return -1
}

// checkStdout fails unless every line the server wrote is a whole JSON-RPC 2.0 message.
func (r *rawServer) checkStdout() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range r.all {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			r.t.Errorf("stdout carries a line that is not protocol: %q", clip(string(line)))
		}
	}
}

// TestStdioDiscoverRefused: Claude Code's first message is server/discover; the answer must be
// -32601 (not silence, which Claude Code would wait out), after which initialize at
// 2025-11-25 works.
func TestStdioDiscoverRefused(t *testing.T) {
	r := startRaw(t, newProject(t))
	start := time.Now()
	r.send(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.330"}}}}`)
	resp := r.next(hangGuard)
	if resp.Error == nil || resp.Error.Code != -32601 || string(resp.ID) != "0" {
		t.Fatalf("server/discover answered %+v (error %+v), want error -32601 for id 0", resp, resp.Error)
	}
	t.Logf("server/discover refused after %s", time.Since(start))

	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.330"}}}`)
	resp = r.next(hangGuard)
	var init mcp.InitializeResult
	if resp.Error != nil || json.Unmarshal(resp.Result, &init) != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize answered %s (error %+v)", resp.Result, resp.Error)
	}
	if init.ServerInfo.Name != "cairn" || init.Capabilities.Tools == nil {
		t.Errorf("server info %+v, capabilities %+v", init.ServerInfo, init.Capabilities)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	resp = r.next(hangGuard)
	var list mcp.ListToolsResult
	if err := json.Unmarshal(resp.Result, &list); err != nil || len(list.Tools) != len(toolNames) {
		t.Fatalf("tools/list: %d tools (%v), want %d", len(list.Tools), err, len(toolNames))
	}
	// A discover notification (no id) gets no answer; the next request is still served.
	r.send(`{"jsonrpc":"2.0","method":"server/discover"}`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if resp = r.next(hangGuard); string(resp.ID) != "3" || resp.Error != nil {
		t.Errorf("ping after discover notification: %+v", resp)
	}
	r.stdin.Close()
	if code := r.wait(hangGuard); code != 0 {
		t.Errorf("exit code %d after stdin EOF, want 0; stderr:\n%s", code, r.stderr)
	}
	r.checkStdout()
}

// TestStdioProtocolVersions: initialize works at 2025-11-25 and every older version mcp-go
// supports, through mcp-go's own stdio client.
func TestStdioProtocolVersions(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(v, func(t *testing.T) {
			c := stdioClient(t, newProject(t), v)
			res, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
			if err != nil || len(res.Tools) != len(toolNames) {
				t.Fatalf("tools/list at %s: %d tools, %v", v, len(res.Tools), err)
			}
			mustFail(t, c, "transition", `{"to":1}`, `"to" must be a string`)
		})
	}
}

// TestStdioMalformedInput: garbage lines get JSON-RPC errors and the server carries on; an
// oversized message is refused with its id, saying that nothing of it was run, as a call
// refused for its arguments' size says (it did not: the model could not tell whether a save
// had happened).
func TestStdioMalformedInput(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	r.send(`this is not json`)
	if resp := r.next(hangGuard); resp.Error == nil || resp.Error.Code != -32700 {
		t.Errorf("garbage line answered %+v", resp)
	}
	r.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if resp := r.next(hangGuard); resp.Error == nil || string(resp.ID) != "7" {
		t.Errorf("unknown tool answered %+v; want a protocol error for id 7", resp)
	}
	huge := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"x","data":{"a":"` +
		strings.Repeat("x", 5<<20) + `"}}}}`
	r.send(huge)
	resp := r.next(hangGuard)
	if resp.Error == nil || resp.Error.Code != -32600 || string(resp.ID) != "8" || !strings.Contains(resp.Error.Message, "larger than") || !strings.Contains(resp.Error.Message, "not run") {
		t.Errorf("oversized message answered %+v (error %+v)", resp, resp.Error)
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if resp := r.next(hangGuard); string(resp.ID) != "9" || resp.Error != nil {
		t.Errorf("ping after oversized message: %+v", resp)
	}
	r.stdin.Close()
	if code := r.wait(hangGuard); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	r.checkStdout()
}

// TestStdioOversizedAnsweredWithItsID: Claude Code's MCP client writes a request's members
// as {"method", "params", "jsonrpc", "id"}, so the id of an oversized message is at its end,
// after arguments that may hold an "id" of their own. The refusal must carry the request's
// id, or the client waits for an answer that never comes.
func TestStdioOversizedAnsweredWithItsID(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	pad := strings.Repeat("x", 5<<20)
	answeredWithTheirIDs(t, r, "oversized", -32600, 10*time.Second, []idCase{
		{`{"method":"tools/call","params":{"name":"update_task","arguments":{"id":"t1","status":"running","note":"` + pad + `"}},"jsonrpc":"2.0","id":11}`, "11"},
		{`{"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"x","data":{"a":"` + pad + `"}}},"jsonrpc":"2.0","id":"req-12"}` + "\r", `"req-12"`},
		{`{"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"x","data":{"id":13,"a":"` + pad + `"}}},"jsonrpc":"2.0" , "id" : 14 }`, "14"},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"update_task","arguments":{"id":"t1","note":"` + pad + `"}},"id":15}`, "15"},
		{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"x","data":{"id":1,"a":"` + pad + `"}}}}`, "16"},
		{`{"jsonrpc":"2.0","method":"x\",\"id\":17","params":{"a":"` + pad + `"}}`, "null"}, // a notification
	})
}

// TestStdioArgumentErrors: bad arguments over the real transport are tool results with isError,
// including a payload just over the limit.
func TestStdioArgumentErrors(t *testing.T) {
	c := stdioClient(t, newProject(t), protocol)
	over := `{"name":"big","data":{"a":"` + strings.Repeat("x", 1<<20+20<<10) + `"}}`
	mustFail(t, c, "save_checkpoint", over, "more than the limit")
	mustFail(t, c, "save_checkpoint", `{"name":"../../x","data":{}}`, "no '..'")
	mustFail(t, c, "start_workflow", `{"type":"apex"}`, `missing required argument "context"`)
}

// TestStdioToolsRealEngine runs the workflow protocol through the binary.
func TestStdioToolsRealEngine(t *testing.T) {
	p := newProject(t)
	c := stdioClient(t, p, protocol)
	mustOK(t, c, "resume_check", `{}`)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"stdio"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	mustFail(t, c, "transition", `{"to":"git-commit"}`, "next phases: implement, analyze")
	if _, err := p.other(t, "person").Approve("plan reviewed"); err != nil { // plan waits for a yes
		t.Fatal(err)
	}
	mustOK(t, c, "complete_workflow", `{"outcome":"done over stdio"}`)
	if snap := snapshot(t, p.other(t, "observer")); snap.WorkflowID != "" {
		t.Errorf("active workflow after completion: %+v", snap)
	}
}

// TestStdioConcurrentCalls: many calls in flight at once each get their own answer, and every
// write lands exactly once.
func TestStdioConcurrentCalls(t *testing.T) {
	p := newProject(t)
	c := stdioClient(t, p, protocol)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"concurrency"}`)
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan string, 4*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			var name, args, want string
			var wantErr bool
			switch i % 4 {
			case 0:
				name, args, want = "set_vars", fmt.Sprintf(`{"vars":{"WF_V%d":"%d"}}`, i, i), fmt.Sprintf("WF_V%d", i)
			case 1:
				name, args, want = "save_checkpoint", fmt.Sprintf(`{"name":"c%d","data":{"i":%d}}`, i, i), fmt.Sprintf("c%d", i)
			case 2:
				name, args, want, wantErr = "load_checkpoint", fmt.Sprintf(`{"name":"absent%d"}`, i), fmt.Sprintf("absent%d", i), true
			case 3:
				// A refused value is never repeated; the error's own figure tells the answers apart.
				name, args, want, wantErr = "transition", fmt.Sprintf(`{"to":"plan","note":"%s"}`, strings.Repeat("n", 501+i)), fmt.Sprintf("is %d characters", 501+i), true
			}
			res, err := c.CallTool(ctx, toolRequest(name, args))
			switch {
			case err != nil:
				errs <- fmt.Sprintf("%s: %v", name, err)
			case res.IsError != wantErr:
				errs <- fmt.Sprintf("%s(%s): isError %v: %s", name, args, res.IsError, text(res))
			case !strings.Contains(text(res), want):
				errs <- fmt.Sprintf("%s(%s): answer %q is not about %s", name, args, clip(text(res)), want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	look := p.other(t, "observer")
	vars, err := look.GetVars(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(vars) != n/4 {
		t.Errorf("vars on disk %v, want %d", vars, n/4)
	}
	if snap := snapshot(t, look); snap.Revision != 1+n/4 {
		t.Errorf("revision %d, want %d (start plus one per set_vars)", snap.Revision, 1+n/4)
	}
	names, _ := look.ListCheckpoints("c*")
	if len(names) != n/4 {
		t.Errorf("checkpoints %v, want %d", names, n/4)
	}
}

// TestStdio1MiBPayload: a checkpoint of (almost exactly) 1 MiB goes in whole; loading it gives
// its size and parts (Claude Code would not show the agent 1 MiB), and it is stored whole.
func TestStdio1MiBPayload(t *testing.T) {
	p := newProject(t)
	c := stdioClient(t, p, protocol)
	blob := strings.Repeat("0123456789abcdef", (1<<20-64)/16)
	data := `{"blob":"` + blob + `"}`
	if len(data) > 1<<20 {
		t.Fatalf("test data is %d bytes", len(data))
	}
	start := time.Now()
	mustOK(t, c, "save_checkpoint", `{"name":"big","data":`+data+`}`)
	res := mustOK(t, c, "load_checkpoint", `{"name":"big"}`)
	t.Logf("1 MiB save and load over stdio: %s", time.Since(start))
	s := structured(t, res)
	if s["bytes"] != float64(len(data)) || !strings.Contains(text(res), "/blob: a string") {
		t.Errorf("loading it answered %v: %s", s["bytes"], clip(text(res)))
	}
	got, err := p.other(t, "observer").LoadCheckpoint("big")
	if err != nil || string(got) != data {
		t.Errorf("stored checkpoint has %d bytes (%v), want %d", len(got), err, len(data))
	}
}

// TestStdioSecondProcess: while the binary serves, another process (this test, through the
// engine) moves the workflow; the agent's next call is told.
func TestStdioSecondProcess(t *testing.T) {
	p := newProject(t)
	c := stdioClient(t, p, protocol)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"two processes"}`)
	mustOK(t, c, "get_vars", `{}`)
	other := p.other(t, "sess-other")
	if _, err := other.Transition(engine.TransitionRequest{To: "plan", Note: "moved elsewhere"}); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, c, "get_vars", `{}`)
	first := strings.SplitN(text(res), "\n", 2)[0]
	for _, want := range []string{"Notice:", "another session changed", "phase plan", "revision 2"} {
		if !strings.Contains(first, want) {
			t.Errorf("agent was not told: first line %q lacks %q", first, want)
		}
	}
	if s := structured(t, res); s["notice"] != first {
		t.Errorf("structured notice %v", s["notice"])
	}
	// Its own next move builds on the other process's (back to analyze: no approval needed).
	mustOK(t, c, "transition", `{"from":"plan","to":"analyze"}`)
}

// TestStdioNumberOutOfRange: mcp-go reads a call's arguments into Go values before the tool
// sees them, and a number beyond float64's range (1e999) fails there. The agent must still get
// the tool's own isError result naming the argument, not a protocol error that names none,
// and the number is not repeated.
func TestStdioNumberOutOfRange(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	for i, tc := range []struct{ tool, args, want string }{
		{"transition", `{"to":1e999}`, `argument "to" must be a string`},
		{"transition", `{"to":"plan","checkpoint":{"score":-1e999}}`, `argument "checkpoint" holds a number`},
		{"save_checkpoint", `{"name":"n","data":[1,2,1E+400]}`, `argument "data" holds a number`},
		{"save_checkpoint", `{"name":"n","data":{"a":1},"size":1e999}`, "an unknown argument"},
	} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, tc.tool, tc.args))
		resp := r.next(hangGuard)
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || !res.IsError || len(res.Content) != 1 {
			t.Errorf("%s(%s) answered %s (error %+v), want an isError tool result", tc.tool, tc.args, resp.Result, resp.Error)
			continue
		}
		got := res.Content[0].Text
		if string(resp.ID) != fmt.Sprint(i+1) || !strings.Contains(got, tc.want) || !strings.Contains(got, "nothing was changed") {
			t.Errorf("%s(%s) answered %q for id %s, want %q", tc.tool, tc.args, got, resp.ID, tc.want)
		}
		if strings.Contains(got, "e999") || strings.Contains(got, "E+400") {
			t.Errorf("the answer repeats the number: %q", got)
		}
	}
	// Elsewhere in the message, the number stays mcp-go's protocol error.
	r.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"no_such_tool","arguments":{"a":1e999}}}`)
	if resp := r.next(hangGuard); resp.Error == nil || string(resp.ID) != "9" {
		t.Errorf("an unknown tool answered %s (error %+v)", resp.Result, resp.Error)
	}
	p.noCheckpoints(t, "a refused call was run")
	r.checkStdout()
}

// askingServer is the binary on a workflow at apex's approval phase plan, with a client that
// declares elicitation and has sent maxInFlight (16) transitions out of plan: each one waits
// for the person, so every slot is taken. It returns the ids of the questions asked.
func askingServer(t *testing.T) (*project, *rawServer, []json.RawMessage) {
	t.Helper()
	p, r := atTheGate(t, "busy gate")
	const slots = 16
	for i := range slots {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`, i+1))
	}
	var asks []json.RawMessage
	for range slots {
		asks = append(asks, nextAsk(t, r, fmt.Sprintf("the server asked the person %d times, want %d", len(asks), slots)))
	}
	return p, r, asks
}

// decline answers every question no.
func (r *rawServer) decline(asks []json.RawMessage) {
	for _, id := range asks {
		r.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"decline"}}`)
	}
}

// TestStdioAnswerReadWhileCallsWait: transitions waiting for the person's answer take every
// slot; calls sent meanwhile must not stop the server reading stdin, or the person's answers
// are never read and every call hangs until the approval times out (15 minutes).
func TestStdioAnswerReadWhileCallsWait(t *testing.T) {
	_, r, asks := askingServer(t)
	const more = 24
	for i := range more {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_vars","arguments":{}}}`, 100+i))
	}
	r.decline(asks)
	got := map[string]bool{}
	deadline := time.After(hangGuard)
	for len(got) < len(asks)+more {
		select {
		case line, ok := <-r.lines:
			if !ok {
				t.Fatalf("server closed stdout; stderr:\n%s", r.stderr)
			}
			var resp rpcResponse
			if err := json.Unmarshal(line, &resp); err != nil || resp.Error != nil {
				t.Fatalf("answer %q", clip(string(line)))
			}
			got[string(resp.ID)] = true
			if string(resp.ID) == "1" && !strings.Contains(string(resp.Result), "did not approve leaving phase plan") {
				t.Errorf("a declined transition answered %s", clip(string(resp.Result)))
			}
		case <-deadline:
			t.Fatalf("%d of %d calls answered (the person's answers were not read while calls waited)", len(got), len(asks)+more)
		}
	}
	r.checkStdout()
}

// TestStdioCancelledWhileQueued: a call cancelled (notifications/cancelled) while it waits for
// a free slot is not run later: the person pressed Esc, and the save must not happen behind
// their back once the calls ahead of it finish.
func TestStdioCancelledWhileQueued(t *testing.T) {
	p, r, asks := askingServer(t)
	r.send(`{"jsonrpc":"2.0","id":"save","method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"after-esc","data":{}}}}`)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"save","reason":"user pressed Esc"}}`)
	r.decline(asks)
	for range asks {
		if resp := r.next(hangGuard); string(resp.ID) == `"save"` {
			t.Errorf("the cancelled call was answered: %s", resp.Result)
		}
	}
	// A call sent after it has run once this one is answered: requests start in order.
	r.send(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	if resp := r.next(hangGuard); string(resp.ID) != `"last"` {
		t.Errorf("answer %s, want the last call's", resp.ID)
	}
	p.noCheckpoints(t, "the cancelled save ran")
}

// TestStdioQueueBounded: requests that wait for a free slot are bounded by their bytes; one
// beyond the bound is refused at once with its id, and the rest still run.
func TestStdioQueueBounded(t *testing.T) {
	_, r, asks := askingServer(t)
	blob := strings.Repeat("x", 4_000_000)
	for i := range 9 { // 8 fit in the 32 MiB the queue holds; the ninth does not
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"big-%d","method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"b","data":{"a":"%s"}}}}`, i, blob))
	}
	resp := r.next(hangGuard)
	if string(resp.ID) != `"big-8"` || resp.Error == nil || !strings.Contains(resp.Error.Message, "send it again") {
		t.Fatalf("first answer %s (error %+v), want the ninth large call refused", resp.ID, resp.Error)
	}
	r.decline(asks)
	for range len(asks) + 8 {
		if resp := r.next(hangGuard); resp.Error != nil {
			t.Errorf("call %s answered with a protocol error %+v", resp.ID, resp.Error)
		}
	}
}

// atTheGate is the binary on a workflow (context ctx) at apex's approval phase plan, with a
// client that declares elicitation and has finished the handshake.
func atTheGate(t *testing.T, ctx string) (*project, *rawServer) {
	t.Helper()
	p := newProject(t)
	seed := p.other(t, "seed")
	if _, err := seed.Start(engine.StartRequest{Type: "apex", Context: ctx}); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	r := startRaw(t, p)
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp := r.next(hangGuard); resp.Error != nil {
		t.Fatalf("initialize: %+v", resp.Error)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p, r
}

type idCase struct{ msg, id string }

// answeredWithTheirIDs sends each message, which the server cannot take (what it is), and
// wants the JSON-RPC error code for it answered with the id the message carries, so that the
// client stops waiting for that call; then a ping is still answered.
func answeredWithTheirIDs(t *testing.T, r *rawServer, what string, code int, wait time.Duration, cases []idCase) {
	t.Helper()
	for _, tc := range cases {
		r.send(tc.msg)
		resp := r.next(wait)
		if resp.Error == nil || resp.Error.Code != code || string(resp.ID) != tc.id {
			t.Errorf("%s message with id %s answered with id %s (error %+v)", what, tc.id, resp.ID, resp.Error)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if resp := r.next(hangGuard); string(resp.ID) != "9" || resp.Error != nil {
		t.Errorf("ping after %s messages: %+v", what, resp)
	}
}

// nextAsk reads the server's next message, which must be a question to the person
// (elicitation/create), and returns its id; missing says what went wrong when none comes.
func nextAsk(t *testing.T, r *rawServer, missing string) json.RawMessage {
	t.Helper()
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	select {
	case line := <-r.lines:
		if err := json.Unmarshal(line, &ask); err != nil || ask.Method != "elicitation/create" {
			t.Fatalf("want the server to ask the person, got %q", line)
		}
	case <-time.After(hangGuard):
		t.Fatalf("%s; stderr:\n%s", missing, r.stderr)
	}
	return ask.ID
}

// stampedPlugin makes a plugin root and a directory of binaries stamped with its checksums, as
// make build leaves them, and returns them with update, which gives the plugin other checksums
// (git pull).
func stampedPlugin(t testing.TB) (plugin, bin string, update func()) {
	t.Helper()
	base := t.TempDir()
	plugin, bin = filepath.Join(base, "plugin"), filepath.Join(base, "bin")
	sums := filepath.Join(plugin, "release", "checksums.txt")
	stamp := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp(sums, "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n")
	stamp(filepath.Join(bin, ".checksums"), "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n")
	return plugin, bin, func() { stamp(sums, "bbbb  cairn_1.0.1_linux_amd64.tar.gz\n") }
}

// TestStdioUpdateAnswersEveryCallInFlight: the plugin is updated under the server, and the
// client then sends ten calls a few milliseconds apart (Claude Code runs a turn's calls side by
// side). The first finds the update; the server exited as soon as stdin was empty for an
// instant, so calls written just after were never read and the client saw the connection
// close. Now every call is answered once, with its id, as not run (call it again), and the
// server exits.
func TestStdioUpdateAnswersEveryCallInFlight(t *testing.T) {
	p := newProject(t)
	plugin, bin, update := stampedPlugin(t)
	p.bin = filepath.Join(bin, "cairn-mcp")
	copyBinary(t, p.bin)
	// The calls, not the background sync, are to find the update.
	p.more = []string{"CLAUDE_PLUGIN_ROOT=" + plugin, mcptools.EnvSyncInterval + "=1h"}
	r := startRaw(t, p)
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":"before","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	if resp := r.next(hangGuard); strings.Contains(string(resp.Result), "Cairn was updated") {
		t.Fatalf("refused before the update: %s", resp.Result)
	}

	update()
	const calls = 10
	for i := range calls {
		// Not r.send: a server gone already is what this test is to report.
		_, _ = fmt.Fprintf(r.stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_vars","arguments":{}}}`+"\n", i)
		time.Sleep(3 * time.Millisecond)
	}
	answers := map[string]int{}
	hung := time.After(hangGuard)
	for done := false; !done; {
		select {
		case line, ok := <-r.lines:
			if !ok {
				done = true
				break
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &m); err != nil || !m.Result.IsError || len(m.Result.Content) != 1 ||
				!strings.Contains(m.Result.Content[0].Text, "get_vars was not run, nothing was changed") ||
				!strings.Contains(m.Result.Content[0].Text, "call get_vars again") {
				t.Errorf("answer = %s, want get_vars refused as not run: call it again", clip(string(line)))
			}
			answers[string(m.ID)]++
		case <-hung:
			t.Fatalf("the server did not answer and exit; answers %v; stderr:\n%s", answers, r.stderr)
		}
	}
	for i := range calls {
		if n := answers[fmt.Sprint(i)]; n != 1 {
			t.Errorf("call %d answered %d times, want once (answers by id: %v)", i, n, answers)
		}
	}
	if code := r.wait(hangGuard); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, r.stderr)
	}
}

// TestStdioUpdateAnswersOnceClosed: after a plugin update, the answer "call it again" is
// written only once the server has closed its engine, just before it exits. Claude Code sends
// the model's retry the moment it reads that answer; written before the close (tens of
// milliseconds under load), the retry reached the old server, which then exited under it, and
// the model was told "Connection closed" (TestCairnServerUpdatedUnderTheSession, 2 runs in 5).
func TestStdioUpdateAnswersOnceClosed(t *testing.T) {
	opts, st := fakeOptions(t)
	var update func()
	opts.PluginRoot, opts.BinDir, update = stampedPlugin(t)
	srv := mcptools.New(opts)
	t.Cleanup(func() { srv.Close(context.Background()) })
	inR, inW := io.Pipe()
	defer inW.Close()
	out := &closedWhenWritten{st: st}
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(testCtx(t), inR, out) }()
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"before","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	waitFor(t, func() bool { return len(out.answers()) == 2 })
	update()
	send(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the server did not return after the update")
	}
	answers := out.answers()
	if len(answers) != 3 || !strings.Contains(answers[2].line, `"id":"after"`) || !strings.Contains(answers[2].line, "Cairn was updated") {
		t.Fatalf("answers = %+v, want the call after the update refused as the third", answers)
	}
	if !answers[2].closed {
		t.Error("the call after the update was answered while the engine was still open: the model's retry reaches this old server")
	}
}

// closedWhenWritten is a server's stdout that notes, for each line, whether the engine was
// closed when it was written.
type closedWhenWritten struct {
	st    *fakeState
	mu    sync.Mutex
	lines []writtenLine
}

type writtenLine struct {
	line   string
	closed bool
}

func (w *closedWhenWritten) Write(p []byte) (int, error) {
	w.st.mu.Lock()
	closed := w.st.closes > 0
	w.st.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, writtenLine{string(p), closed})
	return len(p), nil
}

func (w *closedWhenWritten) answers() []writtenLine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.lines)
}

// TestStdioUpdateShutdownIsBoundedOnce: after a plugin update, a call hung in the engine (a
// hung disk, a lock held) kept the server up for DrainTimeout waiting for it, then as long
// again waiting to close the engine under it, and main's Close after ServeStdio as long again:
// the answers held went out seconds late and the model's retry met a server that no longer
// read. The whole shutdown is bounded once, by DrainTimeout.
func TestStdioUpdateShutdownIsBoundedOnce(t *testing.T) {
	const drain = 300 * time.Millisecond
	defer mcptools.SetDrainTimeout(drain)()
	opts, st := fakeOptions(t)
	var update func()
	opts.PluginRoot, opts.BinDir, update = stampedPlugin(t)
	srv := mcptools.New(opts)
	release := make(chan struct{})
	t.Cleanup(func() {
		close(release)
		srv.Close(context.Background())
	})
	inR, inW := io.Pipe()
	defer inW.Close()
	out := &closedWhenWritten{st: st}
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(testCtx(t), inR, out) }()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return len(out.answers()) == 1 })
	st.mu.Lock()
	st.block = release
	st.mu.Unlock()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":"hung","method":"tools/call","params":{"name":"start_workflow","arguments":{"type":"apex","context":"x"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return slices.Contains(st.calls, "start")
	})
	update()
	began := time.Now()
	srv.RestartAsNew() // as the background sync does when it finds the update
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the server did not return after the update")
	}
	if took := time.Since(began); took >= 2*drain {
		t.Errorf("ServeStdio returned %s after the update, want within about DrainTimeout (%s)", took, drain)
	}
	closed := make(chan error, 1)
	go func() { closed <- srv.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err == nil {
			t.Error("Close with the call still hung reported the engine closed")
		}
	case <-time.After(2 * drain):
		t.Error("Close after ServeStdio waited again for the hung call, past the shutdown's bound")
	}
}

// TestStdioUnreadableApprovalAnswer: a client that answered the approval prompt with no answer
// a person gives (a null result, no action, an action MCP has not, a form of the wrong type)
// was reported as "the user did not approve": the agent was sent to ask what to change of a
// person who said nothing. It says the answer could not be read, with the step that approves;
// the gate stays.
func TestStdioUnreadableApprovalAnswer(t *testing.T) {
	p, r := atTheGate(t, "unreadable answers")
	for i, result := range []string{
		`null`,
		`{}`,
		`{"action":"maybe"}`,
		`{"action":"maybe","content":{"approve":false}}`,
		`{"action":5}`,
		`{"action":"accept","content":"yes"}`,
		`{"action":"accept","content":{"approve":"yes"}}`,
		`{"action":"accept"}`,
	} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`, i+1))
		ask := nextAsk(t, r, "the server did not ask the person")
		r.send(`{"jsonrpc":"2.0","id":` + string(ask) + `,"result":` + result + `}`)
		resp := r.next(hangGuard)
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if json.Unmarshal(resp.Result, &res) != nil || !res.IsError || len(res.Content) != 1 {
			t.Fatalf("answer %s: transition answered %s", result, clip(string(resp.Result)))
		}
		got := res.Content[0].Text
		if strings.Contains(got, "did not approve") || !strings.Contains(got, "could not be read") || !strings.Contains(got, "cairn approve") {
			t.Errorf("answer %s: transition said %q, want the answer said unreadable, with the step that approves", result, got)
		}
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow moved to %s", snap.Phase)
	}
	r.checkStdout()
}

// TestStdioUpdateWhileThePersonIsAsked: a transition waiting for the person's approval when
// the plugin is updated under the server was answered "no person could be asked here", sent
// to have the user run cairn approve, though the person was being asked: the server, exiting,
// withdrew the question. It says so, nothing changed: call transition again.
func TestStdioUpdateWhileThePersonIsAsked(t *testing.T) {
	p := newProject(t)
	seed := p.other(t, "seed")
	if _, err := seed.Start(engine.StartRequest{Type: "apex", Context: "asked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	plugin, bin, update := stampedPlugin(t)
	p.bin = filepath.Join(bin, "cairn-mcp")
	copyBinary(t, p.bin)
	p.more = []string{"CLAUDE_PLUGIN_ROOT=" + plugin, mcptools.EnvSyncInterval + "=1h"}
	r := startRaw(t, p)
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp := r.next(hangGuard); resp.Error != nil {
		t.Fatalf("initialize: %+v", resp.Error)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`{"jsonrpc":"2.0","id":"move","method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`)
	nextAsk(t, r, "the server did not ask the person")
	update()
	r.send(`{"jsonrpc":"2.0","id":"vars","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	for {
		line, ok := <-r.lines
		if !ok {
			t.Fatalf("the transition was not answered; stderr:\n%s", r.stderr)
		}
		var m struct {
			ID     string `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID != "move" {
			continue
		}
		if len(m.Result.Content) != 1 || strings.Contains(m.Result.Content[0].Text, "no person could be asked") ||
			!strings.Contains(m.Result.Content[0].Text, "nothing was changed: call transition again") {
			t.Errorf("the transition asked about when the server exited answered %s", clip(string(line)))
		}
		break
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow moved to %s", snap.Phase)
	}
}

// TestStdioNoQuestionOnceStdinEnded: a transition out of an approval phase that only starts
// once stdin has ended (it waited for a free slot) put its question to the person, whose answer
// could no longer be read, and withdrew it at once. It is not asked; the transition says the
// server shut down, nothing was changed.
func TestStdioNoQuestionOnceStdinEnded(t *testing.T) {
	_, r, _ := askingServer(t)
	r.send(`{"jsonrpc":"2.0","id":"late","method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`)
	r.stdin.Close()
	for line := range r.lines {
		if strings.Contains(string(line), `"elicitation/create"`) {
			t.Errorf("asked the person once stdin had ended: %s", clip(string(line)))
		}
		if strings.Contains(string(line), `"id":"late"`) && !strings.Contains(string(line), "cairn-mcp shut down") {
			t.Errorf("the late transition answered %s", clip(string(line)))
		}
	}
}
