//go:build linux || darwin

package durable

import "golang.org/x/sys/unix"

// NoFreeInodes reports whether the file system dir is on has no free inode left (it counts
// them, and none is free): then a new file is refused with ENOSPC though there is room for
// data. False where it cannot tell.
func NoFreeInodes(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Files > 0 && st.Ffree == 0
}

// NoFreeSpace reports whether the file system dir is on has no block left for this user (df
// shows it 100% used): every write that needs a new block is refused with ENOSPC. False where
// it cannot tell.
func NoFreeSpace(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Blocks > 0 && st.Bavail == 0
}
