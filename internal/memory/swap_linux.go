package memory

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps the directory entries a and b, both of which must exist: after
// it, b holds what a held and a holds what b held, with no moment where either is missing.
// It is renameat2(RENAME_EXCHANGE). A missing b is fs.ErrNotExist; a kernel or file system
// without the call is errors.ErrUnsupported.
func exchange(a, b string) error {
	for {
		switch err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.ENOENT:
			return &fs.PathError{Op: "exchange", Path: b, Err: fs.ErrNotExist}
		case unix.ENOSYS, unix.EINVAL, unix.EOPNOTSUPP, unix.EXDEV:
			return errors.ErrUnsupported
		default:
			return &fs.PathError{Op: "exchange", Path: b, Err: err}
		}
	}
}
