package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// benchDoc is a workflow record after n transitions, its history bounded at 50 moves.
func benchDoc(n int64) []byte {
	type move struct {
		From, To, At, Session, Note string
	}
	var hist []move
	for i := max(n-50, 1); i <= n; i++ {
		hist = append(hist, move{"implement", "review", time.Unix(i*60, 0).UTC().Format(time.RFC3339), "sess-1", fmt.Sprintf("round %d", i)})
	}
	doc, _ := json.Marshal(map[string]any{
		"version": "2.0", "workflow_id": "apex-20261122T173000Z-3f9a", "type": "apex", "context": "rebuild bench",
		"revision": n, "state": []string{"implement", "review"}[n%2], "updated_at": time.Unix(n*60, 0).UTC(),
		"phases":  map[string]any{"implement": map[string]any{"completed": n%2 == 1}, "review": map[string]any{"completed": n%2 == 0}},
		"history": hist,
	})
	return doc
}

// BenchmarkRebuild1000 compares reading a 1,000-transition workflow's state from its journal
// alone (what a read does when the snapshot is damaged, whatever revision it was damaged at:
// each iteration rebuilds from the journal as it stood at one of maxChainRecords consecutive
// revisions, so every position in a chain of deltas is covered) with a normal read of the healthy snapshot.
// Target: rebuild/read at most 2. The repair that follows (quarantine, durable rewrite) is a
// write and is not part of it.
func BenchmarkRebuild1000(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "cairn")
	d0, _ := durable.OpenDir(func() string { os.MkdirAll(dir, 0o700); return dir }())
	s, err := Open(dir, WithFS(durabletest.NoSync{FS: d0}))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const total = 1000
	jf := journalFile("apex-20261122T173000Z-3f9a")
	var prefixes [][]byte // the journal file as it stood after each of the last maxChainRecords revisions
	for n := int64(1); n <= total; n++ {
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, Event, error) {
			return benchDoc(n), Event{Kind: "transition", Detail: `{"actor":"agent","from":"implement","to":"review"}`}, nil
		}); err != nil {
			b.Fatal(err)
		}
		if n > total-maxChainRecords {
			data, _ := os.ReadFile(filepath.Join(dir, jf))
			prefixes = append(prefixes, data)
		}
	}
	for i, p := range prefixes {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("journal/r%d.jsonl", i)), p, 0o600)
	}
	var tRead, tRebuild time.Duration
	i := 0
	for b.Loop() {
		k := i % len(prefixes)
		i++
		t0 := time.Now()
		w, err := s.ReadWorkflow()
		t1 := time.Now()
		rec, rerr := s.journalState(fmt.Sprintf("journal/r%d.jsonl", k))
		t2 := time.Now()
		if err != nil || w.Revision != total || rerr != nil || rec == nil {
			b.Fatal(err, rerr)
		}
		want := int64(total - len(prefixes) + 1 + k)
		if rec.Revision != want || !bytes.Equal(rec.Snapshot, benchDoc(want)) {
			b.Fatalf("revision %d rebuilt as %d", want, rec.Revision)
		}
		tRead += t1.Sub(t0)
		tRebuild += t2.Sub(t1)
	}
	b.ReportMetric(float64(tRead.Nanoseconds())/float64(b.N), "read-ns/op")
	b.ReportMetric(float64(tRebuild.Nanoseconds())/float64(b.N), "rebuild-ns/op")
	b.ReportMetric(float64(tRebuild)/float64(tRead), "rebuild/read")
}
