package durable

import (
	"bytes"
	"os"
	"strconv"
)

// holderStopped reports whether the lock holder h is a process of this machine that is
// stopped (SIGSTOP, or Ctrl-Z on the shell it runs in), as /proc says: it holds the lock until
// resumed. A traced process ('t': strace or gdb stops it at each syscall or breakpoint) is
// not: its tracer lets it go on, and kill -CONT would not. A process at h's pid running
// another command is not h.
func holderStopped(h *Holder) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(h.PID) + "/stat")
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if err != nil || open < 0 || end < open || len(b) < end+3 {
		return false
	}
	// The kernel keeps a command's first 15 bytes.
	comm, cmd := string(b[open+1:end]), h.Command
	if len(cmd) > 15 {
		cmd = cmd[:15]
	}
	return comm == cmd && b[end+2] == 'T'
}
