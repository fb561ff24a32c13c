package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestStatusLinesUp: in cairn status every labelled line's value starts in one column, so a
// person reads the values down one edge; several checkpoints are "Checkpoints:", and the
// column moves one on for them, on every line.
func TestStatusLinesUp(t *testing.T) {
	t.Parallel()
	t.Run("one checkpoint", func(t *testing.T) { statusLinesUp(t, "Checkpoint:  findings\n", len("Next phases: "), "findings") })
	t.Run("several checkpoints", func(t *testing.T) {
		statusLinesUp(t, "Checkpoints: findings, plan\n", len("Next phases: "), "findings", "plan")
	})
}

func statusLinesUp(t *testing.T, line string, col int, checkpoints ...string) {
	r := &engine.Resume{Tier: "Full", WorkflowID: "apex-20261101T120000Z-5c1e", Type: "apex", Context: "add retries",
		Phase: "plan", PhaseStatus: "in_progress", AgeSeconds: 60, Completed: []string{"analyze"},
		Allowed: []string{"implement"}, Tasks: "1 done", Checkpoints: checkpoints,
		Approvals: []string{"plan approved"}, AwaitingApproval: "plan"}
	var b strings.Builder
	writeStatus(&b, r, "", false, false)
	if !strings.Contains(b.String(), "\n"+line) {
		t.Errorf("no line %q in:\n%s", line, b.String())
	}
	labelled := 0
	for l := range strings.Lines(b.String()) {
		label, _, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.TrimSpace(l) == label+":" {
			continue // a list's items or title
		}
		labelled++
		if at := len(l) - len(strings.TrimLeft(l[len(label)+1:], " ")); at != col {
			t.Errorf("%q: its value starts in column %d, the others' in %d", strings.TrimSpace(l), at, col)
		}
	}
	if labelled < 9 {
		t.Fatalf("%d labelled lines, want every one the record fills:\n%s", labelled, b.String())
	}
}

// TestStatusAgeInTheFuture: a workflow last changed after now (a negative age) is "in the
// future" in cairn status, as in the report, not "0s ago"; one changed under a minute ago is
// "just now", as the report says it, not "0s ago"; a normal age is worded as before.
func TestStatusAgeInTheFuture(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		age  int64
		want string
	}{{-3600, "Phase:       plan (in progress), last change in the future (clock skew?)\n"},
		{-1, "Phase:       plan (in progress), last change in the future (clock skew?)\n"},
		{0, "Phase:       plan (in progress), last change just now\n"},
		{59, "Phase:       plan (in progress), last change just now\n"},
		{7500, "Phase:       plan (in progress), last change 2h 5m ago\n"}} {
		var b strings.Builder
		writeStatus(&b, &engine.Resume{Tier: "Full", WorkflowID: "apex-1", Type: "apex", Phase: "plan", PhaseStatus: "in_progress", AgeSeconds: tc.age}, "", false, false)
		if !strings.Contains(b.String(), "\n"+tc.want) {
			t.Errorf("age %ds: no line %q in:\n%s", tc.age, tc.want, b.String())
		}
	}
}

// TestStatusNoticesAreThePersons: cairn status shows the resume's notices to the person at the
// terminal, who is the user the agent's words send it to: a tie between two copies of the
// workflow state asks them to choose, not to be asked.
func TestStatusNoticesAreThePersons(t *testing.T) {
	t.Parallel()
	tie := "two copies of the workflow state: kept the active apex-1, archived .claude/workflow-state.json as archive/conflict-apex-1-x (same revision); the seed file is kept as .claude/workflow-state.json.bak; confirm with the user which copy to keep"
	var b strings.Builder
	writeStatus(&b, &engine.Resume{Tier: "None", Notices: []string{tie}}, "", false, false)
	if out := b.String(); strings.Contains(out, "the user") || !strings.Contains(out, "which copy to keep") {
		t.Errorf("status shows the tie in the agent's words:\n%s", out)
	}
}

// TestStatusManyCheckpoints: a project may keep 500 checkpoints (more, saved before that
// bound); cairn status put every name on its one line, 33 KB for 500. It names the first few
// and how many more there are, with the command that lists them all.
func TestStatusManyCheckpoints(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("%s-%03d", strings.Repeat("c", 60), i))
	}
	var b strings.Builder
	writeStatus(&b, &engine.Resume{Tier: "Full", WorkflowID: "apex-1", Type: "apex", Phase: "plan", PhaseStatus: "in_progress", Checkpoints: names}, "", false, false)
	for l := range strings.Lines(b.String()) {
		if len(l) > 1000 {
			t.Errorf("a status line of %d bytes: %.120q…", len(l), l)
		}
	}
	if want := "Checkpoints: " + names[0] + ", "; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "more (cairn checkpoint list)\n") {
		t.Errorf("status does not name the first checkpoints and count the others:\n%.2000s", b.String())
	}
}

// TestStatusCheckpointsBeforeTheWorkflow: the project keeps checkpoints across workflows, so
// cairn status lists those saved before the active workflow started apart from its own.
func TestStatusCheckpointsBeforeTheWorkflow(t *testing.T) {
	t.Parallel()
	var many, manyBefore []string
	for i := range 24 {
		many = append(many, fmt.Sprintf("c%02d", i))
		if i >= 12 {
			manyBefore = append(manyBefore, fmt.Sprintf("c%02d", i))
		}
	}
	for _, tc := range []struct {
		all, before []string
		want        string
	}{
		{[]string{"a", "b", "c"}, []string{"c"}, "Checkpoints: a, b; saved before this workflow started: c\n"},
		{[]string{"a", "c"}, []string{"a", "c"}, "Checkpoints: saved before this workflow started: a, c\n"},
		{[]string{"c"}, []string{"c"}, "Checkpoint:  saved before this workflow started: c\n"},
		{many, manyBefore, "Checkpoints: c00, c01, c02, c03, c04, c05, c06, c07, c08, c09 +2 more; saved before this workflow started: c12, c13, c14, c15, c16, c17, c18, c19, c20, c21 +2 more (cairn checkpoint list)\n"},
	} {
		var b strings.Builder
		writeStatus(&b, &engine.Resume{Tier: "Full", WorkflowID: "apex-1", Type: "apex", Phase: "plan", PhaseStatus: "in_progress", Checkpoints: tc.all, CheckpointsBefore: tc.before}, "", false, false)
		if !strings.Contains(b.String(), "\n"+tc.want) {
			t.Errorf("%q before %q: no line %q in:\n%s", tc.all, tc.before, tc.want, b.String())
		}
	}
}

// TestStatusListsAreShort: cairn status lists the first ten open tasks and the first ten
// blocking violations, and counts the rest with the command that lists them all; a workflow
// with 200 blocking violations of 2,000 characters printed 400 KB.
func TestStatusListsAreShort(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 10, 11, 200} {
		r := &engine.Resume{Tier: "Full", WorkflowID: "apex-1", Type: "apex", Phase: "plan", PhaseStatus: "in_progress"}
		for i := range n {
			r.OpenTasks = append(r.OpenTasks, fmt.Sprintf("task-%03d (pending)", i))
			r.Blocking = append(r.Blocking, engine.Violation{Code: fmt.Sprintf("V-%03d", i), Severity: "high", Details: strings.Repeat("x", 2000)})
		}
		var b strings.Builder
		writeStatus(&b, r, "", false, false)
		out := b.String()
		for _, tc := range []struct{ title, item string }{{"Open tasks:\n", "task-"}, {"Blocking violations:\n", "V-"}} {
			_, after, found := strings.Cut(out, tc.title)
			if found != (n > 0) {
				t.Fatalf("%d: title %q found %v in:\n%s", n, tc.title, found, out)
			}
			items, more := 0, ""
			for l := range strings.Lines(after) {
				if !strings.HasPrefix(l, "  ") {
					break
				}
				if strings.HasPrefix(l, "  - "+tc.item) {
					items++
				} else {
					more = l
				}
			}
			wantMore := ""
			if n > 10 {
				wantMore = fmt.Sprintf("  +%d more (cairn show)\n", n-10)
			}
			if items != min(n, 10) || more != wantMore {
				t.Errorf("%d: %s%d items and %q, want %d and %q", n, tc.title, items, more, min(n, 10), wantMore)
			}
		}
	}
}
