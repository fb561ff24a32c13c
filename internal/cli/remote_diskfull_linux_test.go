package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestSyncOnAFullDisk: a sync whose git could not write this clone's objects (the disk full)
// said only git's line ("git hash-object: fatal: unable to write loose object file: No space
// left on device") and exited 1, a refusal. It says the disk is full, that nothing here
// changed, and the step, with exit 3 as every write a full disk refuses; once there is space
// the same command pushes.
func TestSyncOnAFullDisk(t *testing.T) {
	base := bareRepo(t)
	m := newMachine(t, "file://"+filepath.Join(base, "shared.git"))
	m.must("start", "apex", "full disk", "--id", "wf-f")
	m.must("remote", "enable", "--yes")
	objects := filepath.Join(m.dir, ".git", "objects")
	durabletest.Mount(t, "tmpfs", objects, "tmpfs", 0, "size=256k,mode=0700", false)
	for _, d := range []string{"info", "pack"} {
		if err := os.Mkdir(filepath.Join(objects, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filler := durabletest.FillDisk(t, objects)
	code, out, errb := m.cairn("sync")
	if code != 3 || !strings.Contains(errb, "the disk is full") || !strings.Contains(errb, "nothing here changed") ||
		!strings.Contains(errb, "free some space, then run cairn sync again") {
		t.Errorf("sync on a full disk: exit %d\n%s%s", code, out, errb)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if out := m.must("sync"); !strings.Contains(out, "wf-f: pushed 1 revision to origin") {
		t.Errorf("sync once there is space: %s", out)
	}
}
