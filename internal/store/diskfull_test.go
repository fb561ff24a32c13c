package store_test

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestDiskFullSaysWhatWasKept: a checkpoint save or a log append refused by a full disk said
// "the previous version was kept", also for a name written the first time, which has none.
// It says the file was left as it was, which is true of both, and a file written before
// holds what it held. A log's first append refused left an empty file behind, so the log
// no longer read as never appended to ("not found", exit 1) but as empty: no file is left.
func TestDiskFullSaysWhatWasKept(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	setup := mustOpen(t, template)
	if _, _, err := setup.SaveCheckpointChanged("old", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := setup.AppendLog("old", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	setup.Close()
	save := func(s *store.Store, name string) error {
		_, _, err := s.SaveCheckpointChanged(name, []byte(`{"b":2}`))
		return err
	}
	appendLog := func(s *store.Store, name string) error { return s.AppendLog(name, []byte(`{"b":2}`)) }
	for _, tc := range []struct {
		name, file string
		write      func(s *store.Store, name string) error
	}{
		{"old", "checkpoints/old.json", save}, {"new", "checkpoints/new.json", save},
		{"old", "logs/old.jsonl", appendLog}, {"new", "logs/new.jsonl", appendLog},
	} {
		s, ff, _, done := faultyCopy(t, template, 0, false)
		if err := tc.write(s, tc.name); err != nil {
			t.Fatal(err)
		}
		done()
		k := slices.IndexFunc(ff.Trace(), func(op string) bool { return strings.Contains(op, " write "+path.Dir(tc.file)+"/") })
		if k < 0 {
			t.Fatalf("%s: no write in %v", tc.file, ff.Trace())
		}
		s, ff, dir, done := faultyCopy(t, template, k+1, false) // a full disk fails writes, not the removal of what the call made
		ff.Err = syscall.ENOSPC
		err := tc.write(s, tc.name)
		done()
		if err == nil || !strings.Contains(err.Error(), "the disk is full") || strings.Contains(err.Error(), "previous version") || !strings.Contains(err.Error(), "was left as it was") {
			t.Errorf("%s: %v, want the disk full and the file left as it was, no previous version", tc.file, err)
		}
		want, werr := os.ReadFile(filepath.Join(template, tc.file))
		got, gerr := os.ReadFile(filepath.Join(dir, tc.file))
		if string(got) != string(want) || os.IsNotExist(werr) != os.IsNotExist(gerr) {
			t.Errorf("%s: holds %q (%v) after the refused write, want %q (%v)", tc.file, got, gerr, want, werr)
		}
	}
}
