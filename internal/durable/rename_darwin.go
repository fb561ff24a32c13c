package durable

import (
	"errors"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// renameNoReplace is renameatx_np(RENAME_EXCL) between the two parent directories, each
// opened through root so that no symlink or ".." leads outside it.
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
	err = unix.RenameatxNp(int(od.Fd()), path.Base(oldname), int(nd.Fd()), path.Base(newname), unix.RENAME_EXCL)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP):
		// A filesystem that refuses the flag.
		return renameLinked(root, oldname, newname)
	}
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
}
