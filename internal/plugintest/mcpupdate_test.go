package plugintest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The MCP server lives for the whole session. After a plugin update under it (git pull in a
// checkout, with or without make build; a marketplace update in place) the hooks and the CLI
// run the new binaries, and the old server went on writing the workflow state they read. It
// now notices at its next call that the plugin's checksums are not those it was started with,
// and runs no tool (reads repair what they take for damage), saying the one step: reconnect it.
func TestMCPServerNoticesAPluginUpdate(t *testing.T) {
	skipOnWindows(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build cairn-mcp")
	}
	built := filepath.Join(t.TempDir(), "cairn-mcp")
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", built, "./mcpserver")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	binary, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	pulled := "1111  cairn_9.9.9_linux_amd64.tar.gz\n"
	for _, tc := range []struct {
		name    string
		update  func(t *testing.T, root string)
		refused bool
	}{
		{"git pull without make build", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), pulled)
		}, true},
		{"git pull and make build", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), pulled)
			writeFile(t, filepath.Join(root, "bin", ".checksums"), pulled)
		}, true},
		{"plugin removed", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "release", "checksums.txt")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"checksums rewritten the same", func(t *testing.T, root string) {
			sums, err := os.ReadFile(filepath.Join(root, "release", "checksums.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(root, "release", "checksums.txt")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), string(sums))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			bin := filepath.Join(root, "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bin, "cairn-mcp"), binary, 0o755); err != nil {
				t.Fatal(err)
			}
			stamp(t, root, bin)
			work, project, data := launchSite(t)
			env := launchEnv(root, data, work, toolDir(t), "CLAUDE_PROJECT_DIR="+project,
				"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_CODE_SESSION_ID=s-1")
			c := startServer(t, root, env, project)
			if res := c.call(t, "start_workflow", map[string]any{"type": "debug", "context": "the update"}); res.IsError {
				t.Fatalf("start_workflow before the update: %s", res.Text)
			}
			state := filepath.Join(project, ".claude", "cairn")
			before := treeText(t, state)
			tc.update(t, root)
			res := c.call(t, "set_vars", map[string]any{"vars": map[string]string{"WF_NOTE": "v"}})
			if !tc.refused {
				if res.IsError {
					t.Fatalf("set_vars with the plugin's checksums as they were: %s", res.Text)
				}
				return
			}
			if !res.IsError || !strings.Contains(res.Text, "Cairn was updated") || !strings.Contains(res.Text, "/mcp reconnect plugin:cairn:cairn") ||
				!strings.Contains(res.Text, "nothing was changed") {
				t.Fatalf("set_vars after the update = %+v, want it refused: Cairn was updated ... /mcp reconnect plugin:cairn:cairn", res)
			}
			if after := treeText(t, state); after != before {
				t.Errorf("the old server wrote after the update:\nbefore %s\nafter  %s", before, after)
			}
			// A read repairs what it finds damaged, and the old binary may take the new
			// version's files for damage: refused too.
			if res := c.call(t, "get_vars", map[string]any{}); !res.IsError || !strings.Contains(res.Text, "Cairn was updated") {
				t.Errorf("get_vars after the update = %+v, want it refused", res)
			}
		})
	}
}

// treeText is every file under dir with its size and modification time, for telling whether
// anything under it was written.
func treeText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// mcpClient speaks MCP to a cairn-mcp started by the launcher, one request at a time.
type mcpClient struct {
	in  io.Writer
	out *bufio.Reader
	id  int
}

type callResult struct {
	IsError bool
	Text    string
}

// startServer runs hooks/launch cairn-mcp as .mcp.json does, and initializes it.
func startServer(t *testing.T, root string, env []string, dir string) *mcpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	server := exec.CommandContext(ctx, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	server.Env, server.Dir = env, dir
	in, err := server.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	server.Stderr = &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := server.Wait(); err != nil {
			t.Errorf("cairn-mcp: %v: %s", err, stderr.String())
		}
		cancel()
	})
	c := &mcpClient{in: in, out: bufio.NewReader(out)}
	c.send(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "update-test", "version": "0"}})
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *mcpClient) send(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	c.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: no answer: %v", method, err)
	}
	var resp struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || resp.ID != c.id || resp.Error != nil {
		t.Fatalf("%s: answer %s", method, line)
	}
	return resp.Result
}

func (c *mcpClient) call(t *testing.T, tool string, args map[string]any) callResult {
	t.Helper()
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(c.send(t, "tools/call", map[string]any{"name": tool, "arguments": args}), &r); err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range r.Content {
		text = append(text, c.Text)
	}
	return callResult{r.IsError, strings.Join(text, "\n")}
}
