package claimsync_test

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// streamOnly is a remote whose lines must be read record by record (remote.Each), never whole.
type streamOnly struct {
	*memremote.Backend
	t *testing.T
}

func (s streamOnly) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	s.t.Errorf("line %s read whole from revision %d", id, rev)
	return s.Backend.Since(ctx, id, rev)
}

// TestClaimsLineIsReadRecordByRecord: a task call and a sync hand the claims line to the
// claims one record at a time, so a line of many large records (anyone who can push may make
// one) is never held whole in memory (claim's TestLongLineIsFoldedOneRecordAtATime).
func TestClaimsLineIsReadRecordByRecord(t *testing.T) {
	mem := memremote.New()
	a, b := newClone(t, streamOnly{mem, t}), newClone(t, streamOnly{mem, t})
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.task("t1", "running"); err == nil {
		t.Fatal("b claimed t1, which a holds")
	}
	a.sync()
	if h := head(t, mem); h != 1 {
		t.Fatalf("claims line at %d after t1's claim; want 1", h)
	}
}
