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
// runs nothing (reads repair what they take for damage), answers that the call was not run
// and is to be made again, and exits 0: Claude Code starts it again through the launcher at
// the next call, which runs the new binaries.
func TestMCPServerNoticesAPluginUpdate(t *testing.T) {
	skipOnWindows(t)
	binary := builtBinary(t, "./mcpserver")
	pulled := "1111  cairn_9.9.9_linux_amd64.tar.gz\n"
	for _, tc := range []struct {
		name    string
		update  func(t *testing.T, root string)
		refused bool
		rebuilt bool // the launcher then runs bin/ again: the server started anew works
		idle    bool // no call after the update: the background sync finds it, and it exits
	}{
		{"git pull without make build", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), pulled)
		}, true, false, false},
		{"git pull and make build", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), pulled)
			writeFile(t, filepath.Join(root, "bin", ".checksums"), pulled)
		}, true, true, false},
		{"git pull and make build, server idle", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), pulled)
			writeFile(t, filepath.Join(root, "bin", ".checksums"), pulled)
		}, true, true, true},
		{"plugin removed", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "release", "checksums.txt")); err != nil {
				t.Fatal(err)
			}
		}, true, false, false},
		{"checksums rewritten the same", func(t *testing.T, root string) {
			sums, err := os.ReadFile(filepath.Join(root, "release", "checksums.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(root, "release", "checksums.txt")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "release", "checksums.txt"), string(sums))
		}, false, false, false},
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
				"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_CODE_SESSION_ID=s-1", "CAIRN_SYNC_INTERVAL=100ms")
			c := startServer(t, root, env, project)
			if res := c.call(t, "start_workflow", map[string]any{"type": "debug", "context": "the update"}); res.IsError {
				t.Fatalf("start_workflow before the update: %s", res.Text)
			}
			state := filepath.Join(project, ".claude", "cairn")
			before := treeText(t, state)
			tc.update(t, root)
			if tc.idle {
				if code, stderr := c.exit(t); code != 0 || !strings.Contains(stderr, "was updated: exiting") {
					t.Fatalf("the idle old server after the update: exit %d, stderr %q; want exit 0 and one line saying why", code, stderr)
				}
				c = startServer(t, root, env, project)
				if res := c.call(t, "set_vars", map[string]any{"vars": map[string]string{"WF_NOTE": "v"}}); res.IsError {
					t.Errorf("set_vars in the server started after the update: %s", res.Text)
				}
				return
			}
			res := c.call(t, "set_vars", map[string]any{"vars": map[string]string{"WF_NOTE": "v"}})
			if !tc.refused {
				if res.IsError {
					t.Fatalf("set_vars with the plugin's checksums as they were: %s", res.Text)
				}
				return
			}
			if !res.IsError || !strings.Contains(res.Text, "Cairn was updated") || !strings.Contains(res.Text, "nothing was changed") ||
				!strings.Contains(res.Text, "call set_vars again") {
				t.Fatalf("set_vars after the update = %+v, want it refused: nothing was changed: Cairn was updated ... call set_vars again", res)
			}
			if code, stderr := c.exit(t); code != 0 || !strings.Contains(stderr, "was updated: exiting") {
				t.Errorf("the old server after the update: exit %d, stderr %q; want exit 0 and one line saying why", code, stderr)
			}
			if after := treeText(t, state); after != before {
				t.Errorf("the old server wrote after the update:\nbefore %s\nafter  %s", before, after)
			}
			if tc.rebuilt {
				// As Claude Code does at the next call: the launcher again, the new set.
				c := startServer(t, root, env, project)
				if res := c.call(t, "set_vars", map[string]any{"vars": map[string]string{"WF_NOTE": "v"}}); res.IsError {
					t.Errorf("set_vars in the server started after the update: %s", res.Text)
				}
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
	in     io.WriteCloser
	out    *bufio.Reader
	id     int
	server *exec.Cmd
	stderr *strings.Builder
	waited bool
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
	c := &mcpClient{in: in, out: bufio.NewReader(out), server: server, stderr: &strings.Builder{}}
	server.Stderr = c.stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !c.waited {
			c.in.Close() // as Claude Code's shutdown ends it
			if err := c.server.Wait(); err != nil {
				t.Errorf("cairn-mcp: %v: %s", err, c.stderr)
			}
		}
		cancel()
	})
	c.send(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "update-test", "version": "0"}})
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// exit waits for the server to end on its own, unasked (its stdout ends, with nothing more
// written), and returns its exit code and stderr.
func (c *mcpClient) exit(t *testing.T) (int, string) {
	t.Helper()
	if line, err := c.out.ReadBytes('\n'); err != io.EOF {
		t.Errorf("cairn-mcp wrote %q after its last answer (%v), want it to exit", line, err)
	}
	c.waited = true
	_ = c.server.Wait() // an exit other than 0 is the code returned
	c.in.Close()
	return c.server.ProcessState.ExitCode(), c.stderr.String()
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

// A client sends its requests without waiting for answers (Claude Code runs calls in
// parallel). Those the server had already read when it found the update and stopped reading
// were dropped unanswered, and the client waited for them until its timeout; each is now
// answered (a call refused: not run, nothing changed, call it again) before the server exits.
func TestMCPServerAnswersEveryRequestReadBeforeItRestarts(t *testing.T) {
	skipOnWindows(t)
	binary := builtBinary(t, "./mcpserver")
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
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), "1111  cairn_9.9.9_linux_amd64.tar.gz\n")

	// All in one write of less than a pipe's capacity: the server reads them at once, and
	// finds the update at the first.
	const n = 1300
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "tools/call",
		"params": map[string]any{"name": "set_vars", "arguments": map[string]any{"vars": map[string]string{"WF_NOTE": "v"}}}})
	batch := append(req, '\n')
	for i := 1; i < n; i++ {
		batch = fmt.Appendf(batch, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	if len(batch) > 64<<10 {
		t.Fatalf("%d bytes: more than a pipe holds", len(batch))
	}
	if _, err := c.in.Write(batch); err != nil {
		t.Fatal(err)
	}
	answered := map[int]bool{}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			break
		}
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Fatalf("answer %s: %v", line, err)
		}
		if resp.ID == 0 && (!resp.Result.IsError || len(resp.Result.Content) == 0 || !strings.Contains(resp.Result.Content[0].Text, "call set_vars again")) {
			t.Errorf("answer %s, want set_vars refused: nothing was changed ... call set_vars again", line)
		}
		answered[resp.ID] = true
	}
	c.waited = true
	_ = c.server.Wait()
	c.in.Close()
	if code := c.server.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d, want 0: %s", code, c.stderr)
	}
	if len(answered) != n {
		t.Errorf("%d of the %d requests written before the server exited were answered; want every one (the client waits for each)", len(answered), n)
	}
}
