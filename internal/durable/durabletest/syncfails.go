package durabletest

import (
	"io/fs"
	"sync/atomic"
	"syscall"

	"github.com/cairn-dev/cairn/internal/durable"
)

// DirSyncFails wraps an FS whose next Fails syncs of directory Dir fail with EIO, as on a disk
// reporting an I/O error: the renames those syncs were to make durable have happened.
type DirSyncFails struct {
	durable.FS
	Dir   string
	Fails atomic.Int32
}

func (f *DirSyncFails) SyncDir(name string) error {
	if name == f.Dir && f.Fails.Add(-1) >= 0 {
		return &fs.PathError{Op: "sync", Path: name, Err: syscall.EIO}
	}
	return f.FS.SyncDir(name)
}
