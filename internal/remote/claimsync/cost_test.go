package claimsync_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// counting is a remote that counts the reads and appends made of it: each is a fetch or a
// push over the network on a git remote.
type counting struct {
	remote.Backend
	reads, appends atomic.Int64
}

func (c *counting) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	c.reads.Add(1)
	return c.Backend.Since(ctx, id, rev)
}

func (c *counting) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	c.appends.Add(1)
	return c.Backend.Append(ctx, id, after, data)
}

// TestSyncOfManyClaimsIsOnePush: a sync that renews, or releases, the claims of many tasks
// reads the line and appends to it a fixed number of times, however many tasks: one push per
// task made a renewal of a workflow with many tasks running take as many fetches and pushes.
func TestSyncOfManyClaimsIsOnePush(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		name  string
		setup func(a *clone)
		ops   int64 // records the sync appends
	}{
		{"renew", func(a *clone) { a.vars[claimsync.EnvClockSkew] = "20m" }, n},
		{"release", func(a *clone) {
			for i := range n { // done without the claims rules, as the hooks' task events do
				if _, err := a.en.UpdateTask(engine.TaskRequest{ID: fmt.Sprintf("t%d", i), Status: "done"}); err != nil {
					t.Fatal(err)
				}
			}
			a.pushed()
		}, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &counting{Backend: memremote.New()}
			a := newClone(t, b)
			a.vars[claimsync.EnvLease] = "1h"
			for i := range n {
				if _, err := a.task(fmt.Sprintf("t%d", i), "running"); err != nil {
					t.Fatal(err)
				}
			}
			tc.setup(a)
			before := head(t, b)
			b.reads.Store(0)
			b.appends.Store(0)
			a.sync()
			if got := head(t, b) - before; got != tc.ops {
				t.Fatalf("the sync appended %d records, want %d", got, tc.ops)
			}
			if r, w := b.reads.Load(), b.appends.Load(); r > 3 || w > 1 {
				t.Fatalf("a sync of %d claims read the line %d times and appended %d times, want at most 3 and 1", n, r, w)
			}
		})
	}
}

// TestSyncCostGrowsWithTheClaims: a sync that decides (here: releases the claim of a task done
// without the claims rules) allocates in proportion to the claims this clone holds: it copied
// every holder of the line once per claim of its own.
func TestSyncCostGrowsWithTheClaims(t *testing.T) {
	cost := func(n int) uint64 {
		a := newClone(t, memremote.New())
		a.vars[claimsync.EnvLease] = "1h"
		for i := range n {
			if _, err := a.task(fmt.Sprintf("t%d", i), "running"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t0", Status: "done"}); err != nil {
			t.Fatal(err)
		}
		a.pushed()
		return alloctest.Bytes(func() { a.sync() })
	}
	small, large := cost(50), cost(200)
	if large > 6*small {
		t.Fatalf("a sync holding 200 claims allocated %d bytes, %.1f times one holding 50: want about 4", large, float64(large)/float64(small))
	}
}
