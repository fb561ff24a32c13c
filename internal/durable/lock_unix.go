//go:build !windows

package durable

import (
	"errors"
	"os"
	"syscall"
)

// flock locks belong to the open file description and die with the process, so kill -9 leaves
// no stale lock. (syscall rather than golang.org/x/sys/unix: same call, no module needed.)
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

func isWouldBlock(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
