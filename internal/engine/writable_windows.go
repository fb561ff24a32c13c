//go:build windows

package engine

import "os"

// writable reports whether dir exists; Windows has no cheap access(2), and a failed write
// reports itself anyway.
func writable(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// readOnlyFS: see writable.
func readOnlyFS(string) bool { return false }

var euid = os.Geteuid // -1 here; only otherOwner would use it

// otherOwner: Windows grants writes by ACL, not by owner; a failed write reports itself.
func otherOwner(os.FileInfo) (uid int, other bool) { return 0, false }
