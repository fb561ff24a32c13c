// Package claimtest races machines to claim tasks on any remote.Backend and checks that each
// task ends with exactly one owner; shared by the claim tests on memory and on git.
package claimtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
)

// Race has machines claim tasks on one line of a fresh remote, each machine in its own order
// drawn from seed, with clocks an hour apart (-1 h, 0, +1 h, ...) and a lease long enough that
// nothing may be taken over. client(i) opens machine i's Backend. It fails t unless every task
// was won by exactly one Claim call, the winner's token is the task's final claim, and every
// machine sees the same holders.
func Race(t testing.TB, seed uint64, tasks, machines int, client func(i int) remote.Backend) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	type win struct {
		owner string
		fence int64
	}
	var mu sync.Mutex
	wins := map[string][]win{}
	claimers := make([]*claim.Claimer, machines)
	var wg sync.WaitGroup
	for i := range machines {
		off := time.Duration(i%3-1) * time.Hour
		now := func() time.Time { return time.Now().Add(off) }
		c := claim.New(client(i), "claims", fmt.Sprintf("m%d", i), time.Hour, now)
		claimers[i] = c
		order := rand.New(rand.NewPCG(seed, uint64(i))).Perm(tasks)
		wg.Go(func() {
			for _, k := range order {
				task := fmt.Sprintf("task-%d", k)
				fence, err := Claim(ctx, c, task)
				if errors.Is(err, claim.ErrHeld) {
					continue
				}
				if err != nil {
					t.Errorf("seed %d: machine %d claiming %s: %v", seed, i, task, err)
					return
				}
				mu.Lock()
				wins[task] = append(wins[task], win{fmt.Sprintf("m%d", i), fence})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var first map[string]claim.Holder
	for i, c := range claimers {
		// A faulty network may fail a read; only a persistent failure fails the test.
		var err error
		for try := 0; try < 20; try++ {
			if err = c.Refresh(ctx); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("seed %d: machine %d refresh: %v", seed, i, err)
		}
		h := c.Holders()
		if first == nil {
			first = h
		} else if fmt.Sprint(h) != fmt.Sprint(first) {
			t.Fatalf("seed %d: machines disagree on holders:\n%v\n%v", seed, h, first)
		}
	}
	if len(first) != tasks {
		t.Fatalf("seed %d: %d tasks have a holder, want %d", seed, len(first), tasks)
	}
	for task, ws := range wins {
		if len(ws) != 1 {
			t.Fatalf("seed %d: %s was won %d times: %v", seed, task, len(ws), ws)
		}
		if h := first[task]; h.Owner != ws[0].owner || h.Rev != ws[0].fence {
			t.Fatalf("seed %d: %s's holder is %v, but %v won it", seed, task, h, ws[0])
		}
	}
	if len(wins) != tasks {
		t.Fatalf("seed %d: %d tasks were won, want %d", seed, len(wins), tasks)
	}
}

// Claim is c.TryClaim tried again after each failure other than a *HeldError, until ctx ends:
// a machine that keeps claiming through a faulty network. A claim that landed behind a dropped
// connection is found by the next try's read rather than made twice.
func Claim(ctx context.Context, c *claim.Claimer, task string) (int64, error) {
	for {
		fence, err := c.TryClaim(ctx, task)
		if err == nil || errors.Is(err, claim.ErrHeld) || ctx.Err() != nil {
			return fence, err
		}
		_ = remote.Sleep(ctx, 10*time.Millisecond)
	}
}
