//go:build !windows

package durable

import "os"

// SyncDir fsyncs a directory so that a rename or create inside it survives a power loss.
func SyncDir(dir string) error {
	// O_DIRECTORY|O_NONBLOCK: a FIFO swapped in for the directory fails the open instead of
	// blocking it.
	return syncOpened(os.OpenFile(dir, os.O_RDONLY|dirFlag|readFlag|cloexec, 0))
}

// syncOpened fsyncs and closes the directory just opened; the first error wins.
func syncOpened(d *os.File, err error) error {
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
