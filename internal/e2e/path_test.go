package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// TestCairnOnAgentPath: Claude Code 2.1.330 puts an enabled plugin's bin/ directory on the
// agent's Bash PATH, so a model (or a slash command's bash block) runs `cairn` by name, and
// it is the plugin's own. Here the scripted model asks Bash where cairn is and what it says.
func TestCairnOnAgentPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("PATH-PROMPT")),
			mockapi.ToolUse("Bash", map[string]any{"command": "command -v cairn && cairn types apex", "description": "find cairn"})).Named("bash"),
		mockapi.On(afterToolResult, mockapi.Text("found it")).Named("done"),
	)
	r := w.run(t, RunOptions{Prompt: "PATH-PROMPT: where is cairn?", AllowedTools: []string{"Bash"}})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	requireScriptUsed(t, w)
	trs := requireToolResultsOK(t, r, 1)
	want := filepath.Join(buildPlugin(t, cairnPlugin), "bin", "cairn")
	if !strings.Contains(trs[0].Text, want) || !strings.Contains(trs[0].Text, "approvals:") {
		t.Fatalf("Bash did not run the plugin's cairn (%s) by name; it said:\n%s", want, trs[0].Text)
	}
}
