package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestDropOutputsEndsTheQuestion: an output missing on disk was asked about at every session
// start, even after the user said to go on without it, as nothing could record that answer.
// DropOutputs takes the missing ones (of phases, of done tasks, artifacts) off the record, so
// Check says no more of them; those on disk stay, a path that is not a missing output refuses
// the call, and the record it was given is left as it was.
func TestDropOutputsEndsTheQuestion(t *testing.T) {
	r := startedApex(t)
	on := func(p string) bool { return p == "kept.md" }
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = workflow.UpdateTask(res.Record, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskDone, Output: "t1.json"}, t0, alice); err != nil {
		t.Fatal(err)
	}
	if res, err = workflow.AddArtifacts(res.Record, []string{"art.md", "kept.md"}, t0, alice); err != nil {
		t.Fatal(err)
	}
	r = res.Record
	r.Phases = map[string]workflow.Phase{"analyze": {Completed: true, Outputs: []string{"gone.md", "kept.md"}}}
	missing := func(r *workflow.Record) string {
		for _, f := range workflow.Check(workflow.CheckInput{Record: r, Now: t0, Exists: on}) {
			if f.Code == workflow.FindingOutputMissing || f.Code == workflow.FindingArtifactMissing {
				return f.Text
			}
		}
		return ""
	}
	if _, err := workflow.DropOutputs(r, []string{"kept.md"}, on, t0, alice); err == nil || !strings.Contains(err.Error(), `"kept.md" is not a recorded output missing on disk`) {
		t.Errorf("dropping an output on disk: %v", err)
	}
	one, err := workflow.DropOutputs(r, []string{"gone.md"}, on, t0, alice)
	if err != nil || one.Event != workflow.EventDrop || one.Subject != "dropped gone.md" {
		t.Fatalf("one dropped: %+v, %v", one, err)
	}
	if w := missing(one.Record); strings.Contains(w, "gone.md") || !strings.Contains(w, "t1.json") {
		t.Errorf("after dropping gone.md: %q", w)
	}
	all, err := workflow.DropOutputs(one.Record, nil, on, t0, alice)
	if err != nil || all.Subject != "dropped t1.json, art.md" {
		t.Fatalf("every one dropped: %+v, %v", all, err)
	}
	if w := missing(all.Record); w != "" {
		t.Errorf("after dropping every one: %q", w)
	}
	if got := all.Record.Phases["analyze"].Outputs; !slices.Equal(got, []string{"kept.md"}) || !slices.Equal(all.Record.Artifacts, []string{"kept.md"}) {
		t.Errorf("kept: outputs %q, artifacts %q", got, all.Record.Artifacts)
	}
	if again, err := workflow.DropOutputs(all.Record, nil, on, t0, alice); err != nil || again.Changed {
		t.Errorf("nothing missing: %+v, %v", again, err)
	}
	if !slices.Equal(r.Phases["analyze"].Outputs, []string{"gone.md", "kept.md"}) || len(r.Artifacts) != 2 || r.Tasks[0].Output != "t1.json" {
		t.Errorf("the record given changed: %+v", r)
	}
}

// TestUnwrittenOutputsNamesEachOnce: an output given twice (a move's --output repeated) was
// named twice in the warning, "dup.md, dup.md", as if two files were missing.
func TestUnwrittenOutputsNamesEachOnce(t *testing.T) {
	none := func(string) bool { return false }
	if got := workflow.UnwrittenOutputs([]string{"dup.md", "a.md", "dup.md"}, none); !strings.HasPrefix(got, "outputs are missing: dup.md, a.md;") {
		t.Errorf("warning %q", got)
	}
}
