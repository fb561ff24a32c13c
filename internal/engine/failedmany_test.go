package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// The task counts named every failed task: 200 of them made a 20 KB line in cairn status and
// in resume_check's "tasks" (the report cut it mid-id). They name the first five and how many
// more; failed_tasks lists them all.
func TestManyFailedTasksAreCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	for i := range 20 {
		id := fmt.Sprintf("%s-%03d", strings.Repeat("t", 100), i)
		must(en.UpdateTask(engine.TaskRequest{ID: id, Status: "running"}))(t)
		must(en.UpdateTask(engine.TaskRequest{ID: id, Status: "failed"}))(t)
	}
	r := en.Resume(engine.ResumeOptions{Person: true})
	if len(r.Tasks) > 1000 || !strings.HasPrefix(r.Tasks, "20 failed (failed: ") || !strings.HasSuffix(r.Tasks, "-004 +15 more)") || len(r.FailedTasks) != 20 {
		t.Errorf("tasks: %d bytes, want the count and a few ids: %.300q", len(r.Tasks), r.Tasks)
	}
}
