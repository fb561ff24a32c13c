package durabletest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FillDisk fills the file system dir is on (a small tmpfs a test mounted) with a file in dir
// until a write fails with ENOSPC, and returns the file's path: removing it frees the space.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return filler
		}
	}
}
