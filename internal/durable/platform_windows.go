//go:build windows

package durable

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Windows has no FIFOs in the file namespace and no O_NONBLOCK for files.
const readFlag = 0

// dirFlag and cloexec have no Windows equivalent (handles are not inherited by default).
const (
	dirFlag = 0
	cloexec = 0
)

// os.Root never follows a final symlink for O_CREATE|O_EXCL, and the identity checks in
// ReadFile and AppendLine cover the rest.
const noFollow = 0

// appendFlag is 0 on Windows: a handle opened for append has no FILE_WRITE_DATA, so it could
// not truncate a torn tail; the caller holds the lock and writes at the end explicitly.
const appendFlag = 0

// linkCount is not available from os.FileInfo on Windows; hard links are not checked there.
func linkCount(fi fs.FileInfo) (uint64, bool) { return 0, false }

// rename retries sharing violations for a bounded time: a reader (or a virus scanner) holding
// the target open without FILE_SHARE_DELETE makes the replace fail transiently on Windows.
func rename(root *os.Root, oldname, newname string) error {
	deadline := time.Now().Add(2 * time.Second)
	delay := time.Millisecond
	for {
		err := root.Rename(oldname, newname)
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, errorSharingViolation) || errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, errorLockViolation)) {
			return err
		}
		time.Sleep(delay)
		if delay < 64*time.Millisecond {
			delay *= 2
		}
	}
}

// syncDirIn is a no-op on Windows: directories cannot be opened for fsync there ("Access is
// denied"); the file itself is synced before the rename.
func syncDirIn(root *os.Root, name string) error { return nil }

// typedEntries lists the directory f.
func typedEntries(f *os.File, _ string) ([]fs.DirEntry, error) { return f.ReadDir(-1) }
