package claimsync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestDoneKeepsTheClaimUntilPushed: done is final, and reaches other machines only with this
// clone's next push. Its claim released at once, another machine could claim the task and
// run it again, over a real bare repository here, before the done reached it. The claim now
// stays until a sync finds the done pushed, and is released then.
func TestDoneKeepsTheClaimUntilPushed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setUp func(a *clone)
	}{
		{"set running here", func(a *clone) {
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
		}},
		{"claimed by the done", func(a *clone) { // running here without a claim
			if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, _ := twoClones(t)
			tc.setUp(a)
			if _, err := a.task("t1", "done"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "task t1 is held by "+a.owner()) {
				t.Fatalf("B set running a task A marked done and has not pushed: %v; want it held by A", err)
			}
			a.sync() // before the push, as the syncs run it: the done is not on the remote yet
			if hs := lineHolders(t, a); hs["t1"].Owner != a.owner() {
				t.Fatalf("a sync before the done was pushed released its claim: %+v", hs)
			}
			a.push()
			a.sync()
			if hs := lineHolders(t, a); len(hs) != 0 {
				t.Fatalf("the claim of t1, done and pushed, is still held: %+v", hs)
			}
		})
	}
}

// push syncs the clone's workflow with the remote, and records it, as cairn sync does.
func (c *clone) push() {
	c.t.Helper()
	st := c.store()
	b, err := gitremote.New(gitremote.Config{Dir: c.opt.Root, Remote: "origin"})
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := remotesync.Sync(context.Background(), st, b, "origin", "", remotesync.EngineReplayer(c.en))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := mirror.Synced(st, "origin", out.Workflow, out.Remote, time.Now()); err != nil {
		c.t.Fatal(err)
	}
}

// pushed records the clone's workflow as pushed, as a sync that pushed it would.
func (c *clone) pushed() {
	c.t.Helper()
	st := c.store()
	w, err := st.ReadWorkflow()
	if err != nil {
		c.t.Fatal(err)
	}
	rec, err := store.ParseRecord(w.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := mirror.Synced(st, "origin", rec.WorkflowID, rec.Revision, time.Now()); err != nil {
		c.t.Fatal(err)
	}
}

// store opens the clone's state directory, closed when the test ends.
func (c *clone) store() *store.Store {
	c.t.Helper()
	st, err := store.Open(c.opt.StateDir)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { st.Close() })
	return st
}

// lineHolders is the claims line of wf-1 on c's remote, as another machine reads it.
func lineHolders(t *testing.T, c *clone) map[string]claim.Holder {
	t.Helper()
	r := claim.New(mustGit(t, c.opt.Root), "wf-1", "reader", time.Minute, time.Now)
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.Holders()
}

// TestDoneUnpushedKeepsItsClaimRenewed: the claim of a task done here is kept until the done is
// pushed, so that no machine runs the finished task again, but syncs renewed only the claims
// of running tasks: with the workflow's push failing (a host refusing it, say) for a lease,
// the kept claim lapsed, and another machine took the done task over and ran it again. It is
// now renewed as a running task's is, until the done is pushed.
func TestDoneUnpushedKeepsItsClaimRenewed(t *testing.T) {
	a, b, _ := twoClones(t)
	for _, c := range []*clone{a, b} {
		c.vars[claimsync.EnvLease] = "1h"
	}
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.task("t1", "running"); err == nil { // b reads A's claim
		t.Fatal("B set running a task A marked done and has not pushed")
	}
	a.vars[claimsync.EnvClockSkew] = "30m"
	a.sync() // the done still not pushed
	b.vars[claimsync.EnvClockSkew] = "61m"
	if _, err := b.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "task t1 is held by "+a.owner()) {
		t.Fatalf("B, a lease after it read the claim of t1 (done on A, not pushed, A syncing since), set it running: %v; want it held by A", err)
	}
}
