package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// costStore is a store in a temporary directory that does not sync (these tests count what a
// read costs, not what a write does), with workflow wfCost written n times: a record of about
// pad bytes whose owner's heartbeat is all that changes, as a long idle session's.
const wfCost = "apex-20261122T173000Z-3f9a"

func costDoc(n int64, pad int) []byte {
	doc, _ := json.Marshal(map[string]any{
		"version": "2.0", "workflow_id": wfCost, "type": "apex", "state": "implement", "status": "active", "revision": n,
		"owner":   map[string]any{"session_id": "s1", "heartbeat": time.Unix(n*120, 0).UTC()},
		"context": strings.Repeat("c", pad),
	})
	return doc
}

func costStore(t *testing.T, n int64, pad int, opts ...Option) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cairn")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s, err := Open(dir, append([]Option{WithFS(durabletest.NoSync{FS: d})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i := int64(1); i <= n; i++ {
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, Event, error) {
			return costDoc(i, pad), Event{Kind: "heartbeat"}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir
}

// TestReadJournalSinceCostsWhatItGives: reading the newest change of a large record whose
// journal holds a long chain of small changes (heartbeats) builds the states it returns, not
// a copy of the whole record for every line of the chain (archive's note check, a retried
// move, L2's owed lines: each read since a recent revision).
func TestReadJournalSinceCostsWhatItGives(t *testing.T) {
	const pad, beats = 64 << 10, 150
	s, dir := costStore(t, beats, pad)
	j, err := s.ReadJournal(wfCost)
	if err != nil || len(j.Records) != beats || j.Records[beats-1].Delta == nil || j.Records[0].Snapshot == nil {
		t.Fatalf("want one chain of %d lines from a full line: %d records (%v)", beats, len(j.Records), err)
	}
	fi, err := os.Stat(filepath.Join(dir, journalFile(wfCost)))
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	n := alloctest.Bytes(func() { recs, err = s.ReadJournalSince(wfCost, beats-1) })
	if err != nil || len(recs) != 1 || !bytes.Equal(recs[0].Snapshot, costDoc(beats, pad)) {
		t.Fatalf("ReadJournalSince(%d): %d records (%v)", beats-1, len(recs), err)
	}
	// What it reads (the journal's tail, in windows growing fourfold, each decoded), the
	// state it builds and the one it gives.
	budget := uint64(8*fi.Size() + 4*pad)
	if n > budget {
		t.Errorf("reading the last of %d changes to a %d KiB record allocated %d KiB, want at most %d KiB", beats, pad>>10, n>>10, budget>>10)
	}
	t.Logf("reading the last of %d changes to a %d KiB record allocated %d KiB", beats, pad>>10, n>>10)
}

// TestReadEventsSince: the lines after a revision come back as written, with their events,
// oldest first, whether they are all in the active journal or some were sealed.
func TestReadEventsSince(t *testing.T) {
	const beats = 300
	s, dir := costStore(t, beats, 1<<10, WithJournalCompaction(8<<10))
	if segs, err := s.segments(journalFile(wfCost)); err != nil || len(segs) < 3 {
		t.Fatalf("want a journal sealed several times: %d segments (%v) in %s", len(segs), err, dir)
	}
	for _, after := range []int64{0, 1, 100, beats - 40, beats - 1, beats, beats + 5} {
		recs, err := s.ReadEventsSince(wfCost, after)
		if err != nil || int64(len(recs)) != max(beats-after, 0) {
			t.Fatalf("after %d: %d records (%v), want %d", after, len(recs), err, max(beats-after, 0))
		}
		for i, r := range recs {
			if r.Revision != after+1+int64(i) || r.Event.Kind != "heartbeat" {
				t.Fatalf("after %d: record %d is revision %d, event %q", after, i, r.Revision, r.Event.Kind)
			}
		}
	}
}

// TestReadJournalKindSinceLast: the last records of a kind after a revision come back with
// their states, oldest first, whether they are in the active journal or were sealed; asked
// for the last few of a long sealed journal, the read goes back only to the segments that
// hold them.
func TestReadJournalKindSinceLast(t *testing.T) {
	const beats = 400
	s, _ := costStore(t, 0, 0, WithJournalCompaction(8<<10))
	kind := func(rev int64) string { return map[bool]string{true: "transition", false: "heartbeat"}[rev%7 == 0] }
	for i := int64(1); i <= beats; i++ {
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, Event, error) {
			return costDoc(i, 1<<10), Event{Kind: kind(i)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if segs, err := s.segments(journalFile(wfCost)); err != nil || len(segs) < 10 {
		t.Fatalf("want a journal sealed many times: %d segments (%v)", len(segs), err)
	}
	cost := map[int]uint64{}
	for _, after := range []int64{0, 100, beats - 30, beats - 3} {
		for _, last := range []int{0, 1, 3, 20, 100} {
			var want []int64
			for rev := after + 1; rev <= beats; rev++ {
				if kind(rev) == "transition" {
					want = append(want, rev)
				}
			}
			if last > 0 && len(want) > last {
				want = want[len(want)-last:]
			}
			var recs []Record
			var err error
			n := alloctest.Bytes(func() { recs, err = s.ReadJournalKindSince(wfCost, after, "transition", last) })
			if after == 0 {
				cost[last] = n
			}
			if err != nil || len(recs) != len(want) {
				t.Fatalf("after %d, last %d: %d records (%v), want %d", after, last, len(recs), err, len(want))
			}
			for i, r := range recs {
				if r.Revision != want[i] || !bytes.Equal(r.Snapshot, costDoc(want[i], 1<<10)) {
					t.Fatalf("after %d, last %d: record %d is revision %d (%.60s), want %d", after, last, i, r.Revision, r.Snapshot, want[i])
				}
			}
		}
	}
	// The last three moves of the whole journal: the segments that hold them, not all of them.
	if cost[3] > cost[0]/4 {
		t.Errorf("the last 3 of %d moves allocated %d bytes, all of them %d: want at most a quarter", beats/7, cost[3], cost[0])
	}
	t.Logf("the last 3 of %d moves allocated %d bytes, all of them %d", beats/7, cost[3], cost[0])
}
