package store_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	if _, err := s.ArchiveRecord(record("debug-20261123T100001Z-eeee", 1, "y"), "replaced", nil); err != nil {
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

// symlinkedOut opens a store with an active workflow whose state directory's subdirectory sub
// is a symlink to a directory outside it (none for ""), and returns the store, the state
// directory and that outside directory; sub's own directory, if any, is kept beside it as
// sub.kept.
func symlinkedOut(t *testing.T, sub string) (*store.Store, string, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	if sub == "" {
		return s, dir, ""
	}
	link := filepath.Join(dir, sub)
	if err := os.Rename(link, link+".kept"); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	return s, dir, out
}

// TestArchiveDirSymlinkedOutIsNamed: archive/ a symlink to a directory outside the state
// directory (which the store never follows) refused every change of the workflow with
// "statat archive/pending.json: path escapes from parent" and no step; the refusal names
// archive/ as a symlink in a directory's place and says to move it out, and nothing moves.
func TestArchiveDirSymlinkedOutIsNamed(t *testing.T) {
	s, dir, out := symlinkedOut(t, "archive")
	want := "cannot write archive in " + dir + ": a symlink is in its place, not a directory"
	for name, call := range map[string]func() error{
		"archive": func() error { _, err := s.Archive("completed"); return err },
		"update":  func() error { _, err := s.UpdateWorkflow(setNext(wfID, "plan")); return err },
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "move "+filepath.Join(dir, "archive")+" out of the state directory") || store.InPlace(err) == "" {
			t.Errorf("%s with archive/ a symlink out of the state directory: %v; want %q and the step", name, err, want)
		}
	}
	// Reading the list names it too (it said "statat archive/index.jsonl: path escapes from
	// parent").
	for name, call := range map[string]func() error{
		"list":   func() error { _, err := s.ListArchives(); return err },
		"recent": func() error { _, _, err := s.RecentArchives(3); return err },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "cannot read the archive index: a symlink is in the place of its directory archive/") || !strings.Contains(err.Error(), "move "+filepath.Join(dir, "archive")+" out of the state directory") {
			t.Errorf("%s with archive/ a symlink out of the state directory: %v; want archive/ named, and the step", name, err)
		}
	}
	if names, _ := os.ReadDir(out); len(names) != 0 {
		t.Errorf("the symlink's target holds %d entries, want none", len(names))
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Errorf("the workflow after the refusals: %q, %v; want it active", w.ID, err)
	}
}

// TestJournalDirSymlinkedOutIsNamed: journal/ a symlink out of the state directory refused
// every change with "reading the journal of ID in DIR: statat journal/ID.jsonl: path escapes
// from parent", no step; the refusal names journal/ and says to move it out.
func TestJournalDirSymlinkedOutIsNamed(t *testing.T) {
	s, dir, _ := symlinkedOut(t, "journal")
	_, err := s.UpdateWorkflow(setNext(wfID, "plan"))
	journal := filepath.Join(dir, "journal")
	if err == nil || !strings.Contains(err.Error(), "a symlink is in the place of its directory journal/") || !strings.Contains(err.Error(), "move "+journal+" out of the state directory") || store.InPlace(err) == "" {
		t.Errorf("a change with journal/ a symlink out of the state directory: %v; want journal/ named, and the step", err)
	}
}

// TestArchiveSymlinkedOutIsNamed: an archive's directory moved out of the state directory and
// a symlink left in its place (never followed) was read as "statat
// archive/DIR/workflow-state.json: path escapes from parent", no step; it names the symlink
// and says to move it out.
func TestArchiveSymlinkedOutIsNamed(t *testing.T) {
	s, dir, _ := symlinkedOut(t, "")
	info, err := s.Archive("completed")
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(dir, "archive", info.Dir)
	out := filepath.Join(t.TempDir(), info.Dir)
	if err := os.Rename(at, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, at); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"record":  func() error { _, err := s.ReadArchiveRecord(info.Dir); return err },
		"journal": func() error { _, err := s.ReadArchiveJournal(info.Dir); return err },
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), "a symlink is in the place of its directory archive/"+info.Dir+"/") || !strings.Contains(err.Error(), "move "+at+" out of the state directory") {
			t.Errorf("reading the %s of an archive whose directory is a symlink out of the state directory: %v; want the symlink named, and the step", name, err)
		}
	}
}
