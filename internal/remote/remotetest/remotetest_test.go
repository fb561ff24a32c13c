package remotetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// lostAck lands every other append but reports an error, as when a connection drops after the
// remote took a push and before its answer arrived.
type lostAck struct {
	remote.Backend
	n atomic.Int64
}

func (l *lostAck) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	h, err := l.Backend.Append(ctx, id, after, data)
	if err == nil && l.n.Add(1)%2 == 1 {
		return 0, errors.New("connection reset")
	}
	return h, err
}

func TestLandAfterLostAck(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	for i := range 3 {
		c := &lostAck{Backend: b}
		var known int64
		for j := range 4 {
			rev, err := remotetest.Land(ctx, c, "wf", known, []byte{'c', byte('0' + i), '-', byte('0' + j)})
			if err != nil {
				t.Fatal(err)
			}
			known = rev
		}
	}
	remotetest.CheckLine(t, ctx, b, "wf", 3, 4)
}

// lastWriterWins ignores the expected head: the bug the suite exists to catch.
type lastWriterWins struct{ *memremote.Backend }

func (l lastWriterWins) Append(ctx context.Context, id string, _ int64, data remote.Data) (int64, error) {
	h, _ := l.Heads(ctx)
	return l.Backend.Append(ctx, id, h[id], data)
}

// TestSuiteCatchesLastWriterWins runs the suite against a backend that ignores the expected
// head, in a child process, and checks that it fails there.
func TestSuiteCatchesLastWriterWins(t *testing.T) {
	if os.Getenv("REMOTETEST_BROKEN") == "1" {
		remotetest.Run(t, func(t *testing.T) func() remote.Backend {
			b := lastWriterWins{memremote.New()}
			return func() remote.Backend { return b }
		}, remotetest.Options{})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteCatchesLastWriterWins$", "-test.v")
	cmd.Env = append(os.Environ(), "REMOTETEST_BROKEN=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a last-writer-wins backend:\n%s", out)
	}
	for _, name := range []string{"stale-head-writes-nothing", "ahead-head-writes-nothing", "one-winner-per-head"} {
		if !strings.Contains(string(out), "--- FAIL: TestSuiteCatchesLastWriterWins/"+name) {
			t.Errorf("subtest %s did not fail on a last-writer-wins backend", name)
		}
	}
}

// failingReads fails its first fails reads of each kind, as a git past its timeout does.
type failingReads struct {
	remote.Backend
	fails        int
	since, heads int
}

func (f *failingReads) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	if f.since++; f.since <= f.fails {
		return nil, errors.New("no answer within 3s")
	}
	return f.Backend.Since(ctx, id, rev)
}

func (f *failingReads) Heads(ctx context.Context) (remote.Heads, error) {
	if f.heads++; f.heads <= f.fails {
		return nil, errors.New("no answer within 3s")
	}
	return f.Backend.Heads(ctx)
}

// TestReread: a read that fails a few times answers through Reread with what the line holds;
// one that never answers still fails (here once ctx ends, sooner than its 20 tries).
func TestReread(t *testing.T) {
	b := memremote.New()
	remotetest.MustAppend(t, context.Background(), b, "wf", 0, "c0-0", "c0-1")
	for _, c := range []struct {
		fails int
		ok    bool
	}{{0, true}, {3, true}, {1000, false}} {
		bound := time.Minute
		if !c.ok {
			bound = 100 * time.Millisecond
		}
		r := remotetest.Reread(&failingReads{Backend: b, fails: c.fails})
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		recs, err := r.Since(ctx, "wf", 0)
		cancel()
		if (err == nil) != c.ok || c.ok && len(recs) != 2 {
			t.Errorf("Since after %d failures: %d records, %v", c.fails, len(recs), err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), bound)
		h, err := r.Heads(ctx)
		cancel()
		if (err == nil) != c.ok || c.ok && !h.Equal(remote.Heads{"wf": 2}) {
			t.Errorf("Heads after %d failures: %v, %v", c.fails, h, err)
		}
	}
}
