package durabletest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// FillInodes takes every free inode of the file system dir is on (a small tmpfs a test
// mounted with nr_inodes) with empty files in a new directory in dir, until a create fails with
// ENOSPC, and returns that directory: removing it frees them. The disk keeps room for data.
func FillInodes(t testing.TB, dir string) string {
	t.Helper()
	fill, err := os.MkdirTemp(dir, "inodes")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(fill, strconv.Itoa(i)))
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return fill
		}
		f.Close()
	}
}
