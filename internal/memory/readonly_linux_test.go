package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A memory directory on a read-only filesystem (a real mount, which stops root as well) failed
// as "another Cairn process holds the memory lock", which no process did and which waiting
// for does not mend: the text says the directory is read-only, and MEMORY.md is unchanged.
func TestReadOnlyMount(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("mounting is not allowed here (%v); run as root or under `unshare -rm` to exercise this", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	m := New(Location{Dir: dir}, Options{})
	for what, err := range map[string]error{
		"Record":         m.Record("x y"),
		"RecordLearning": func() error { _, _, err := recordLearning(m, Learning{Title: "t", Body: "b"}); return err }(),
	} {
		if !IsUnavailable(err) || !errors.Is(err, syscall.EROFS) {
			t.Fatalf("%s on a read-only mount: %v", what, err)
		}
		if msg := err.Error(); strings.Contains(msg, "another Cairn process") || !strings.Contains(msg, dir+" is read-only") {
			t.Errorf("%s on a read-only mount: %q; want it to say %s is read-only, not that a process holds the lock", what, msg, dir)
		}
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != "# mine\n" {
		t.Errorf("MEMORY.md changed to %q", got)
	}
}
