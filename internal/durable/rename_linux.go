package durable

import (
	"errors"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// renameNoReplace is renameat2(RENAME_NOREPLACE) between the two parent directories, each
// opened through root so that no symlink or ".." leads outside it (the final names are
// single components, which renameat2 does not follow).
func renameNoReplace(root *os.Root, oldname, newname string) error {
	od, err := root.OpenFile(path.Dir(oldname), os.O_RDONLY|dirFlag|cloexec, 0)
	if err != nil {
		return err
	}
	defer od.Close()
	nd, err := root.OpenFile(path.Dir(newname), os.O_RDONLY|dirFlag|cloexec, 0)
	if err != nil {
		return err
	}
	defer nd.Close()
	err = unix.Renameat2(int(od.Fd()), path.Base(oldname), int(nd.Fd()), path.Base(newname), unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		// A filesystem that refuses the flag (some FUSE and network ones), or a kernel or
		// sandbox without renameat2.
		return renameLinked(root, oldname, newname)
	}
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
}
