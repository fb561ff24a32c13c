//go:build linux || darwin

package durable

import (
	"errors"
	"os"
	"path"
)

// renameAt runs a no-replace rename call between the two parent directories, each opened
// through root so that no symlink or ".." leads outside it (the final names are single
// components, which the call does not follow). Where it fails with one of refused (a
// filesystem or kernel without the flag), the move falls back to a link and an unlink.
func renameAt(root *os.Root, oldname, newname string, call func(olddir int, oldbase string, newdir int, newbase string) error, refused ...error) error {
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
	err = call(int(od.Fd()), path.Base(oldname), int(nd.Fd()), path.Base(newname))
	if err == nil {
		return nil
	}
	for _, r := range refused {
		if errors.Is(err, r) {
			return renameLinked(root, oldname, newname)
		}
	}
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
}
