package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestEachJournalSinceDamaged: reading the states forward gives, for a journal damaged at any
// line and from any revision, the states and the broken chain ReadJournalSince gives.
func TestEachJournalSinceDamaged(t *testing.T) {
	t.Parallel()
	const n = 90
	s, dir := newStore(t, noSync, store.WithJournalCompaction(compactAt))
	transitions(t, s, n)
	files, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
	files = append(files, filepath.Join(dir, "journal", wfID+".jsonl"))
	for _, f := range files {
		orig, _ := os.ReadFile(f)
		lines := bytes.SplitAfter(orig, []byte("\n"))
		for i := range lines {
			if len(lines[i]) < 10 {
				continue
			}
			damaged := bytes.Clone(orig)
			off := len(bytes.Join(lines[:i], nil)) + 5
			damaged[off] ^= 1
			os.WriteFile(f, damaged, 0o600)
			for after := int64(0); after <= n; after += 3 {
				want, werr := s.ReadJournalSince(wfID, after)
				var got []store.Record
				gerr := s.EachJournalSince(wfID, after, func(r store.Record) error { got = append(got, r); return nil })
				if store.BrokenChain(werr) != store.BrokenChain(gerr) || (werr == nil) != (gerr == nil) || revs(got) != revs(want) {
					t.Errorf("%s line %d after %d: forward %s (%v), ReadJournalSince %s (%v)", filepath.Base(f), i+1, after, revs(got), gerr, revs(want), werr)
				}
			}
			os.WriteFile(f, orig, 0o600)
		}
	}
}

func revs(recs []store.Record) string {
	if len(recs) == 0 {
		return "none"
	}
	for i, r := range recs {
		if r.Revision != recs[0].Revision+int64(i) || !bytes.Equal(r.Snapshot, crashDoc(r.Revision)) {
			return fmt.Sprintf("r%d..: bad at %d", recs[0].Revision, r.Revision)
		}
	}
	return fmt.Sprintf("r%d..r%d", recs[0].Revision, recs[len(recs)-1].Revision)
}
