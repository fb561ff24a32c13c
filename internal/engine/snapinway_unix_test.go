//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestSnapshotInTheWayRebuildsFromJournal: a directory or FIFO in the snapshot's place, while
// the journal holds the workflow, is left as it is, and the resume report's one step is
// doctor's: move it out of the state directory, and the next read rebuilds the snapshot from
// the journal. The person is given that move and `cairn status`; the model, which is not to
// move state files, asks the user to run cairn doctor, then calls resume_check. Before,
// the report asked to make it a readable file again or restore it, a step there is nothing to
// do it with (the state is in the journal, and doctor said as much).
func TestSnapshotInTheWayRebuildsFromJournal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(string) error
	}{
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en, snap := withSnapshotReplaced(t, tc.plant)
			c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
			if c == nil || !strings.Contains(c.Fix, "move "+snap+" out of "+en.StateDir()) {
				t.Fatalf("doctor says %+v", c)
			}
			model := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if want := "ask the user to run `cairn doctor`, which says what to fix, then call " + engine.ToolPrefix + "resume_check"; !strings.Contains(model.Next, want) || strings.Contains(model.Next, "move") ||
				strings.Contains(model.Next, "readable file again") || strings.Contains(model.Next, "cairn status") {
				t.Errorf("model's next step %q, want %q", model.Next, want)
			}
			person := e.open("").Resume(engine.ResumeOptions{Person: true})
			if want := "move " + snap + " out of " + en.StateDir() + ", then run `cairn status`"; !strings.Contains(person.Next, want) ||
				strings.Contains(person.Next, "readable file again") || strings.Contains(person.Next, "resume_check") {
				t.Errorf("person's next step %q, want %q", person.Next, want)
			}
			// The step given is enough: the workflow is read from its journal again.
			if err := os.Rename(snap, filepath.Join(t.TempDir(), "moved")); err != nil {
				t.Fatal(err)
			}
			if r := e.open("s2").Resume(engine.ResumeOptions{Person: true}); r.WorkflowID != "apex-kept" || r.Tier == "Damaged" {
				t.Fatalf("after moving it out: %s %s %q", r.Tier, r.WorkflowID, r.Next)
			}
		})
	}
}

// TestSnapshotInTheWayRefusesAChangeWithItsStep: a change (a variable set, a move) refused for
// a directory, FIFO or symlink in the snapshot's place said "not a regular file (a symlink,
// FIFO, device or directory is in its place; it was left untouched)" and no step, where a
// checkpoint's or a log's refusal names what is there and the one step. It says what is there
// and to move it out, after which the change, made again, goes through.
func TestSnapshotInTheWayRefusesAChangeWithItsStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind string
		plant      func(string) error
	}{
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"fifo", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink", "a symlink", func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "elsewhere.json"), p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, snap := withSnapshotReplaced(t, tc.plant)
			_, err := e.open("s1").SetVars(map[string]string{"PLAN_PATH": "plan.md"})
			if err == nil || engine.Classify(err) != engine.StateUnusable || !strings.Contains(err.Error(), tc.kind+" is in its place") ||
				!strings.HasSuffix(err.Error(), ": move "+snap+" out of the state directory (it may be someone's), then try again") {
				t.Fatalf("SetVars: %v; want %s named and the step to move it out", err, tc.kind)
			}
			if err := os.Rename(snap, filepath.Join(t.TempDir(), "moved")); err != nil {
				t.Fatal(err)
			}
			if _, err := e.open("s1").SetVars(map[string]string{"PLAN_PATH": "plan.md"}); err != nil {
				t.Fatalf("SetVars once it is moved out: %v", err)
			}
		})
	}
}

// withSnapshotReplaced starts workflow apex-kept and puts what plant makes in the place of its
// snapshot, workflow-state.json (at snap).
func withSnapshotReplaced(t *testing.T, plant func(string) error) (e *env, en *engine.Engine, snap string) {
	t.Helper()
	e = newEnv(t)
	en = e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "kept", WorkflowID: "apex-kept"}))(t)
	snap = filepath.Join(en.StateDir(), "workflow-state.json")
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	if err := plant(snap); err != nil {
		t.Fatal(err)
	}
	return e, en, snap
}
