package claimsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
)

// slowLine hands over at most k records of a line per read (any number when k is 0), then
// fails as a read the call's time ran out on does.
type slowLine struct {
	*memremote.Backend
	k int
}

func (s *slowLine) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, s, id, rev)
}

func (s *slowLine) Each(ctx context.Context, id string, rev int64, fn func(remote.Record) error) error {
	recs, err := s.Backend.Since(ctx, id, rev)
	for i, r := range recs {
		if i == s.k && s.k > 0 {
			return context.DeadlineExceeded
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return err
}

// TestLongClaimsLineIsReadOnAcrossCalls: a claims line grown too long to read within one call's
// time is read on by the next call (a sync, a task's) from where the last one stopped, not from
// the start again each time, so it is read whole in the end.
func TestLongClaimsLineIsReadOnAcrossCalls(t *testing.T) {
	mem := &slowLine{Backend: memremote.New()}
	a := newClone(t, mem)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x := claim.New(mem, "wf-1", "X", time.Hour, time.Now)
	grow := func(from int) {
		for i := from; i < from+6; i++ {
			if _, err := x.TryClaim(context.Background(), fmt.Sprintf("x%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	grow(0)
	mem.k = 2
	saved := func() int64 {
		var s mirror.Claims
		data, err := os.ReadFile(filepath.Join(a.opt.StateDir, claimsync.Doc+".json"))
		if err != nil || json.Unmarshal(data, &s) != nil {
			t.Fatalf("claims state: %v\n%s", err, data)
		}
		return s.Line.Head
	}
	was := saved()
	for was < head(t, mem) {
		claimsync.Sync(context.Background(), a.opt, func(string, string) error { return nil })
		h := saved()
		if h <= was {
			t.Fatalf("the line saved is read to %d after a sync, as before it, of %d; want it read on", h, head(t, mem))
		}
		was = h
	}
	grow(6)
	if a.task("t1", "failed"); saved() <= was {
		t.Fatalf("the line saved is read to %d after a task call, as before it", saved())
	}
}
