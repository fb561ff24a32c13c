// Command toy-mcp is the throwaway plugin's MCP server (stdio, mcp-go), used only to prove the
// end-to-end harness. Its tool echo answers with the text it got plus the session id and parent
// pid the server sees; probe answers with its arguments as they arrived. Every JSON-RPC line it
// reads is logged to $TOY_LOG.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("toy", "0.0.1",
		server.WithToolCapabilities(false),
		server.WithInstructions("TOY-INSTRUCTIONS: the toy server echoes."),
	)
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo the text back, with the session the server sees."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to echo")),
	), echo)
	// probe shows what arrives for each schema type: Claude Code rewrites some arguments
	// against the schema before the server sees them (toy_test.go).
	s.AddTool(mcp.NewToolWithRawSchema("probe", "Answer with the arguments as received.", json.RawMessage(probeSchema)), probe)

	var stdin io.Reader = os.Stdin
	if path := os.Getenv("TOY_LOG"); path != "" {
		stdin = io.TeeReader(os.Stdin, &lineLogger{path: path})
	}
	if err := server.NewStdioServer(s).Listen(context.Background(), stdin, os.Stdout); err != nil && err != context.Canceled {
		fmt.Fprintf(os.Stderr, "toy-mcp: %v\n", err)
	}
}

func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("TOY-ECHO: %s session=%s ppid=%d",
		text, os.Getenv("CLAUDE_CODE_SESSION_ID"), os.Getppid())), nil
}

// probeSchema has one property of each JSON type an MCP tool schema uses.
const probeSchema = `{"type":"object","properties":{` +
	`"str":{"type":"string"},"bool":{"type":"boolean"},"num":{"type":"number"},` +
	`"obj":{"type":"object"},"arr":{"type":"array","items":{"type":"string"}},` +
	`"json":{"type":["object","array"]},"map":{"type":"object","additionalProperties":{"type":"string"}}` +
	`},"additionalProperties":false}`

func probe(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText("TOY-ARGS: " + string(b)), nil
}

// lineLogger appends what the server reads, one log line per JSON-RPC message.
type lineLogger struct {
	path string
	buf  []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		msg, rest, ok := bytes.Cut(l.buf, []byte{'\n'})
		if !ok {
			return len(p), nil
		}
		l.buf = rest
		var rpc any = string(msg)
		if json.Valid(msg) {
			rpc = json.RawMessage(msg)
		}
		wd, _ := os.Getwd()
		line, _ := json.Marshal(map[string]any{"who": "mcp", "pid": os.Getpid(), "ppid": os.Getppid(),
			"session": os.Getenv("CLAUDE_CODE_SESSION_ID"), "cwd": wd, "env": claudeEnv(), "rpc": rpc})
		if f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, _ = f.Write(append(line, '\n'))
			f.Close()
		}
	}
}

// claudeEnv is the part of the environment Claude Code sets for plugins.
func claudeEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA",
		"CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}
