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

// RemoveIfSame removes name only when it is still the file seen (a caller's Lstat of it):
// name is first moved aside, and put back when what was moved is another file, one a writer
// that takes no lock put at name since the caller looked. removed is false then, and when name
// is gone already. A file put back finds name taken again stays aside, as a temp file
// (TempPrefix) that the directory's sweep of stale temp files removes; the newer one at name
// is kept.
func RemoveIfSame(fsys FS, name string, seen fs.FileInfo) (removed bool, err error) {
	aside := path.Join(path.Dir(name), TempName(path.Base(name)))
	if err := fsys.RenameNoReplace(name, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if fi, err := fsys.Lstat(aside); err != nil || !sameFile(fi, seen) {
		if err := fsys.RenameNoReplace(aside, name); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		return false, nil
	}
	return true, fsys.Remove(aside)
}
