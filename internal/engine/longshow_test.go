package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestShowOfALongJournalIsNotHeldWhole: show of a workflow whose history is full reads the older
// moves from its journal; a long journal of a large record (here 60 revisions of about 256 KiB,
// each rewriting it whole) was read whole into memory first, every full line and delta at once.
// It is read one line at a time, active or archived, with the same moves.
func TestShowOfALongJournalIsNotHeldWhole(t *testing.T) {
	moves := workflow.MaxHistory + 5
	en, record, journal := longBig(t, moves)
	for _, state := range []string{"active", "archived"} {
		if state == "archived" {
			must(en.Archive("abandoned"))(t)
		}
		var shown []byte
		held, err := alloctest.PeakHeap(func() (err error) { shown, err = en.Show("apex-long"); return err })
		var r workflow.Record
		if err != nil || json.Unmarshal(shown, &r) != nil || len(r.History) != moves {
			t.Fatalf("%s: show: %v, %d moves, want %d", state, err, len(r.History), moves)
		}
		// A few states: the record read and shown, the state rebuilt, the line it is rebuilt from.
		if bound := 8 * record; held > bound || journal < 4*bound {
			t.Errorf("%s: showing a %d-byte record with a %d-byte journal held %d bytes at once; want at most %d", state, record, journal, held, bound)
		}
		t.Logf("%s: showing a %d-byte record with a %d-byte journal held %d bytes at once", state, record, journal, held)
	}
}

// TestHistoryOfALongJournalIsNotHeldWhole: cairn history (and doctor) read a workflow's whole
// journal into memory, every state it holds, to show each line's event. The states are let go
// as each file of it is read: what is held is its events and a file's lines.
func TestHistoryOfALongJournalIsNotHeldWhole(t *testing.T) {
	en, record, journal := longBig(t, 2)
	for _, state := range []string{"active", "archived"} {
		if state == "archived" {
			must(en.Archive("abandoned"))(t)
		}
		var evs []engine.Event
		held, err := alloctest.PeakHeap(func() (err error) { evs, _, _, err = en.HistoryNotices("apex-long"); return err })
		if err != nil || len(evs) < 60 {
			t.Fatalf("%s: history: %v, %d events", state, err, len(evs))
		}
		// A file of the journal (compacted at 1 MiB and a full line), read and parsed.
		if bound := 3 * int64(store.DefaultCompactAt+record); held > bound || journal < 3*bound {
			t.Errorf("%s: the history of a %d-byte journal held %d bytes at once; want at most %d", state, journal, held, bound)
		}
		t.Logf("%s: the history of a %d-byte journal held %d bytes at once", state, journal, held)
	}
}

// longBig is startLong's workflow after 60 changes that each rewrite about 235 KiB of it, and
// the record's size and its journal's, sealed segments with it.
func longBig(t *testing.T, moves int) (*engine.Engine, int64, int64) {
	en := startLong(t, newEnv(t), moves)
	const revs = 60
	for i := range revs {
		kv := map[string]string{}
		for v := range 4 {
			kv[fmt.Sprintf("WF_BIG%d", v)] = strings.Repeat(fmt.Sprintf("%07d ", i), 7<<10)
		}
		must(en.SetVars(kv))(t)
	}
	record := int64(len(must(readStored(en))(t)))
	var journal int64
	filepath.WalkDir(filepath.Join(en.StateDir(), "journal"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			journal += fi.Size()
		}
		return err
	})
	return en, record, journal
}
