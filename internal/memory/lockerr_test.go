package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A memory lock that cannot be taken for another reason than a holder (here its file is a
// directory; a read-only memory directory, for a user who is not root, alike) is told as
// what it is, not as another Cairn process holding the lock, which sends the person looking
// for a process that is not there.
func TestLockThatCannotBeTakenIsToldAsSuch(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(filepath.Join(dir, LockFile), 0o700); err != nil {
		t.Fatal(err)
	}
	err := m.Record("Active APEX workflow: a completed, b c")
	if !IsUnavailable(err) || strings.Contains(err.Error(), "another Cairn process") || !strings.Contains(err.Error(), filepath.Join(dir, LockFile)) {
		t.Errorf("Record with the lock file a directory: %v", err)
	}
}
