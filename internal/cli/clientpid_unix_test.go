//go:build unix

package cli_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestTransitionInClaudeCodesBashRecordsItsClient: the agent's Bash tool has the client's
// CLAUDE_PID (an ancestor of cairn, here the test), so cairn transition run there records the
// owner with that pid, as the MCP tools do; after /clear the same client's SessionStart takes
// that owner for its own session before, not another live session. A CLAUDE_PID of no
// running process is no client: the owner is recorded without a pid.
func TestTransitionInClaudeCodesBashRecordsItsClient(t *testing.T) {
	t.Parallel()
	client := os.Getpid()
	for _, tc := range []struct {
		name, claudePID, owner string
	}{
		{"the client's", strconv.Itoa(client), `(?m)^Owner: +session s1, pid ` + strconv.Itoa(client) + `, heartbeat `},
		{"an exited process's", strconv.Itoa(storetest.ExitedPID(t)), `(?m)^Owner: +session s1, heartbeat `},
		{"not a pid", "x", `(?m)^Owner: +session s1, heartbeat `},
		{"a running process not its ancestor", strconv.Itoa(sibling(t)), `(?m)^Owner: +session s1, heartbeat `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, env := project(t)
			getenv := getenvOf(env)
			hook := func(session, source string) *engine.Engine { // the client's SessionStart hook
				e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "session-start", SessionID: session, PID: client, YAML: yamldoc.Codec{}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = e.Close() })
				if err := e.RecordSession(engine.Session{SessionID: session, Source: source, PID: client}); err != nil {
					t.Fatal(err)
				}
				return e
			}
			e := hook("s1", "startup")
			if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "owned"}); err != nil {
				t.Fatal(err)
			}
			_ = e.Close()
			bash := append(env, "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s1", "CLAUDE_PID="+tc.claudePID)
			run(t, dir, bash, "transition", "plan", "--note", "analysis done")
			out, err := cairnCmd(t, dir, env, "show").CombinedOutput()
			if err != nil || !regexp.MustCompile(tc.owner).Match(out) {
				t.Fatalf("cairn show: %v, want %s\n%s", err, tc.owner, out)
			}
			if tc.name != "the client's" {
				return
			}
			res := hook("s2", "clear").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if res.SystemMessage != "" || strings.Contains(strings.ToLower(res.Report), "another live session") ||
				!strings.Contains(res.Report, "phase plan") {
				t.Errorf("the start after /clear: message %q, report:\n%s", res.SystemMessage, res.Report)
			}
		})
	}
}

// getenvOf looks a variable up in env, as os.Getenv does in the process's environment.
func getenvOf(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// TestForeignClaudePIDIsNoClient: a CLAUDE_PID left in a person's shell (a terminal opened
// from a tmux or an editor that Claude Code's Bash tool started) names a running Claude Code
// client that is not cairn's ancestor: it is not the client cairn runs in. Taking it as such
// made the session that client runs, the workflow's live owner, this terminal's own earlier
// session: cairn status and a change said nothing of another live session, and the change
// took the workflow over with that client's pid. Now such a CLAUDE_PID is no client.
func TestForeignClaudePIDIsNoClient(t *testing.T) {
	t.Parallel()
	other := sibling(t) // the other client
	dir, env := project(t)
	e, err := engine.Open(engine.Config{Getenv: getenvOf(env), Actor: "mcp", SessionID: "owner", PID: other, YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "owned"}); err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
	terminal := append(env, "CLAUDE_PID="+strconv.Itoa(other))
	for _, args := range [][]string{{"status"}, {"transition", "plan", "--note", "analysis done"}} {
		out, _ := cairnCmd(t, dir, terminal, args...).CombinedOutput()
		if !strings.Contains(strings.ToLower(string(out)), "another live session") {
			t.Errorf("cairn %s with another client's CLAUDE_PID does not say another live session owns the workflow:\n%s", args[0], out)
		}
	}
	out, err := cairnCmd(t, dir, env, "show").CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^Owner: +session owner, pid `+strconv.Itoa(other)+`, heartbeat `).Match(out) {
		t.Errorf("cairn show: %v, want the owner kept\n%s", err, out)
	}
}

// sibling is the pid of a running process that is not an ancestor of the cairn the test runs.
func sibling(t *testing.T) int {
	t.Helper()
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p.Process.Pid
}
