package durable_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestReadDirStatsNoEntry: ReadDir takes each entry's type from the directory read (d_type),
// with no stat per entry, which a listing of 10,000 checkpoints would pay for: an entry's
// FileInfo is read only when asked for, so one removed after the listing has none. (A File
// opened in an os.Root stats every entry in ReadDir.)
func TestReadDirStatsNoEntry(t *testing.T) {
	d, dir := mustDir(t)
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := d.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]os.FileMode{}
	for _, e := range entries {
		types[e.Name()] = e.Type()
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
		if fi, err := e.Info(); err == nil {
			t.Errorf("%s: a FileInfo (%v) for a file removed after the listing: ReadDir stated it", e.Name(), fi.Mode())
		}
	}
	if len(types) != 4 || !types["f0"].IsRegular() || !types["sub"].IsDir() {
		t.Errorf("entries %v", types)
	}
}
