package mcptools_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// terminals starts one cairn-mcp per session over one project, each under a client process of
// its own: Claude Code running in that many terminals.
func terminals(t *testing.T, sessions ...string) []*client.Client {
	t.Helper()
	p := newProject(t)
	var cs []*client.Client
	for _, s := range sessions {
		q := *p
		q.session, q.terminal = s, true
		cs = append(cs, stdioClient(t, &q, protocol))
	}
	return cs
}

// Two sessions in two terminals both set the same task running: the second must not read
// "already running; nothing changed" as if the task were its own to run. It is told that
// another live session changed the workflow, so both do not take up the same task unawares.
func TestTwoTerminalsClaimOneTask(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	a, b := cs[0], cs[1]
	mustOK(t, a, "start_workflow", `{"type":"apex","context":"two terminals"}`)
	if got := text(mustOK(t, a, "update_task", `{"id":"t1","status":"running"}`)); !strings.HasPrefix(got, "Task t1 is running.") {
		t.Fatalf("the first claim said %q", got)
	}
	got := text(mustOK(t, b, "update_task", `{"id":"t1","status":"running"}`))
	if !strings.Contains(got, "already running") || !strings.Contains(got, "Another live session") {
		t.Errorf("the second terminal's claim of a task the first runs said:\n%s", got)
	}
	// The first session, whose claim it is, is told nothing of itself when it says it again.
	if got := text(mustOK(t, a, "update_task", `{"id":"t1","status":"running"}`)); strings.Contains(got, "Another live session") {
		t.Errorf("the claiming session's own retry warns of another session:\n%s", got)
	}
}
