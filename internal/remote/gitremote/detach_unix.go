//go:build unix

package gitremote

import (
	"os/exec"
	"sync/atomic"
	"syscall"
)

// signalGroup sends sig to the process group pgid (a test's hook).
var signalGroup = func(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// detach starts cmd in a session of its own: without a controlling terminal, so that nothing
// git runs (ssh asking for a passphrase or a host key) can prompt on the user's terminal and
// wait for an answer; and as the leader of its own process group, which cancelling ends
// whole, so that the programs git started (ssh, a remote helper) end with it rather than
// keeping a stalled connection open after the command timed out. Cancelling terminates rather
// than kills: git removes the ref lock files it holds on SIGTERM, and a fetch killed with
// SIGKILL left one that failed the next fetch. Whatever of a cancelled group is left once cmd
// has been waited for (at most cmd.WaitDelay after cancelling) is killed by waited, which the
// goroutine that runs cmd calls then, and never later: once the group is gone its id is free,
// and a process group started after it may have the same one.
func detach(cmd *exec.Cmd) (waited func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	unpin := terminateWithParent(cmd.SysProcAttr)
	var cancelled atomic.Bool
	cmd.Cancel = func() error {
		cancelled.Store(true)
		return signalGroup(cmd.Process.Pid, syscall.SIGTERM)
	}
	return func() {
		unpin()
		if cancelled.Load() {
			_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}
