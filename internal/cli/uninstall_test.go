package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// cairn uninstall --yes takes the memory directory's lock file out with Cairn's lines and
// files: it is Cairn's too, and was left there for good.
func TestUninstallRemovesTheMemoryLock(t *testing.T) {
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	lock := filepath.Join(p.memory, ".cairn-memory.lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the workflow's memory line left no lock file: %v", err)
	}
	mustRun(t, p, "", "uninstall", "--yes")
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after cairn uninstall --yes: %s: %v; want it removed", lock, err)
	}
}
