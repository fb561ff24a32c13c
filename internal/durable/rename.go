package durable

import (
	"errors"
	"io/fs"
	"os"
	"path"
)

// RenameNoReplace moves oldname to newname inside fsys unless newname exists, durably: it
// then syncs newname's directory and, if it is another, oldname's. When newname exists it
// returns an error matching fs.ErrExist and changes nothing, so a caller that picked a free
// name tries the next one instead of overwriting what appeared there meanwhile. A move that
// happened but whose directories could not be synced is a *NotDurableError.
func RenameNoReplace(fsys FS, oldname, newname string) error {
	if err := fsys.RenameNoReplace(oldname, newname); err != nil {
		return err
	}
	to, from := path.Dir(newname), path.Dir(oldname)
	err := fsys.SyncDir(to)
	if err == nil && from != to {
		err = fsys.SyncDir(from)
	}
	if err != nil {
		return &NotDurableError{Path: newname, Err: err}
	}
	return nil
}

// renameLinked is the no-replace rename where the system has no flag for it, or the
// filesystem refuses the flag: a hard link, which never replaces, and then the old name's
// removal. Killed in between, both names hold the file. Where there are no hard links either
// (some FUSE and network filesystems, directories) it checks and renames, which a name taken
// between the two can still lose to.
func renameLinked(root *os.Root, oldname, newname string) error {
	err := root.Link(oldname, newname)
	switch {
	case err == nil:
		if err := root.Remove(oldname); err != nil {
			_ = root.Remove(newname)
			return err
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	if _, err := root.Lstat(oldname); err != nil {
		return err
	}
	if _, err := root.Lstat(newname); err == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	return rename(root, oldname, newname)
}
