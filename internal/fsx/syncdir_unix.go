//go:build !windows

package fsx

import "os"

// SyncDir fsyncs a directory so that a rename or create inside it survives a power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
