package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// The transition tool has no outcome argument: a move into a terminal phase recorded "reached
// git-commit" as the workflow's outcome whatever its note said, so the completion line the
// next sessions read in memory, and the archive's outcome, lost what the model said of the
// end ("merged as abc123"), which complete_workflow keeps. The note of the move that completes
// the workflow is its outcome; a move without one still gets Cairn's own words.
func TestTerminalMoveNoteIsTheOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ note, outcome, line string }{
		{"merged as abc123", "merged as abc123", ": “merged as abc123”"},
		{"", "reached git-commit", ": reached git-commit"},
	} {
		e, en := startApex(t)
		must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		must(e.open("person").Approve("ok"))(t)
		for _, to := range []string{"implement", "review"} {
			must(en.Transition(engine.TransitionRequest{To: to}))(t)
		}
		id := must(en.Snapshot())(t).WorkflowID
		must(en.Transition(engine.TransitionRequest{To: "git-commit", Note: tc.note}))(t)
		if lines := e.topicLines(t); !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Completed APEX") && strings.HasSuffix(l, tc.line) }) {
			t.Errorf("note %q: memory holds %q, want the completion line ending %q", tc.note, lines, tc.line)
		}
		st := must(store.Open(en.StateDir()))(t)
		r := must(store.ParseRecord(must(st.ReadArchiveRecord(must(st.ArchiveDirOf(id))(t)))(t)))(t)
		st.Close()
		if r.Outcome != tc.outcome {
			t.Errorf("note %q: the archived outcome is %q, want %q", tc.note, r.Outcome, tc.outcome)
		}
	}
}
