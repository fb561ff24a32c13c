//go:build unix

package store_test

import (
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
