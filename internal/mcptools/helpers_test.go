package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// protocol is the version Claude Code falls back to after server/discover is refused.
const protocol = "2025-11-25"

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// quietLog keeps expected diagnostics out of test output.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// fakeOptions returns server options over a fresh fake state.
func fakeOptions(t testing.TB) (mcptools.Options, *fakeState) {
	st := newFakeState(t.TempDir())
	return mcptools.Options{
		Open:    st.opener(),
		Getenv:  mapEnv(map[string]string{"CLAUDE_CODE_SESSION_ID": "session-a"}),
		WorkDir: st.dir,
		PPID:    4242,
		Log:     quietLog(),
		NoWatch: true,
	}, st
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// connect starts srv's in-process client pinned to protocol 2025-11-25.
func connect(t testing.TB, srv *mcptools.Server) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	c := client.NewClient(transport.NewInProcessTransport(srv.MCP()), client.WithProtocolVersion(protocol))
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != protocol {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, protocol)
	}
	return c
}

// startServer builds a server on opts and connects a client to it.
func startServer(t testing.TB, opts mcptools.Options) (*mcptools.Server, *client.Client) {
	t.Helper()
	srv := mcptools.New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return srv, connect(t, srv)
}

// callRaw calls a tool with arguments given as JSON text, sent as is.
func callRaw(t testing.TB, c *client.Client, name, args string) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if args != "" {
		req.Params.Arguments = json.RawMessage(args)
	}
	res, err := c.CallTool(testCtx(t), req)
	if err != nil {
		t.Fatalf("%s(%s): protocol error %v (want a tool result)", name, clip(args), err)
	}
	return res
}

// mustOK calls a tool and fails the test unless the result is a success.
func mustOK(t testing.TB, c *client.Client, name, args string) *mcp.CallToolResult {
	t.Helper()
	res := callRaw(t, c, name, args)
	if res.IsError {
		t.Fatalf("%s(%s) failed: %s", name, clip(args), text(res))
	}
	return res
}

// noticeSays fails t for each of want the notice does not hold.
func noticeSays(t testing.TB, notice string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(notice, w) {
			t.Errorf("notice %q lacks %q", notice, w)
		}
	}
}

// noNotice calls the tool name (without arguments) and fails t, saying what, if its result
// starts with a notice: one already told, or one that should never have been.
func noNotice(t testing.TB, c *client.Client, name, what string) {
	t.Helper()
	if got := text(mustOK(t, c, name, `{}`)); strings.Contains(got, "Notice") {
		t.Errorf("%s: %q", what, got)
	}
}

// mustFail calls a tool and fails the test unless the result is an isError result whose text
// holds every one of want.
func mustFail(t testing.TB, c *client.Client, name, args string, want ...string) *mcp.CallToolResult {
	t.Helper()
	res := callRaw(t, c, name, args)
	if !res.IsError {
		t.Fatalf("%s(%s) succeeded, want an error result: %s", name, clip(args), text(res))
	}
	got := text(res)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s(%s) error %q does not contain %q", name, clip(args), got, w)
		}
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// noCheckpoints fails the test, saying what, when the project holds any checkpoint: a call
// that saves one was run.
func (p *project) noCheckpoints(t testing.TB, what string) {
	t.Helper()
	if names, _ := p.other(t, "observer").ListCheckpoints("*"); len(names) != 0 {
		t.Errorf("%s: checkpoints %v", what, names)
	}
}
