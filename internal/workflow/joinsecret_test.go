package workflow_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// An open task is listed as its id and note, each scanned alone when stored: the resume
// report, the compaction anchor and resume_check's structured content take the joined
// string, which must not be a secret. The id stays; a clean task is unchanged.
func TestOpenTasksWithholdAJoinedSecret(t *testing.T) {
	const key = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"
	r := &workflow.Record{State: "fix", Tasks: []workflow.Task{
		{ID: "api_key", Status: workflow.TaskPending, Note: key},
		{ID: "db_password", Status: workflow.TaskRunning, Note: "Tr0ub4dor&3x"},
		{ID: "t3", Status: workflow.TaskPending, Note: "drafted", Phase: "plan"},
	}}
	got := workflow.OpenTasks(r, false)
	if len(got) != 3 {
		t.Fatalf("OpenTasks = %q", got)
	}
	for i, id := range []string{"api_key: ", "db_password: "} {
		if f := secrets.ScanString(got[i]); f != nil || !strings.HasPrefix(got[i], id) {
			t.Errorf("OpenTasks[%d] = %q (secret: %v)", i, got[i], f)
		}
	}
	if !strings.HasSuffix(got[1], " (running)") {
		t.Errorf("OpenTasks[1] = %q, want it still marked running", got[1])
	}
	if got[2] != "t3: drafted (phase plan)" {
		t.Errorf("clean OpenTasks[2] = %q", got[2])
	}
}
