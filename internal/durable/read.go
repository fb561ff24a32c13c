package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

var (
	// ErrNotRegular: a symlink, FIFO, device or directory sits where a state file belongs.
	ErrNotRegular = errors.New("not a regular file (a symlink, FIFO, device or directory is in its place; it was left untouched)")
	// ErrHardLinked: the file has more than one name, so writing it would change another file.
	ErrHardLinked = errors.New("has more than one hard link, so it may be another file in disguise; it was left untouched")
	// ErrTooLarge: the file is over the caller's size cap.
	ErrTooLarge = errors.New("too large")
	// ErrRaced: the file kept changing identity between inspection and open.
	ErrRaced = errors.New("kept being replaced while it was opened; try again")
)

// NotRegularError is ErrNotRegular (errors.Is matches it) for a file whose kind is known: its
// text is ErrNotRegular's, and Kind says what is in the file's place. With Dir set, a directory
// belongs in that place (MkdirIn), and the text says so.
type NotRegularError struct {
	Mode fs.FileMode
	Dir  bool
}

func (e *NotRegularError) Error() string {
	if e.Dir {
		return "not a directory (" + e.Kind() + " is in its place; it was left untouched)"
	}
	return ErrNotRegular.Error()
}
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names what is in the file's place: "a directory", "a symlink", "a FIFO", ...
func (e *NotRegularError) Kind() string {
	switch t := e.Mode.Type(); {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symlink"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t == 0:
		return "a file"
	}
	return "something other than a regular file"
}

// LinkCount is fi's hard link count; false where the system does not say. A directory that
// was removed, though still open, has none.
func LinkCount(fi fs.FileInfo) (uint64, bool) { return linkCount(fi) }

// checkFile refuses anything but a regular file with a single link.
func checkFile(op, name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return pathErr(op, name, &NotRegularError{Mode: fi.Mode()})
	}
	if n, ok := linkCount(fi); ok && n > 1 {
		return pathErr(op, name, ErrHardLinked)
	}
	return nil
}

// CheckFile says, without opening it, whether name in fsys is what ReadFile and the writes
// would refuse: a symlink, FIFO, device, directory or hard-linked file in a file's place. A
// missing file is an error satisfying errors.Is(err, fs.ErrNotExist).
func CheckFile(fsys FS, name string) error {
	fi, err := fsys.Lstat(name)
	if err != nil {
		return err
	}
	return checkFile("read", name, fi)
}

// ReadFile reads name from fsys, at most max bytes. It refuses a symlink, FIFO, device or
// hard-linked file (a FIFO is opened O_NONBLOCK so it cannot hang the reader), and checks that
// the file opened is the file inspected, retrying when a concurrent rename swaps it in between.
// A missing file is an error satisfying errors.Is(err, fs.ErrNotExist).
func ReadFile(fsys FS, name string, max int64) ([]byte, error) {
	f, st, err := openRead(fsys, name, "read")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSized(f, name, st.Size(), max)
}

// readSized reads f to its end, refusing more than max bytes. size is its size when opened:
// a file that did not grow since is read in one call into one buffer.
func readSized(f io.Reader, name string, size, max int64) ([]byte, error) {
	if size > max {
		return nil, pathErr("read", name, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, size, max))
	}
	buf := make([]byte, 0, size+1)
	for {
		if int64(len(buf)) > max {
			return nil, pathErr("read", name, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max))
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// OpenChecked opens an existing or new file for appending under a lock the caller holds, and
// refuses anything but a regular, singly linked file reached without a symlink.
func openChecked(fsys FS, name string, flag int, perm fs.FileMode) (File, fs.FileInfo, error) {
	if fi, err := fsys.Lstat(name); err == nil {
		if err := checkFile("open", name, fi); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	f, err := fsys.OpenFile(name, flag|noFollow, perm)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := checkFile("open", name, st); err != nil {
		f.Close()
		return nil, nil, err
	}
	// The name must still lead to this very file, not through a symlink planted meanwhile.
	fi, err := fsys.Lstat(name)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !sameFile(fi, st) {
		f.Close()
		return nil, nil, pathErr("open", name, ErrRaced)
	}
	return f, st, nil
}

// OpenRead opens name for reading with ReadFile's checks (regular file, one link, reached
// without a symlink, not swapped between inspection and open). The caller closes the file.
func OpenRead(fsys FS, name string) (File, fs.FileInfo, error) { return openRead(fsys, name, "open") }

// openRead is OpenRead, its errors naming op.
func openRead(fsys FS, name, op string) (File, fs.FileInfo, error) {
	for attempt := 0; ; attempt++ {
		fi, err := fsys.Lstat(name)
		if err != nil {
			return nil, nil, err
		}
		if err := checkFile(op, name, fi); err != nil {
			return nil, nil, err
		}
		f, err := fsys.OpenFile(name, os.O_RDONLY|readFlag|noFollow, 0)
		if err != nil {
			// Removed or being renamed between lstat and open: look again.
			if errors.Is(err, fs.ErrNotExist) && attempt < 8 {
				continue
			}
			return nil, nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if sameFile(fi, st) {
			if err := checkFile(op, name, st); err != nil {
				f.Close()
				return nil, nil, err
			}
			return f, st, nil
		}
		f.Close()
		if attempt >= 8 {
			return nil, nil, pathErr(op, name, ErrRaced)
		}
	}
}

// SameDir reports whether paths a and b name one directory (or file), however each is spelled:
// through a symlink, a bind mount.
func SameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// sameFile is os.SameFile, extended to FileInfos from other FS implementations (a test's
// in-memory file system) that say who they are through an ID method.
func sameFile(a, b fs.FileInfo) bool {
	type identified interface{ ID() uint64 }
	if x, ok := a.(identified); ok {
		y, ok := b.(identified)
		return ok && x.ID() == y.ID()
	}
	return os.SameFile(a, b)
}
