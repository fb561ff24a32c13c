package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestSeedOfALongJournalIsFoundAtItsMigration: a seed's state file left in place (its directory
// cannot be written) is found migrated by the line of its journal that migrated it, its first:
// every read that looks for a seed file read the workflow's whole journal for it, active or
// archived, a long one's every full line and delta at once. The read stops at that line.
func TestSeedOfALongJournalIsFoundAtItsMigration(t *testing.T) {
	dir, root, _ := seedProject(t, "seed001/apex-implement.json")
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow)), store.WithProjectFS(noWrites{openDir(t, root)}))
	w, err := s.ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", w.Notices, err)
	}
	const n = 60
	var state int64
	for i := range n {
		if _, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
			var m map[string]any
			if err := json.Unmarshal(cur, &m); err != nil {
				return nil, store.Event{}, err
			}
			m["revision"] = m["revision"].(float64) + 1
			m["context"] = strings.Repeat(fmt.Sprintf("%07d ", i), 32<<10)
			doc, err := json.Marshal(m)
			state = int64(len(doc))
			return doc, store.Event{Kind: "transition"}, err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, where := range []string{"active", "archived"} {
		if where == "archived" {
			if _, err := s.Archive("completed"); err != nil {
				t.Fatal(err)
			}
		}
		held, found := alloctest.PeakHeap(func() bool { _, _, found := s.FindLegacy(); return found })
		if found {
			t.Fatalf("%s: the seed file, migrated, is taken for a second copy of the state", where)
		}
		if bound := 3 * state; held > bound {
			t.Errorf("%s: finding the migration in a journal of %d revisions of %d bytes held %d bytes at once; want at most %d", where, n, state, held, bound)
		}
		t.Logf("%s: finding the migration in a journal of %d revisions of %d bytes held %d bytes at once", where, n, state, held)
	}
}
