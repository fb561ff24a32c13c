package durabletest

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WaitStopped waits until this process's child pid is stopped (or, stopped false, continued),
// as the kernel tells its parent, for as long as a loaded machine may take (a minute), and
// fails t if it never is. The child's state is left for its Wait (WNOWAIT).
func WaitStopped(t testing.TB, pid int, stopped bool) {
	t.Helper()
	opt := unix.WCONTINUED
	if stopped {
		opt = unix.WSTOPPED
	}
	told := make(chan error, 1)
	go func() {
		var info unix.Siginfo
		var err error = unix.EINTR
		for errors.Is(err, unix.EINTR) {
			err = unix.Waitid(unix.P_PID, pid, &info, opt|unix.WNOWAIT, nil)
		}
		told <- err
	}()
	select {
	case err := <-told:
		if errors.Is(err, unix.ECHILD) {
			// Once seen in CI beside other packages' tests, why not known: pid no child of
			// this process (reaped, or ended: waitid reports a zombie so without WEXITED).
			// /proc tells what became of it, and a stop it may still show.
			c, s, ok := ProcStat(pid)
			t.Logf("waitid for pid %d: %v; /proc has it: %t, %s in state %q", pid, err, ok, c, s)
			states := "T"
			if !stopped {
				states = "RSD"
			}
			WaitProcState(t, pid, "", states, nil)
		} else if err != nil {
			t.Fatalf("waiting for pid %d to be stopped (%t): %v", pid, stopped, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("pid %d not stopped (%t) after a minute", pid, stopped)
	}
}

// WaitGone waits until process pid has ended (a zombie counts as ended: it runs nothing and
// holds nothing open), for at most d, and tells whether it has; one that was gone already
// has. Any process will do, not only this one's children: the kernel tells its end through
// a pidfd.
func WaitGone(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errors.Is(err, unix.ESRCH)
	}
	defer unix.Close(fd)
	for end := time.Now().Add(d); ; {
		left := time.Until(end)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == nil && n > 0 {
			return true
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}
