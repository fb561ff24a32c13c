package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// The plugin is updated in the middle of a session (here git pull and make build in the
// --plugin-dir checkout: other checksums, and bin/ stamped with them). The MCP server Claude
// Code started went on running the old binary, writing the state the new hooks read. Now its
// next call is refused (nothing was changed: call it again) and it exits; the model calls
// again, as told, in the same turn, and Claude Code starts the server again through the
// launcher, whose new binaries run the call.
// Claude Code notices the old server's exit tens of milliseconds late (more under load), and a
// call made again at once may still go to it: Claude Code answers that call "Connection closed",
// and the model, told so by the refusal, calls once more.
func TestCairnServerUpdatedUnderTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	// An update writes into the plugin: a copy of its own, not the one scenarios share.
	own := filepath.Join(t.TempDir(), "cairn")
	if err := copyTree(w.Plugin, own); err != nil {
		t.Fatal(err)
	}
	w.Plugin = own
	pulled := "1111  cairn_9.9.9_linux_amd64.tar.gz\n"
	update := func() {
		for _, f := range []string{filepath.Join(own, "release", "checksums.txt"), filepath.Join(own, "bin", ".checksums")} {
			if err := os.WriteFile(f, []byte(pulled), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	set := func(v string) mockapi.Reply {
		return mockapi.ToolUse(cairnTool("set_vars"), map[string]any{"vars": map[string]string{"WF_NOTE": v}})
	}
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-PROMPT")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "debug", "context": "the update"})).Named("start"),
		mockapi.Step{Name: "the update, between turns", When: afterToolResult, Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			update()
			return mockapi.Text("started")
		}},
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-PROMPT")), set("old")).Named("call the old server"),
		mockapi.On(afterToolResult, set("again")).Named("call again, as told"),
		mockapi.Step{Name: "once more if the connection closed, as told", When: afterToolResult, Reply: func(m *mockapi.MessagesRequest) mockapi.Reply {
			if trs := m.ToolResults(); strings.Contains(trs[len(trs)-1].Text, connectionClosed) {
				return set("again")
			}
			return mockapi.Text("done")
		}},
	)
	// The call, not the background sync, is to find the update (TestCairnServerUpdatedWhileIdle).
	r := w.runScript(t, RunOptions{Inputs: []string{"FIRST-PROMPT", "SECOND-PROMPT"}, Env: []string{"CAIRN_SYNC_INTERVAL=1h"}})
	trs := r.ToolResults()
	if len(trs) == 4 && trs[2].IsError && strings.Contains(trs[2].Text, connectionClosed) {
		// Claude Code sent the call made again to the old server before it noticed its exit.
		t.Logf("the call made again met the old server's exit: %s", trs[2].Text)
		trs = slices.Delete(trs, 2, 3)
	}
	if len(trs) != 3 {
		t.Fatalf("%d tool results, want 3: %+v", len(trs), trs)
	}
	if trs[0].IsError {
		t.Fatalf("start_workflow before the update: %s", trs[0].Text)
	}
	if !trs[1].IsError || !strings.Contains(trs[1].Text, "Cairn was updated") || !strings.Contains(trs[1].Text, "call set_vars again") {
		t.Errorf("the call to the old server after the update = %+v, want it refused: Cairn was updated ... call set_vars again", trs[1])
	}
	if trs[2].IsError {
		t.Errorf("the call made again after the update: %s", trs[2].Text)
	}
}

// connectionClosed is what Claude Code answers a call sent to an MCP server that exited.
const connectionClosed = "Connection closed"

// The same update while the server is idle: its background sync finds it within the sync
// interval and it exits, and Claude Code starts it again at the next call, which the new
// binaries run: no call is refused.
func TestCairnServerUpdatedWhileIdle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	own := filepath.Join(t.TempDir(), "cairn")
	if err := copyTree(w.Plugin, own); err != nil {
		t.Fatal(err)
	}
	w.Plugin = own
	pulled := "1111  cairn_9.9.9_linux_amd64.tar.gz\n"
	update := func() {
		for _, f := range []string{filepath.Join(own, "release", "checksums.txt"), filepath.Join(own, "bin", ".checksums")} {
			if err := os.WriteFile(f, []byte(pulled), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-PROMPT")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "debug", "context": "the update"})).Named("start"),
		// The answer is held back 2 s: twenty of the server's sync intervals.
		mockapi.Step{Name: "the update, then idle", When: afterToolResult, Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			update()
			r := mockapi.Text("started")
			r.Delay = 2 * time.Second
			return r
		}},
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-PROMPT")),
			mockapi.ToolUse(cairnTool("set_vars"), map[string]any{"vars": map[string]string{"WF_NOTE": "new"}})).Named("call after the update"),
		mockapi.On(afterToolResult, mockapi.Text("done")).Named("end"),
	)
	r := w.runScript(t, RunOptions{Inputs: []string{"FIRST-PROMPT", "SECOND-PROMPT"}, Env: []string{"CAIRN_SYNC_INTERVAL=100ms"}})
	requireToolResultsOK(t, r, 2)
}
