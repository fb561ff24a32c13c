//go:build !windows

package engine

import "golang.org/x/sys/unix"

// processAlive reports whether a process with this pid exists (EPERM: it does, as another user).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
