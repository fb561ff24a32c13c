package store_test

import (
	"bytes"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestEachStateAfterBuildsOnlyTheTail: a lost race or an archive's tail wants the last few
// states of a long line; building every state from r1 to drop them cost the whole line.
func TestEachStateAfterBuildsOnlyTheTail(t *testing.T) {
	const n = 400
	s, _ := newStore(t, noSync)
	transitions(t, s, n)
	j, err := s.ReadJournal(wfID)
	if err != nil {
		t.Fatal(err)
	}
	all, err := j.States()
	if err != nil || len(all) != n {
		t.Fatalf("States: %d (%v), want %d", len(all), err, n)
	}
	for _, after := range []int64{0, 1, n / 2, n - 2, n} {
		var got []store.Record
		alloc := alloctest.Bytes(func() {
			err = j.EachState(after, func(r store.Record) error { got = append(got, r); return nil })
		})
		if err != nil || int64(len(got)) != n-after {
			t.Fatalf("after %d: %d states (%v), want %d", after, len(got), err, n-after)
		}
		for i, r := range got {
			if w := all[int(after)+i]; r.Revision != w.Revision || !bytes.Equal(r.Snapshot, w.Snapshot) {
				t.Fatalf("after %d: state %d is r%d, want r%d as States gives it", after, i, r.Revision, w.Revision)
			}
		}
		if after == n-2 {
			if limit := uint64(len(all[0].Snapshot)) * 40; alloc > limit {
				t.Errorf("the last 2 of %d states allocated %d bytes; want at most %d (not one state per revision)", n, alloc, limit)
			}
		}
	}
}
