package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestFinishedWorkflowLockedLeavesTheStepToTheReport: a completed workflow left in the active
// slot (a crash between completing and archiving) whose archive at a session start finds the
// workflow locked by another process: the warning says who holds the lock and that nothing
// changed, without the lock error's "try again", which names no step the model can take: the
// report's next step is to start new work, which archives it.
func TestFinishedWorkflowLockedLeavesTheStepToTheReport(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	replaceInSlot(t, en, 1, `"status":"active"`, `"status":"completed"`)
	d := must(durable.OpenDir(en.StateDir()))(t)
	defer d.Close()
	unlock := must(d.Lock(".lock-workflow", time.Second))(t)
	defer unlock()
	res := e.openWaiting("s2", 4243, 50*time.Millisecond).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "archiving the finished workflow failed") || !strings.Contains(w, "gave up after") {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	if strings.Contains(w, "try again") {
		t.Errorf("the warning names a step the model cannot take: %q", w)
	}
}
