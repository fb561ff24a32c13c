package memory

import (
	"errors"
	"io/fs"
	"syscall"
	"unsafe"
)

// exchange atomically swaps the directory entries a and b, both of which must exist: after
// it, b holds what a held and a holds what b held, with no moment where either is missing.
// It is renameat2(RENAME_EXCHANGE), called through syscall because the syscall package names
// renameat2 on only some architectures (sysRenameat2 fills the gap) and golang.org/x/sys is
// not worth a module for one call. A missing b is fs.ErrNotExist; a kernel or file system
// without the call is errors.ErrUnsupported.
func exchange(a, b string) error {
	nr := sysRenameat2 // a variable: the constant is -1 where exchange is not wired up
	if nr < 0 {
		return errors.ErrUnsupported
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	fdcwd := -100 // AT_FDCWD
	const renameExchange = 0x2
	for {
		_, _, e := syscall.Syscall6(uintptr(nr), uintptr(fdcwd), uintptr(unsafe.Pointer(pa)),
			uintptr(fdcwd), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		case syscall.ENOENT:
			return &fs.PathError{Op: "exchange", Path: b, Err: fs.ErrNotExist}
		case syscall.ENOSYS, syscall.EINVAL, syscall.EOPNOTSUPP, syscall.EXDEV:
			return errors.ErrUnsupported
		}
		return &fs.PathError{Op: "exchange", Path: b, Err: e}
	}
}
