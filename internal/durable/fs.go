package durable

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"
)

// File is the part of *os.File the store uses. Keeping it an interface lets a test wrap every
// write, sync and close with a fault.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
}

// FS is a directory tree that every store read and write goes through. Names are
// slash-separated and relative to the tree's top; they never escape it.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldname, newname string) error
	// RenameNoReplace is Rename that never replaces: when newname exists it fails with an
	// error matching fs.ErrExist and changes nothing.
	RenameNoReplace(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	Mkdir(name string, perm fs.FileMode) error
	Lstat(name string) (fs.FileInfo, error)
	// ReadDirNames lists the names in a directory, unsorted, without a stat per entry.
	ReadDirNames(name string) ([]string, error)
	// ReadDir lists a directory's entries, unsorted, each with its type as the directory
	// gives it (d_type): a stat per entry only where the file system keeps no type.
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes renames and creates inside the directory durable (a no-op on Windows).
	SyncDir(name string) error
	// Lock takes the cross-process lock named by the file name (a ".lock-*" file that is
	// never renamed or deleted), waiting at most wait.
	Lock(name string, wait time.Duration) (unlock func() error, err error)
}

// Dir is the real FS: an os.Root anchored at a directory, so no name, symlink or ".." can
// reach outside it.
type Dir struct {
	root *os.Root
	path string
}

// ErrSymlinkDir is returned by OpenDir for a directory that is itself a symlink: following it
// would put state wherever the link points.
var ErrSymlinkDir = errors.New("the state directory is a symlink; Cairn only uses a real directory so state cannot be redirected")

// OpenDir opens dir as an FS. It refuses a dir that is a symlink or not a directory, and
// checks after opening that the directory opened is the one it inspected.
func OpenDir(dir string) (*Dir, error) { return OpenDirSeen(dir, nil) }

// OpenDirSeen is OpenDir for a caller that has just looked at dir itself: seen is its Lstat
// (nil: look now), and the directory opened must be that one.
func OpenDirSeen(dir string, seen fs.FileInfo) (*Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fi := seen
	if fi == nil {
		if fi, err = os.Lstat(abs); err != nil {
			return nil, err
		}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: ErrSymlinkDir}
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: errors.New("not a directory")}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	got, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	if !os.SameFile(fi, got) {
		root.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: errors.New("the directory changed while it was being opened (replaced by a symlink?)")}
	}
	return &Dir{root: root, path: abs}, nil
}

// Close releases the directory handle.
func (d *Dir) Close() error { return d.root.Close() }

func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := d.root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d *Dir) Rename(oldname, newname string) error { return rename(d.root, oldname, newname) }
func (d *Dir) RenameNoReplace(oldname, newname string) error {
	return renameNoReplace(d.root, oldname, newname)
}
func (d *Dir) Remove(name string) error    { return d.root.Remove(name) }
func (d *Dir) RemoveAll(name string) error { return d.root.RemoveAll(name) }
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	return d.root.Mkdir(name, perm)
}
func (d *Dir) Lstat(name string) (fs.FileInfo, error) { return d.root.Lstat(name) }

func (d *Dir) ReadDirNames(name string) ([]string, error) {
	return readDir(d, name, func(f *os.File) ([]string, error) { return f.Readdirnames(-1) })
}

func (d *Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	return readDir(d, name, func(f *os.File) ([]fs.DirEntry, error) {
		return typedEntries(f, filepath.Join(d.path, filepath.FromSlash(name)))
	})
}

// readDir opens the directory name for list.
func readDir[T any](d *Dir, name string, list func(*os.File) ([]T, error)) ([]T, error) {
	// O_DIRECTORY|O_NONBLOCK: a FIFO in the directory's place fails at once, never blocks.
	f, err := d.root.OpenFile(name, os.O_RDONLY|dirFlag|readFlag|cloexec, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return list(f)
}

func (d *Dir) SyncDir(name string) error { return syncDirIn(d.root, name) }

func (d *Dir) Lock(name string, wait time.Duration) (func() error, error) {
	return lockIn(d, name, wait)
}

// MkdirAll creates dir and any missing parents with perm, like os.MkdirAll, and fsyncs each
// parent it created into so the new directories survive a power loss.
func MkdirAll(dir string, perm fs.FileMode) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return notADir(dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		// Made meanwhile by another process, or taken by what Stat did not see (a dangling
		// link), which is no directory.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return notADir(dir)
		}
		// The process that made it may not have synced its parent yet, or was killed before it
		// did: a power loss would take the directory, and what this caller writes in it, away.
	}
	return SyncDir(parent)
}

// notADir is MkdirAll's error for dir, there and no directory: ENOTDIR, or ENOENT for a link
// to nothing, which is said with its target (where the person looks).
func notADir(dir string) error {
	if what := LinkToNothing(dir); what != "" {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: &errnoError{what, syscall.ENOENT}}
	}
	return &fs.PathError{Op: "mkdir", Path: dir, Err: &errnoError{"exists and is not a directory", syscall.ENOTDIR}}
}

// LinkToNothing says what p is when it is a link whose target is not there ("a link to
// /x, which is not there"), else "".
func LinkToNothing(p string) string {
	if to, err := os.Readlink(p); err == nil {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return "a link to " + to + ", which is not there"
		}
	}
	return ""
}

// errnoError is an errno said in words of its own.
type errnoError struct {
	msg   string
	errno syscall.Errno
}

func (e *errnoError) Error() string { return e.msg }
func (e *errnoError) Unwrap() error { return e.errno }

// MkdirIn creates name inside fsys (0700 unless perm says otherwise) if it is missing, and
// syncs its parent. An existing directory is fine; anything else in its place is an error.
func MkdirIn(fsys FS, name string, perm fs.FileMode) error {
	fi, err := fsys.Lstat(name)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: name, Err: &NotRegularError{Mode: fi.Mode(), Dir: true}}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fsys.Mkdir(name, perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return fsys.SyncDir(path.Dir(name))
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}
