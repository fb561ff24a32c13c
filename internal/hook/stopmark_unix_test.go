//go:build unix

package hook

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStopMarkPlanted: the once-per-session mark is best effort: a symlink planted at its
// name is replaced, never written through; a FIFO there neither hangs the hook nor stops the
// mark; a cache that cannot hold it says the failure again rather than failing.
func TestStopMarkPlanted(t *testing.T) {
	cache := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}
		return ""
	}
	dir := filepath.Join(cache, "cairn")
	mark := filepath.Join(dir, "stop-failure-said")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, mark); err != nil {
		t.Fatal(err)
	}
	if saidBefore(getenv, "s1", "broken") {
		t.Fatal("said before, with only a symlink there")
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q, %v", b, err)
	}
	if fi, err := os.Lstat(mark); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the mark is not a regular file in place of the symlink: %v, %v", fi, err)
	}
	if !saidBefore(getenv, "s1", "broken") {
		t.Error("the mark written in place of the symlink was not read back")
	}

	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mark, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- saidBefore(getenv, "s2", "broken") }()
	select {
	case said := <-done:
		if said {
			t.Error("said before, with only a FIFO there")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the mark hung on a FIFO")
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cache = file // a regular file where the cache directory belongs
	for range 2 {
		if saidBefore(getenv, "s3", "broken") {
			t.Error("said before, with no cache to mark it in")
		}
	}
}
