package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestOutputNotWrittenIsSaid: a move or a done task that records an output the project does
// not hold (not written yet, or named from another directory) said nothing, and the next
// session start stopped on it ("referenced outputs are missing", asked until they exist). The
// call that records it now says so, while the file can still be written; one that exists is
// recorded without a word.
func TestOutputNotWrittenIsSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "debug", Context: "flaky test"}))(t)
	if err := os.WriteFile(filepath.Join(e.project, "repro.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	said := func(res *engine.Result) bool {
		return slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "outputs are missing: notes/gone.md") })
	}
	if res := must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t); len(res.Warnings) > 0 {
		t.Errorf("running task: %q", res.Warnings)
	}
	if res := must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "done", Output: "notes/gone.md"}))(t); !said(res) {
		t.Errorf("done task with a missing output: %q", res.Warnings)
	}
	if res := must(en.Transition(engine.TransitionRequest{To: "fix", Outputs: []string{"repro.md", "notes/gone.md"}}))(t); !said(res) || strings.Contains(strings.Join(res.Warnings, "\n"), "repro.md") {
		t.Errorf("move with a missing output: %q", res.Warnings)
	}
	if res := must(en.Transition(engine.TransitionRequest{To: "review", Outputs: []string{"repro.md"}}))(t); len(res.Warnings) > 0 {
		t.Errorf("move with an output that exists: %q", res.Warnings)
	}
}
