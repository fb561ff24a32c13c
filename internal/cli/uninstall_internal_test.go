package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// A memory lock file a Cairn process holds stays: with it gone, the next writer would lock a
// new file while the holder still writes under the old one. Once released, it is removed.
func TestRemoveMemoryLockLeavesAHeldLock(t *testing.T) {
	dir := t.TempDir()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(memoryLockFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, memoryLockFile)
	removeMemoryLock(dir)
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the held lock file: %v; want it left", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	removeMemoryLock(dir)
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the released lock file: %v; want it removed", err)
	}
}
