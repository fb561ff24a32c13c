//go:build unix

package gittest

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in its own process group, so that KillGroup reaches its children (git
// daemon's per connection, a sync's git processes).
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup sends SIGKILL to cmd's process group.
func KillGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
