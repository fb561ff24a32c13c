//go:build !linux

package durabletest

import (
	"testing"
	"time"
)

// WaitStopped waits until process pid is stopped (or, stopped false, running again), as
// /proc says where there is one.
func WaitStopped(t testing.TB, pid int, stopped bool) {
	t.Helper()
	states := "T"
	if !stopped {
		states = "RSD"
	}
	WaitProcState(t, pid, "", states, nil)
}

// WaitGone waits until process pid has ended, for at most d, and tells whether it has.
func WaitGone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, state, ok := ProcStat(pid); !ok || state == "Z" || state == "X" {
			return true
		}
	}
	return false
}
