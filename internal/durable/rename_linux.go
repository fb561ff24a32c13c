package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace is renameat2(RENAME_NOREPLACE). A filesystem that refuses the flag (some
// FUSE and network ones), or a kernel or sandbox without renameat2, gets the link fallback.
func renameNoReplace(root *os.Root, oldname, newname string) error {
	return renameAt(root, oldname, newname, func(od int, o string, nd int, n string) error {
		return unix.Renameat2(od, o, nd, n, unix.RENAME_NOREPLACE)
	}, unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP)
}
