package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Checkpoints are the project's files, not a workflow's: those saved before the active workflow
// started (by their files' times against its start) are told apart in resume_check's answer,
// its report and a load, which still gives the data as saved.
func TestCheckpointsSavedBeforeTheWorkflowAreToldApart(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.SaveCheckpoint("old-plan", json.RawMessage(`{"step":1}`)))(t)
	must(en.SaveCheckpoint("old-risk", json.RawMessage(`{"risk":"low"}`)))(t)
	must(en.CompleteByPerson("first done"))(t)
	e.clock.Add(time.Hour + 30*time.Second) // the second starts half a minute past the hour
	must(en.Start(engine.StartRequest{Type: "apex", Context: "second"}))(t)
	must(en.SaveCheckpoint("new-plan", json.RawMessage(`{"step":2}`)))(t)
	// The files' times as the engine's clock sees the two workflows: the old ones an hour
	// before this start, the new one a minute after it, and old-risk saved again a second
	// before the start, as a file system's coarse clock may stamp a save made just after it.
	start := e.clock.Now()
	file := func(name string) string { return filepath.Join(en.StateDir(), "checkpoints", name+".json") }
	savedAt := func(name string, at time.Time) {
		t.Helper()
		if err := os.Chtimes(file(name), at, at); err != nil {
			t.Fatal(err)
		}
	}
	savedAt("old-plan", start.Add(-time.Hour))
	savedAt("old-risk", start.Add(-time.Hour))
	savedAt("new-plan", start.Add(time.Minute))

	res := en.Resume(engine.ResumeOptions{})
	if want := []string{"new-plan", "old-plan", "old-risk"}; !slices.Equal(res.Checkpoints, want) {
		t.Errorf("checkpoints = %q, want %q (every saved one)", res.Checkpoints, want)
	}
	if want := []string{"old-plan", "old-risk"}; !slices.Equal(res.CheckpointsBefore, want) {
		t.Errorf("checkpoints_before_workflow = %q, want %q", res.CheckpointsBefore, want)
	}
	for _, want := range []string{"\ncheckpoints: new-plan\n", "\ncheckpoints saved before this workflow started: old-plan, old-risk\n"} {
		if !strings.Contains(res.Report, want) {
			t.Errorf("the report does not say %q:\n%s", want, res.Report)
		}
	}

	if note := en.CheckpointBefore("new-plan"); note != "" {
		t.Errorf("a checkpoint saved in this workflow is told %q", note)
	}
	note := en.CheckpointBefore("old-plan")
	if want := "Saved 2026-11-22 10:00 UTC, before this workflow started (2026-11-22 11:00 UTC): it may be another workflow's result."; note != want {
		t.Errorf("old-plan's note = %q, want %q", note, want)
	}
	// Saved in the minute the workflow started: the two times are told apart by their seconds,
	// not as one minute said twice ("Saved 11:00 UTC, before this workflow started (11:00 UTC)").
	savedAt("old-plan", start.Add(-5*time.Second))
	if note, want := en.CheckpointBefore("old-plan"), "Saved 2026-11-22 11:00:25 UTC, before this workflow started (2026-11-22 11:00:30 UTC): it may be another workflow's result."; note != want {
		t.Errorf("old-plan's note = %q, want %q", note, want)
	}
	savedAt("old-plan", start.Add(-time.Hour))
	if d := must(en.LoadCheckpoint("old-plan"))(t); string(d) != `{"step":1}` {
		t.Errorf("old-plan loads as %s, want the data as saved", d)
	}

	// A save near the start is this workflow's: the file's clock may lag the workflow's.
	savedAt("old-risk", start.Add(-time.Second))
	if res := en.Resume(engine.ResumeOptions{}); !slices.Equal(res.CheckpointsBefore, []string{"old-plan"}) {
		t.Errorf("with old-risk saved a second before the start, checkpoints_before_workflow = %q, want [old-plan]", res.CheckpointsBefore)
	}

	// Every checkpoint from before: only the one line names them.
	for _, name := range []string{"new-plan", "old-risk"} {
		if err := os.Remove(file(name)); err != nil {
			t.Fatal(err)
		}
	}
	rep := en.Resume(engine.ResumeOptions{}).Report
	if strings.Contains(rep, "\ncheckpoints: ") || !strings.Contains(rep, "\ncheckpoints saved before this workflow started: old-plan\n") {
		t.Errorf("with no checkpoint of this workflow the report says:\n%s", rep)
	}
}
