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

// A session whose view is stale (it still thinks the workflow is in analyze) moves to plan
// without the from guard after the other terminal made that move: its call is no move, and
// the checkpoint and outputs it carried are not recorded. It must be told both, not read
// "already in phase plan; nothing changed" as its own move made.
func TestStaleTerminalMovesWhereTheOtherMoved(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	a, b := cs[0], cs[1]
	mustOK(t, a, "start_workflow", `{"type":"apex","context":"two terminals"}`)
	mustOK(t, a, "transition", `{"to":"plan"}`)
	got := text(mustOK(t, b, "transition", `{"to":"plan","checkpoint":{"found":"b's analysis"},"outputs":["notes/b.md"]}`))
	for _, want := range []string{"lready in phase plan", "Another live session", "not recorded", "save_checkpoint"} {
		if !strings.Contains(got, want) {
			t.Errorf("the stale terminal's move, made by the other, said (want %q):\n%s", want, got)
		}
	}
	// Its own move retried is what it asked for already: no warning, nothing said lost.
	if got := text(mustOK(t, a, "transition", `{"to":"plan"}`)); strings.Contains(got, "Warning") {
		t.Errorf("the moving session's own retry warns:\n%s", got)
	}
}

// Setting variables on a workflow another terminal's session is working in warns of that
// session however many variables one call sets: with two, the warning of the first was
// dropped for the second's, made on the caller's own copy.
func TestOtherTerminalSetsVars(t *testing.T) {
	for _, args := range []string{`{"vars":{"PLAN_PATH":"b.md"}}`, `{"vars":{"PLAN_PATH":"b.md","WF_TICKET":"B-2"}}`} {
		cs := terminals(t, "sess-a", "sess-b")
		mustOK(t, cs[0], "start_workflow", `{"type":"apex","context":"two terminals"}`)
		if got := text(mustOK(t, cs[1], "set_vars", args)); !strings.Contains(got, "Another live session") {
			t.Errorf("set_vars(%s) over the other terminal's workflow said:\n%s", args, got)
		}
	}
}

// Two terminals told to start the same work: the second start finds it started already, in
// the other terminal's live session, and is told so rather than taking it up as its own.
func TestTwoTerminalsStartTheSameWork(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	mustOK(t, cs[0], "start_workflow", `{"type":"apex","context":"two terminals"}`)
	got := text(mustOK(t, cs[1], "start_workflow", `{"type":"apex","context":"two terminals"}`))
	if !strings.Contains(got, "already started") || !strings.Contains(got, "Another live session") {
		t.Errorf("the second terminal's start of the same work said:\n%s", got)
	}
	if got := text(mustOK(t, cs[0], "start_workflow", `{"type":"apex","context":"two terminals"}`)); strings.Contains(got, "Another live session") {
		t.Errorf("the starting session's own retry warns of another session:\n%s", got)
	}
}

// A session whose resume report said analyze guards its move with from: after the other
// terminal's move it is refused, told where the workflow is and the tool that reads it, not
// "read the workflow again", which no tool is called.
func TestStaleTerminalGuardedMoveIsRefused(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	a, b := cs[0], cs[1]
	mustOK(t, a, "start_workflow", `{"type":"apex","context":"two terminals"}`)
	mustOK(t, b, "resume_check", `{}`)
	mustOK(t, a, "transition", `{"to":"plan","from":"analyze"}`)
	mustFail(t, b, "transition", `{"to":"plan","from":"analyze","note":"b's move"}`,
		"expected phase analyze, found plan", "last changed by session sess-a", "nothing was changed: check it with mcp__plugin_cairn_cairn__resume_check")
}

// One terminal replaces the workflow another terminal's session is working in: that session's
// next move, made for the workflow it knew, is refused once with the change told, not made in
// the other terminal's new workflow; after it has looked, its calls go through.
func TestReplacedUnderAStaleTerminal(t *testing.T) {
	for _, call := range [][3]string{
		{"transition", `{"to":"plan"}`, "apex"},
		{"update_task", `{"id":"t1","status":"running"}`, "apex"},
		{"set_vars", `{"vars":{"PLAN_PATH":"a.md"}}`, "apex"},
		// debug has no gate, which an agent may not complete apex's analyze before.
		{"complete_workflow", `{"outcome":"a's work done"}`, "debug"},
		{"set_enforcement", `{"violations":[]}`, "apex"},
	} {
		cs := terminals(t, "sess-a", "sess-b")
		a, b := cs[0], cs[1]
		mustOK(t, a, "start_workflow", `{"type":"`+call[2]+`","context":"a's work"}`)
		mustOK(t, b, "start_workflow", `{"type":"`+call[2]+`","context":"b's work","replace":true}`)
		mustFail(t, a, call[0], call[1], "the active workflow changed since your last call", "nothing was changed", "resume_check")
		// b, who last saw its workflow as it started it, is told of no change by another.
		if got := text(mustOK(t, b, "get_vars", `{}`)); strings.Contains(got, "Notice") {
			t.Errorf("%s: the refused call changed b's workflow:\n%s", call[0], got)
		}
		mustOK(t, a, "resume_check", `{}`)
		mustOK(t, a, call[0], call[1])
	}
}

// The terminal that replaces the workflow another terminal's live session works in is told
// whose work it set aside, as any other change of that session's workflow is.
func TestTerminalReplacesAnothersWorkflow(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	mustOK(t, cs[0], "start_workflow", `{"type":"apex","context":"a's work"}`)
	got := text(mustOK(t, cs[1], "start_workflow", `{"type":"apex","context":"b's work","replace":true}`))
	if !strings.Contains(got, "was archived") || !strings.Contains(got, "Another live session") {
		t.Errorf("replacing the other terminal's workflow said:\n%s", got)
	}
}

// A second terminal's start while the first terminal's session works in its workflow was
// refused with "continue or complete it": the model there then took up, or completed, the
// other session's work. It is now told whose the workflow is, and to leave it to the user.
func TestSecondTerminalStartIsNotSentIntoTheOthersWork(t *testing.T) {
	cs := terminals(t, "sess-a", "sess-b")
	mustOK(t, cs[0], "start_workflow", `{"type":"apex","context":"a's work"}`)
	got := text(mustFail(t, cs[1], "start_workflow", `{"type":"apex","context":"b's work"}`,
		"is still active", "another live session is working in it", "nothing was changed", "tell the user"))
	if strings.Contains(got, "continue or complete it") {
		t.Errorf("the second terminal is told to take up the first one's work:\n%s", got)
	}
	// With no other session in it, the refusal's step is still to continue or complete it.
	mustFail(t, cs[0], "start_workflow", `{"type":"apex","context":"a's other work"}`, "continue or complete it")
}
