//go:build unix

package store

import (
	"os"
	"syscall"
)

// OwnerUID reports the uid of the user who owns fi; ok is false where files have no such
// owner.
func OwnerUID(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
