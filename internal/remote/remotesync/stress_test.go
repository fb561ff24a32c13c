package remotesync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
)

// TestManyMachines: machines with their own clones and clocks up to an hour apart each make
// changes to one workflow (a task each, unique) and sync after every one, all at once. Lost
// races are replayed on the winner's line; at the end every change is on the remote exactly
// once, the remote's revisions have no gaps, and every machine holds the remote's tip. CI runs
// 3 machines x 4 changes; CAIRN_REMOTE_FULL=1 the 10 x 100.
func TestManyMachines(t *testing.T) {
	t.Parallel()
	n, per := 3, 4
	if os.Getenv("CAIRN_REMOTE_FULL") != "" {
		n, per = 10, 100
	}
	ctx := context.Background()
	url := "file://" + bareRepo(t)
	ms := make([]*machine, n)
	rs := make([]*gitremote.Backend, n)
	for i := range ms {
		ms[i] = newMachine(t, time.Duration(i-n/2)*time.Hour/time.Duration(n))
		rs[i] = gitBackend(t, gitremote.Config{Dir: ms[i].dir, Remote: url})
	}
	ms[0].start("wf-many", "many")
	for i, m := range ms {
		m.sync(rs[i], "")
	}
	var mu sync.Mutex
	conflicts, skipped, busy := 0, 0, 0
	start := time.Now()
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			for j := range per {
				if _, err := m.en.UpdateTask(engine.TaskRequest{ID: fmt.Sprintf("m%d-%d", i, j), Status: "pending"}); err != nil {
					t.Errorf("machine %d change %d: %v", i, j, err)
					return
				}
				out, err := remotesync.Sync(ctx, m.st, rs[i], "origin", "", remotesync.EngineReplayer(m.en))
				if errors.Is(err, remotesync.ErrMoved) {
					mu.Lock()
					busy++ // the change stays here, unpushed; a later sync pushes it
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Errorf("machine %d sync %d: %v", i, j, err)
					return
				}
				m.record(out) // as cairn sync and the MCP server do: the next sync reads from here
				if out.Conflict != nil {
					mu.Lock()
					conflicts++
					skipped += len(out.Conflict.Skipped)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	elapsed := time.Since(start)
	// One machine at a time: two passes bring every clone to the remote's tip.
	for range 2 {
		for i, m := range ms {
			out, err := remotesync.Sync(ctx, m.st, rs[i], "origin", "", remotesync.EngineReplayer(m.en))
			if err != nil {
				t.Fatalf("machine %d, final sync: %v", i, err)
			}
			m.record(out)
		}
	}
	agree(t, rs[0], ms...)
	recs, err := rs[0].Since(ctx, "wf-many", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		var e remotesync.Entry
		if err := json.Unmarshal(r.Data, &e); err != nil || e.Revision != int64(i+1) || r.Rev != int64(i+1) {
			t.Fatalf("remote revision %d: %v", i+1, err)
		}
	}
	rec := ms[0].held()
	seen := map[string]int{}
	for _, tk := range rec.Tasks {
		seen[tk.ID]++
	}
	lost, dup := 0, 0
	for i := range n {
		for j := range per {
			switch seen[fmt.Sprintf("m%d-%d", i, j)] {
			case 0:
				lost++
			case 1:
			default:
				dup++
			}
		}
	}
	t.Logf("%d machines x %d changes in %v: %d revisions, %d lost races replayed, %d parts not replayed, %d syncs busy (retried later), %d lost, %d duplicated",
		n, per, elapsed.Round(time.Millisecond), len(recs), conflicts, skipped, busy, lost, dup)
	if lost+dup != 0 || len(seen) != n*per {
		t.Fatalf("%d changes lost, %d duplicated, %d tasks for %d changes", lost, dup, len(seen), n*per)
	}
}
