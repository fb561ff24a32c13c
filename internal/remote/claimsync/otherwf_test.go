package claimsync_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestOtherWorkflowSameID: two workflows started apart under one id (which cairn sync refuses
// to take for each other, remotesync.ErrOtherWorkflow) share the id's claims line, but not
// their tasks: a task of one is neither held nor taken over by the task of the same id of the
// other, and each machine's claim stays its own through the other's changes.
func TestOtherWorkflowSameID(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	o := cloneOf(t, b, new(int)) // its own wf-1
	for _, step := range []struct {
		c             *clone
		who, task, to string
	}{
		{a, "a", "t1", "running"},
		{o, "o", "t1", "running"},
		{o, "o", "t1", "done"},
		{o, "o", "t2", "running"},
		{a, "a", "t2", "running"},
		{a, "a", "t1", "done"},
		{a, "a", "t2", "done"},
	} {
		if _, err := step.c.task(step.task, step.to); err != nil {
			t.Fatalf("%s setting %s %s: %v", step.who, step.task, step.to, err)
		}
	}
	for _, c := range []*clone{a, o} {
		if notes := c.sync(); len(notes) != 0 {
			t.Errorf("sync: %v", notes)
		}
	}
}
