//go:build unix

package durabletest

import (
	"syscall"
	"testing"
)

// StoppedHolder is HeldBySleeper with its process stopped (SIGSTOP, as Ctrl-Z stops a
// process) once it runs sleep: a lock's holder that a waiter finds stopped. It returns the
// holder's pid.
func StoppedHolder(t testing.TB, dir, name string) int {
	t.Helper()
	p := HeldBySleeper(t, dir, name)
	WaitProcState(t, p.Pid, "sleep", "S", nil)
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	WaitStopped(t, p.Pid, true)
	return p.Pid
}
