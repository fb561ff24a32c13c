package store_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/store"
)

// bigDoc is revision rev of a record of about 256 KiB that each revision rewrites whole: its
// journal holds a full line every few revisions and deltas as large as the record between.
func bigDoc(rev int64) []byte {
	doc, _ := json.Marshal(map[string]any{"version": "2.0", "workflow_id": wfID, "revision": rev,
		"big": strings.Repeat(fmt.Sprintf("%07d ", rev), 32<<10)})
	return doc
}

// TestLongJournalIsNotHeldWhole: reading a long journal's states from its start (the first push
// of a long line, Adopt's runs, an archive shared) held its compact lines whole, every full line
// and delta at once: many times a state. They are replayed as they are read, one state at a
// time, with the same states.
func TestLongJournalIsNotHeldWhole(t *testing.T) {
	const n = 60
	s, _ := newStore(t, noSync, store.WithJournalCompaction(4<<20))
	for range n {
		if _, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
			rev, _ := revision(cur)
			return bigDoc(rev + 1), store.Event{Kind: "transition"}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	state := int64(len(bigDoc(n)))
	sums := make([][32]byte, n+1) // what a state is checked by, without making another
	for rev := int64(1); rev <= n; rev++ {
		sums[rev] = sha256.Sum256(bigDoc(rev))
	}
	bound := 5 * state // a few states: the one rebuilt, the lines it is rebuilt from, the one before
	check := func(what string, after int64, read func(after int64, fn func(store.Record) error) error) {
		t.Helper()
		next := after + 1
		held, err := alloctest.PeakHeap(func() error {
			return read(after, func(r store.Record) error {
				if r.Revision != next || sha256.Sum256(r.Snapshot) != sums[next] {
					return fmt.Errorf("revision %d (%.40s), want %d", r.Revision, r.Snapshot, next)
				}
				next++
				return nil
			})
		})
		if err != nil || next != n+1 {
			t.Fatalf("%s after %d: %v, read up to %d; want revisions %d to %d", what, after, err, next-1, after+1, n)
		}
		if held > bound {
			t.Errorf("%s after %d of %d revisions of %d bytes held %d bytes at once; want at most %d", what, after, n, state, held, bound)
		}
	}
	for _, after := range []int64{0, 1, n / 2, n - 1} {
		check("EachJournalSince", after, func(after int64, fn func(store.Record) error) error {
			return s.EachJournalSince(wfID, after, fn)
		})
	}
	info, err := s.Archive("completed")
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{0, n / 2} {
		check("EachArchiveState", after, func(after int64, fn func(store.Record) error) error {
			return s.EachArchiveState(info.Dir, after, fn)
		})
	}
}
