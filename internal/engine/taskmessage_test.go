package engine_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A task's move is said in plain words, and a failed one with what to do about it: "task t1
// is failed" said neither.
func TestUpdateTaskMessage(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	for _, c := range []struct{ status, want string }{
		{"pending", "task t1 is pending"},
		{"running", "task t1 is running"},
		{"failed", "task t1 failed; to retry it, set it to running"},
		{"failed", "task t1 already failed; nothing changed"},
		{"running", "task t1 is running"},
		{"done", "task t1 is done"},
		{"done", "task t1 is already done; nothing changed"},
	} {
		if got := must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: c.status}))(t).Message; got != c.want {
			t.Errorf("%s: %q, want %q", c.status, got, c.want)
		}
	}
}
