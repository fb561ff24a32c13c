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
