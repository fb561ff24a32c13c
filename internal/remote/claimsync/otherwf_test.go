package claimsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/store"
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

// TestReplacedWorkflowsClaimsReleasedBesideOtherWorkflowSameID: a claim this clone held on a
// workflow it replaced out of reach is released once back, though another workflow started
// apart under the same id claimed that task first on the shared line: the release read the line
// as every workflow's at once, took that claim for the task's, and left this clone's on the
// line, refusing the task to the replaced workflow's other machines for a lease.
func TestReplacedWorkflowsClaimsReleasedBesideOtherWorkflowSameID(t *testing.T) {
	b := memremote.New()
	f := &flaky{Backend: b}
	o := cloneOf(t, b, new(int)) // its own wf-1
	a := newClone(t, f)
	a.vars[claimsync.EnvLease] = "1h"
	of := instanceOf(t, a)
	for _, step := range []struct {
		c    *clone
		task string
	}{{o, "t1"}, {a, "t1"}} {
		if _, err := step.c.task(step.task, "running"); err != nil {
			t.Fatal(err)
		}
	}
	f.set(true)
	if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "other", WorkflowID: "wf-2", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("u1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(false)
	a.sync()
	if _, err := claim.New(b, "wf-1", "X", time.Hour, time.Now).Of(of).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatalf("claiming t1 of the workflow the holder replaced offline: %v", err)
	}
}

// instanceOf is the instance (claim.Of) of c's active workflow.
func instanceOf(t *testing.T, c *clone) string {
	t.Helper()
	w, err := c.store().ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.ParseRecord(w.Data)
	if err != nil {
		t.Fatal(err)
	}
	return rec.CreatedAt.UTC().Format(time.RFC3339Nano)
}
