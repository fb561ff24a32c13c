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

// writing reports whether a process has the file at p open for writing: the kernel refuses
// a read lease on it exactly then (fcntl F_SETLEASE; the lease goes with the descriptor).
// sure is false where it cannot tell: leases switched off, a file of another user, a file
// system without leases. Tests replace it.
var writing = func(p string) (busy, sure bool) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	return err == unix.EAGAIN, err == nil || err == unix.EAGAIN
}
