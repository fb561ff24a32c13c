//go:build unix

package store

import "syscall"

const canCheckPIDs = true

// processGone reports whether no process has this pid. Only ESRCH says so: EPERM is a process
// of another user, and any other error is no proof.
func processGone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }
