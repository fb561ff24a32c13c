package e2e

import (
	"strings"
	"testing"
)

// A failed task of the current phase was in no step the model read at session start: the
// report said "Continue phase troubleshoot (1 task to run)" beside a failed t1 it did not
// name. The step the real client hands the model counts it and says what to do.
func TestToldFailedTaskInTheStep(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.cairn(t, "start", "debug", "bisect the slow build")
	w.cairn(t, "task", "t1", "running")
	w.cairn(t, "task", "t1", "failed")
	w.cairn(t, "task", "t2", "pending")

	r := w.run(t, RunOptions{Prompt: "FAILED-TASK: where were we?"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	cairnReport(t, r.FirstMain(t)) // the fenced report is there
	if ctx := fromSessionStart(t, r.FirstMain(t)); !strings.Contains(ctx, "\nNext: Continue phase troubleshoot (1 task to run, 1 failed to retry or report to the user), then move on to fix or implement.") {
		t.Errorf("the step the model reads does not tell of the failed task:\n%s", ctx)
	}
}
