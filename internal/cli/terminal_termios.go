//go:build linux || darwin

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal: f is a terminal, as the terminal driver answers (its settings can be read), not
// just a character device such as /dev/null.
func terminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), termiosRead)
		tty = err == nil
	})
	return tty
}
