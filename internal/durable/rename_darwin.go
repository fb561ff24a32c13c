package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace is renameatx_np(RENAME_EXCL). A filesystem that refuses the flag gets the
// link fallback.
func renameNoReplace(root *os.Root, oldname, newname string) error {
	return renameAt(root, oldname, newname, func(od int, o string, nd int, n string) error {
		return unix.RenameatxNp(od, o, nd, n, unix.RENAME_EXCL)
	}, unix.EINVAL, unix.ENOTSUP)
}
