//go:build windows

package durable

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

var (
	kernel32         = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

const (
	lockfileFailImmediately = 0x1
	lockfileExclusiveLock   = 0x2

	errorSharingViolation syscall.Errno = 32
	errorLockViolation    syscall.Errno = 33
	errorIOPending        syscall.Errno = 997
)

// The lock covers one byte far past the holder information, because Windows byte-range locks
// are mandatory: locking byte 0 would stop a waiter from reading who holds the lock.
const lockOffsetHigh = 0x7fffffff

func tryLock(f *os.File) error {
	ol := &syscall.Overlapped{OffsetHigh: lockOffsetHigh}
	r, _, err := procLockFileEx.Call(f.Fd(), lockfileExclusiveLock|lockfileFailImmediately, 0, 1, 0, uintptr(unsafe.Pointer(ol)))
	if r == 0 {
		return err
	}
	return nil
}

func isWouldBlock(err error) bool {
	return errors.Is(err, errorLockViolation) || errors.Is(err, errorIOPending)
}

func unlock(f *os.File) error {
	ol := &syscall.Overlapped{OffsetHigh: lockOffsetHigh}
	r, _, err := procUnlockFileEx.Call(f.Fd(), 0, 1, 0, uintptr(unsafe.Pointer(ol)))
	if r == 0 {
		return err
	}
	return nil
}
