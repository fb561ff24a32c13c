//go:build unix

package claimsync

import (
	"os"
	"syscall"
)

// dirIno is the inode of the directory dir, 0 when it cannot be read.
func dirIno(dir string) uint64 {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
