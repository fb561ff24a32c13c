//go:build windows

package durable

// SyncDir is a no-op on Windows: directories cannot be opened for fsync there ("Access is
// denied"); MoveFileEx with WRITE_THROUGH gives the durability the rename needs.
func SyncDir(dir string) error { return nil }
