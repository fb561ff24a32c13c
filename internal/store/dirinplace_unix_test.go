//go:build unix

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestSubdirectoryInPlaceReads: with a symlink (to a directory outside, holding a checkpoint
// and a log) or a file where checkpoints/ or logs/ belongs, the writes said what is in its
// place and the one step, but the reads and the delete gave the file system's words ("openat
// checkpoints: path escapes from parent"). Each now says what is in the directory's place and
// to move it out; nothing outside is read, changed or removed.
func TestSubdirectoryInPlaceReads(t *testing.T) {
	ops := []struct {
		dir, op string
		run     func(*store.Store) error
	}{
		{"checkpoints", "load", func(s *store.Store) error { _, err := s.LoadCheckpoint("plan"); return err }},
		{"checkpoints", "list", func(s *store.Store) error { _, err := s.ListCheckpoints(""); return err }},
		{"checkpoints", "delete", func(s *store.Store) error { return s.DeleteCheckpoint("plan") }},
		{"logs", "read", func(s *store.Store) error { _, err := s.ReadLog("events"); return err }},
		{"logs", "tail", func(s *store.Store) error { _, err := s.ReadLogTail("events", 3); return err }},
	}
	for _, kind := range []string{"a symlink", "a file"} {
		for _, op := range ops {
			t.Run(kind+"/"+op.op, func(t *testing.T) {
				s, dir := newStore(t)
				elsewhere := filepath.Join(filepath.Dir(dir), "elsewhere")
				if err := os.MkdirAll(elsewhere, 0o700); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"plan.json", "events.jsonl"} {
					if err := os.WriteFile(filepath.Join(elsewhere, f), []byte("{\"a\":1}\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				place := filepath.Join(dir, op.dir)
				var err error
				if kind == "a symlink" {
					err = os.Symlink(elsewhere, place)
				} else {
					err = os.WriteFile(place, []byte("notes\n"), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := op.run(s)
				said := kind + " is in its place, not a directory" // the directory's own read
				if op.op == "load" || op.op == "read" || op.op == "tail" {
					said = kind + " is in the place of its directory " + op.dir + "/" // a file's in it
				}
				for _, want := range []string{said, "move " + place + " out of the state directory"} {
					if got == nil || !strings.Contains(got.Error(), want) {
						t.Errorf("%s: %v, want it to say %q", op.op, got, want)
					}
				}
				for _, f := range []string{"plan.json", "events.jsonl"} {
					if b, err := os.ReadFile(filepath.Join(elsewhere, f)); err != nil || string(b) != "{\"a\":1}\n" {
						t.Errorf("%s: %s outside changed: %q, %v", op.op, f, b, err)
					}
				}
			})
		}
	}
}

// TestSealedJournalDirectoryInPlace: with a symlink or a file where a journal's sealed segments
// belong (journal/<id>.sealed, or an archive's journal.sealed), history's read gave the file
// system's words ("openat journal/wf-1.sealed: path escapes from parent"). It now says what is
// in the directory's place and to move it out, as a journal file's read does.
func TestSealedJournalDirectoryInPlace(t *testing.T) {
	for _, kind := range []string{"a symlink", "a file"} {
		for _, archived := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/archived=%v", kind, archived), func(t *testing.T) {
				s, dir := newStore(t)
				if _, err := s.UpdateWorkflow(setNext("wf-1", "analyze")); err != nil {
					t.Fatal(err)
				}
				sealed := "journal/wf-1.sealed"
				read := func() error { _, err := s.ReadJournal("wf-1"); return err }
				if archived {
					info, err := s.ArchiveIf("abandoned", "")
					if err != nil {
						t.Fatal(err)
					}
					sealed = "archive/" + info.Dir + "/journal.sealed"
					read = func() error { _, err := s.ReadArchiveJournal(info.Dir); return err }
				}
				place := filepath.Join(dir, filepath.FromSlash(sealed))
				var err error
				if kind == "a symlink" {
					err = os.Symlink(t.TempDir(), place)
				} else {
					err = os.WriteFile(place, []byte("notes\n"), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := read()
				for _, want := range []string{kind + " is in the place of its directory " + sealed + "/", "move " + place + " out of the state directory"} {
					if got == nil || !strings.Contains(got.Error(), want) {
						t.Errorf("%v, want it to say %q", got, want)
					}
				}
			})
		}
	}
}
