package store_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestPruneRemovesOnlyASymlinkedArchiveEntry: a symlink in archive/ named like an archive and
// pointing back into the state directory (which holds a snapshot, so it looks like one) is at
// most unlinked by retention: what it points at, the active workflow and its journal, stays.
func TestPruneRemovesOnlyASymlinkedArchiveEntry(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	s, dir := newStore(t, store.WithRetention(1), store.WithClock(clockFrom(fixedNow)))
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive("completed"); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "archive", wfID+"-20200101T000000.000Z")
	if err := os.Symlink("..", link); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(setNext("debug-20261123T100000Z-dddd", "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveRecord(record("debug-20261123T100001Z-eeee", 1, "y"), "replaced"); err != nil {
		t.Fatal(err)
	}
	w, err := s.ReadWorkflow()
	if err != nil || w.ID != "debug-20261123T100000Z-dddd" {
		t.Fatalf("the active workflow after retention: %s %v", w.ID, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "journal", "debug-20261123T100000Z-dddd.jsonl")); err != nil {
		t.Fatalf("its journal: %v", err)
	}
}
