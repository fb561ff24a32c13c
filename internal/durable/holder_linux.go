package durable

import (
	"bytes"
	"os"
	"strconv"
)

// holderStopped reports whether the lock holder h is a process of this machine that is
// stopped (SIGSTOP, or Ctrl-Z on the shell it runs in), as /proc says: it holds the lock until
// resumed. A process at h's pid running another command is not h.
func holderStopped(h *Holder) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(h.PID) + "/stat")
	return err == nil && stoppedStat(b, h.Command)
}

// stoppedStat reports whether b, a /proc/PID/stat, is of a process running cmd and stopped by
// a signal (state T), which kill -CONT resumes. A tracing stop (t: a debugger's, or strace's at
// each system call of a running process) is no such stop: SIGCONT does not end it.
func stoppedStat(b []byte, cmd string) bool {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || len(b) < end+3 {
		return false
	}
	// The kernel keeps a command's first 15 bytes.
	if len(cmd) > 15 {
		cmd = cmd[:15]
	}
	return string(b[open+1:end]) == cmd && b[end+2] == 'T'
}
