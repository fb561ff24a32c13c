package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Claude Code sends no event when a task is deleted, and a new session starts with an empty
// task list: a mirrored task an earlier session left open may be gone there. The next
// session's report says so (a notice; the task is kept, never closed) instead of listing it
// as plainly open; the session that created it, or one that creates it again, does not.
func TestMirroredTaskOfAnEarlierSessionIsToldAsSuch(t *testing.T) {
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	const stale = "1 open task came from an earlier Claude Code session"

	open := func(session string) string {
		t.Helper()
		r := e.open(session).Resume(engine.ResumeOptions{ReportOnly: true})
		if len(r.OpenTasks) != 1 || r.OpenTasks[0] != "write the parser" {
			t.Fatalf("session %s: open tasks %q, want the parser task", session, r.OpenTasks)
		}
		if strings.Contains(r.Report, stale) != strings.Contains(strings.Join(r.Notices, "\n"), stale) {
			t.Errorf("the notice and the report disagree:\n%s", r.Report)
		}
		return strings.Join(r.Notices, "\n")
	}
	if got := open("sess-aaaa-1"); strings.Contains(got, stale) {
		t.Errorf("the session that created it reads it as stale: %q", got)
	}
	if got := open("sess-bbbb-2"); !strings.Contains(got, stale) {
		t.Errorf("a new session reads a task of an earlier one as plainly open: %q", got)
	}
	// Created again in the new session: it is that session's task now.
	must(e.open("sess-bbbb-2").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-bbbb-2", TaskID: "1", Subject: "write the parser"}, false))(t)
	if got := open("sess-bbbb-2"); strings.Contains(got, stale) {
		t.Errorf("created again in this session, it still reads as an earlier session's: %q", got)
	}
	if got := open("sess-cccc-3"); !strings.Contains(got, stale) {
		t.Errorf("a third session reads it as plainly open: %q", got)
	}
}
