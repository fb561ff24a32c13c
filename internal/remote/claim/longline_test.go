package claim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// longLine is a claims line of n records of size bytes each, made as they are read (as
// gitremote reads them from git): task t claimed by "other" and released in turn, padded with a
// field no Cairn reads. It notes the most heap in use while it hands one over.
type longLine struct {
	*memremote.Backend
	n, size int
	peak    uint64
}

func (l *longLine) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, l, id, rev)
}

func (l *longLine) Each(_ context.Context, _ string, rev int64, fn func(remote.Record) error) error {
	for r := rev + 1; r <= int64(l.n); r++ {
		op, prev := "claim", int64(0)
		if r%2 == 0 {
			op, prev = "release", r-1
		}
		head := fmt.Sprintf(`{"op":%q,"task":"t","owner":"other","prev":%d,"pad":"`, op, prev)
		data := []byte(head + strings.Repeat("x", l.size-len(head)-2) + `"}`)
		l.peak = max(l.peak, alloctest.InUse())
		if err := fn(remote.Record{Rev: r, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// TestLongLineIsFoldedOneRecordAtATime: a Refresh of a long claims line holds about one record
// at a time, not the whole line, and folds it as before.
func TestLongLineIsFoldedOneRecordAtATime(t *testing.T) {
	const n, size = 13, 512 << 10
	l := &longLine{Backend: memremote.New(), n: n, size: size}
	c := claim.New(l, "line", "me", time.Hour, time.Now)
	base := alloctest.InUse()
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if held := int64(l.peak) - int64(base); held > 3*size {
		t.Errorf("reading %d records of %d bytes held %d bytes at once; want about one record's", n, size, held)
	}
	if h := c.Holders()["t"]; h.Owner != "other" || h.Rev != n || c.State().Head != n {
		t.Errorf("holder %+v at head %d; want other's claim at %d", h, c.State().Head, n)
	}
}
