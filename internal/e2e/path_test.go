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

// TestAgentCannotApproveThroughBash: the agent finds cairn on its PATH, but the approval gate
// holds: Claude Code sets CLAUDECODE in the Bash tool's shell, and cairn approve refuses there,
// so the workflow still waits for a person.
func TestAgentCannotApproveThroughBash(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w, "plan")
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SELF-APPROVE")),
			mockapi.ToolUse("Bash", map[string]any{"command": "cairn approve 'the agent says yes'; echo \"exit=$?\"; cairn status", "description": "approve"})).Named("bash"),
		mockapi.On(afterToolResult, mockapi.Text("refused")).Named("done"),
	)
	r := w.run(t, RunOptions{Prompt: "SELF-APPROVE: approve the plan yourself", AllowedTools: []string{"Bash"}})
	requireOK(t, r)
	requireScriptUsed(t, w)
	trs := requireToolResultsOK(t, r, 1)
	out := trs[0].Text
	if !strings.Contains(out, "not approved: this shell was started by Claude Code") || !strings.Contains(out, "exit=1") ||
		!strings.Contains(out, "waits for a person") {
		t.Fatalf("the agent's Bash approved the plan, or said something else:\n%s", out)
	}
}
