package gitremote_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claimtest"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// Counts: small by default so CI stays within a minute on a busy machine; the targets
// (10 clones x 100 appends, 100 tasks x 10 clones over 100 seeds) with CAIRN_REMOTE_FULL=1.

// TestClaimRace: machines with their own clones, clocks an hour apart, race to claim tasks
// over git daemon: exactly one owner per task, for each seed.
func TestClaimRace(t *testing.T) {
	seeds, tasks, machines := scaled(2, 100), scaled(6, 100), scaled(3, 10)
	for seed := range uint64(seeds) {
		// A fresh remote and daemon per seed, stopped when its subtest ends.
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			bare := bareRepo(t)
			url := "git://" + daemon(t, filepath.Dir(bare)) + "/" + filepath.Base(bare)
			start := time.Now()
			claimtest.Race(t, seed, tasks, machines, func(int) remote.Backend { return clone(t, url, gitremote.Refs) })
			t.Logf("%d tasks x %d clones, one owner each, in %v", tasks, machines, time.Since(start).Round(time.Millisecond))
		})
		if t.Failed() {
			return
		}
	}
}

// TestFaultyNetwork lands records from several clones through a proxy in front of git daemon
// that cuts, delays and half-closes connections. A push whose answer is lost may have landed,
// so writers re-read before retrying (remotetest.Land): every record lands exactly once, with
// no gaps. The run then heals the proxy and checks every clone agrees on the heads.
func TestFaultyNetwork(t *testing.T) {
	clients, appends := scaled(3, 10), scaled(4, 100)
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			ctx := bg(t)
			bare := bareRepo(t)
			p := remotetest.NewProxy(t, daemon(t, filepath.Dir(bare)),
				remotetest.Faults{Seed: seed, Cut: 0.3, HalfClose: 0.2, Delay: time.Millisecond, MaxBytes: 600})
			url := "git://" + p.Addr + "/" + filepath.Base(bare)
			open := func() *gitremote.Backend {
				dir := t.TempDir()
				git(t, dir, "init", "-q")
				b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: url, Timeout: 3 * time.Second, Poll: 50 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			var wg sync.WaitGroup
			var cl []*gitremote.Backend
			for i := range clients {
				c := open()
				cl = append(cl, c)
				wg.Go(func() {
					var known int64
					for j := range appends {
						rev, err := remotetest.Land(ctx, c, "wf-cut", known, fmt.Appendf(nil, "c%d-%d", i, j))
						if err != nil {
							t.Errorf("client %d record %d: %v", i, j, err)
							return
						}
						known = rev
					}
				})
			}
			wg.Wait()
			st := p.Stats()
			if st.Cut+st.HalfClosed == 0 {
				t.Fatalf("the proxy injected no faults in %d connections: the test proved nothing", st.Conns)
			}
			t.Logf("proxy: %d connections, %d cut, %d half-closed", st.Conns, st.Cut, st.HalfClosed)
			p.SetFaults(remotetest.Faults{})
			for _, c := range cl {
				r := remotetest.Reread(c)
				remotetest.CheckLine(t, ctx, r, "wf-cut", clients, appends)
				remotetest.MustHeads(t, ctx, r, remote.Heads{"wf-cut": int64(clients * appends)})
			}
		})
	}
}

// TestClaimRaceFaultyNetwork: the claim race through the proxy that cuts and half-closes
// connections. A claim whose push answer is lost is found on the line by the retry, never
// made twice, so each task still has exactly one owner.
func TestClaimRaceFaultyNetwork(t *testing.T) {
	seeds, tasks, machines := scaled(1, 20), scaled(4, 100), scaled(3, 10)
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			bare := bareRepo(t)
			p := remotetest.NewProxy(t, daemon(t, filepath.Dir(bare)),
				remotetest.Faults{Seed: seed, Cut: 0.2, HalfClose: 0.1, MaxBytes: 600})
			url := "git://" + p.Addr + "/" + filepath.Base(bare)
			claimtest.Race(t, seed, tasks, machines, func(int) remote.Backend {
				dir := t.TempDir()
				git(t, dir, "init", "-q")
				b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: url, Timeout: 3 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
			if st := p.Stats(); !t.Failed() && st.Cut+st.HalfClosed == 0 {
				t.Fatalf("the proxy injected no faults in %d connections", st.Conns)
			}
		})
		if t.Failed() {
			return
		}
	}
}
