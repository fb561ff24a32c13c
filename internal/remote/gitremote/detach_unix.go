//go:build unix

package gitremote

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own: without a controlling terminal, so that nothing
// git runs (ssh asking for a passphrase or a host key) can prompt on the user's terminal and
// wait for an answer; and as the leader of its own process group, which cancelling kills
// whole, so that the programs git started (ssh, a remote helper) end with it rather than
// keeping a stalled connection open after the command timed out.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
