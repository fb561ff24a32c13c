//go:build unix

package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveCheckpointOverWhatIsNotCairns: load refuses a checkpoint whose file is a symlink or
// a FIFO ("not a file Cairn wrote"), but a save of that name replaced it: a user's link was
// cut, the file it pointed at left stale. A save now refuses it as a load does, and leaves it
// as it is.
func TestSaveCheckpointOverWhatIsNotCairns(t *testing.T) {
	s, dir := newStore(t)
	cp := filepath.Join(dir, "checkpoints")
	if err := os.MkdirAll(cp, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(outside, []byte(`{"mine":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, kind string
		make       func(string) error
		mode       os.FileMode
	}{
		{"link", "a symlink", func(p string) error { return os.Symlink(outside, p) }, os.ModeSymlink},
		{"fifo", "a FIFO", mkfifo, os.ModeNamedPipe},
	} {
		file := filepath.Join(cp, tc.name+".json")
		if err := tc.make(file); err != nil {
			t.Fatal(err)
		}
		_, loadErr := s.LoadCheckpoint(tc.name)
		err := s.SaveCheckpoint(tc.name, []byte(`{"x":1}`))
		if err == nil || !strings.Contains(err.Error(), tc.kind+" is in its place") || !strings.Contains(err.Error(), "not saved") {
			t.Errorf("save over %s: %v; want it refused as the load is (%v)", tc.kind, err, loadErr)
		}
		if fi, err := os.Lstat(file); err != nil || fi.Mode().Type() != tc.mode {
			t.Errorf("save over %s replaced it: %v, %v", tc.kind, fi.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"mine":1}` {
		t.Errorf("the file the link points at now holds %s", b)
	}
}
