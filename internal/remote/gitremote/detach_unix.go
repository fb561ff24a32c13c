//go:build unix

package gitremote

import (
	"os/exec"
	"syscall"
	"time"
)

// detach starts cmd in a session of its own: without a controlling terminal, so that nothing
// git runs (ssh asking for a passphrase or a host key) can prompt on the user's terminal and
// wait for an answer; and as the leader of its own process group, which cancelling ends
// whole, so that the programs git started (ssh, a remote helper) end with it rather than
// keeping a stalled connection open after the command timed out. Cancelling terminates rather
// than kills: git removes the ref lock files it holds on SIGTERM, and a fetch killed with
// SIGKILL left one that failed the next fetch. Whatever of the group is left after
// cmd.WaitDelay is killed.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		time.AfterFunc(cmd.WaitDelay, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return syscall.Kill(-pgid, syscall.SIGTERM)
	}
}
