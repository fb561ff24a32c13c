package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestCairnOnAgentPath: Claude Code 2.1.330 puts an enabled plugin's bin/ directory on the
// agent's Bash PATH, so a model (or a slash command's bash block) runs `cairn` by name, and
// it is the plugin's own. Here the scripted model asks Bash where cairn is and what it says.
func TestCairnOnAgentPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	r, out := bashTurn(t, w, "PATH-PROMPT", "PATH-PROMPT: where is cairn?",
		map[string]any{"command": "command -v cairn && cairn types apex", "description": "find cairn"}, "found it")
	w.requirePluginLoaded(t, r)
	want := filepath.Join(buildPlugin(t, cairnPlugin), "bin", "cairn")
	if !strings.Contains(out, want) || !strings.Contains(out, "approvals:") {
		t.Fatalf("Bash did not run the plugin's cairn (%s) by name; it said:\n%s", want, out)
	}
}

// TestInstalledCairnOnAgentPath: a marketplace install has no bin/ (it is not in git), so
// Claude Code puts no plugin directory on the agent's PATH; its binaries are in the plugin's
// data directory (bin-VERSION). The agent still runs `cairn` by name, and it is that set's,
// in the session that installs it (from a release served on 127.0.0.1, no Go) and in the next.
// The Bash tool has no CLAUDE_PLUGIN_ROOT: CAIRN_PLUGIN_ROOT names the plugin there, for that
// cairn to tell whether its set is still the plugin's.
func TestInstalledCairnOnAgentPath(t *testing.T) {
	t.Parallel()
	rw := newReleaseWorld(t)
	inst, manifest := installFrom(t, rw.World, rw.clone)
	root := inst.InstallPath
	if inst.ReadFromFolder != "" {
		root = inst.ReadFromFolder
	}
	for _, session := range []string{"installing", "installed"} {
		r, out := bashTurn(t, rw.World, "PATH-PROMPT", "PATH-PROMPT: where is cairn?",
			map[string]any{"command": `command -v cairn && cairn types apex && echo "root=${CLAUDE_PLUGIN_ROOT-}:$CAIRN_PLUGIN_ROOT"`, "description": "find cairn"}, "found it")
		requireInstalledLoaded(t, r, inst)
		bins, _ := filepath.Glob(filepath.Join(rw.Home, ".claude", "plugins", "data", "*", "bin-"+manifest.Version, "cairn"))
		if len(bins) != 1 || !strings.Contains(out, bins[0]+"\n") || !strings.Contains(out, "approvals:") {
			t.Fatalf("%s session: Bash did not run the installed cairn %v by name; it said:\n%s", session, bins, out)
		}
		if !strings.HasSuffix(strings.TrimSpace(out), "\nroot=:"+root) {
			t.Errorf("%s session: Bash's CAIRN_PLUGIN_ROOT is not the plugin's, %s; it said:\n%s", session, root, out)
		}
	}
}

// TestAgentCannotApproveThroughBash: the agent finds cairn on its PATH, but the approval gate
// holds: Claude Code sets CLAUDECODE in the Bash tool's shell, and cairn approve refuses there,
// so the workflow still waits for a person.
func TestAgentCannotApproveThroughBash(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w, "plan")
	_, out := bashTurn(t, w, "SELF-APPROVE", "SELF-APPROVE: approve the plan yourself",
		map[string]any{"command": "cairn approve 'the agent says yes'; echo \"exit=$?\"; cairn status", "description": "approve"}, "refused")
	if !strings.Contains(out, "not approved: this shell was started by Claude Code") || !strings.Contains(out, "exit=1") ||
		!strings.Contains(out, "waits for a person") {
		t.Fatalf("the agent's Bash approved the plan, or said something else:\n%s", out)
	}
}

// bashTurn has the scripted model, asked prompt (which holds marker), call Bash with input
// and then end its turn saying reply. It runs that turn and returns the run and what the one
// Bash call gave back.
func bashTurn(t *testing.T, w *World, marker, prompt string, input map[string]any, reply string) (*Run, string) {
	t.Helper()
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)), mockapi.ToolUse("Bash", input)).Named("bash"),
		mockapi.On(afterToolResult, mockapi.Text(reply)).Named("done"),
	)
	r := w.run(t, RunOptions{Prompt: prompt, AllowedTools: []string{"Bash"}})
	requireOK(t, r)
	requireScriptUsed(t, w)
	return r, requireToolResultsOK(t, r, 1)[0].Text
}

// TestCairnClearAfterBashChange: the agent sets a task running with cairn in its Bash tool,
// where Claude Code gives its session and its own pid (CLAUDE_PID, as its hooks get), so the
// owner is recorded with this client's pid (cairn show says so); then the user runs /clear.
// The session before /clear ran in this same client, so the report after it does not call it
// another live session (nor tell the user so), says to continue the phase, and the task is
// back to pending.
func TestCairnClearAfterBashChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startApex(t, w)
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BASH-PROMPT")),
			mockapi.ToolUse("Bash", map[string]any{"command": "cairn task t1 running --note 'write the retry loop' && cairn show", "description": "start the task"})).Named("bash"),
		mockapi.On(afterToolResult, mockapi.Text("started")).Named("after bash"),
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-CLEAR")), mockapi.Text("going on")).Named("after clear"),
	)
	r := w.runScript(t, RunOptions{Inputs: []string{"BASH-PROMPT: start the task", "/clear", "AFTER-CLEAR: go on"},
		AllowedTools: []string{cairnPlugin.AllowRule(), "Bash"}})
	tr := requireToolResultsOK(t, r, 1)[0]
	if !strings.Contains(tr.Text, "task t1 is running") {
		t.Fatalf("Bash's cairn did not set the task running: %s", tr.Text)
	}
	sessions := w.clientRecords()
	if len(sessions) != 1 {
		t.Fatalf("sessions/ holds %v, want this client's one record", sessions)
	}
	var client engine.Session
	readJSON(t, sessions[0], &client)
	if want := "session " + r.SessionID() + ", pid " + itoa(client.PID) + ","; !strings.Contains(tr.Text, want) {
		t.Errorf("Bash's cairn did not record this client's pid (%s):\n%s", want, tr.Text)
	}
	starts := requireHooksOK(t, r, "SessionStart")
	if got := strings.Join(hookNames(starts), ","); got != "SessionStart:startup,SessionStart:clear" {
		t.Fatalf("SessionStart hooks %v", got)
	}
	if out := parseHookOutput(t, starts[1]); out.SystemMessage != "" {
		t.Errorf("the start after /clear told the user %q", out.SystemMessage)
	}
	after := w.Mock.Find(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("AFTER-CLEAR")))
	if len(after) != 1 {
		t.Fatalf("%d requests after /clear, want 1", len(after))
	}
	report := cairnReport(t, after[0])
	if strings.Contains(strings.ToLower(report), "another live session") || strings.Contains(report, "(running)") ||
		!after[0].Contains("Next: Continue phase analyze (1 task to run)") {
		t.Errorf("the report after /clear:\n%s", report)
	}
}
