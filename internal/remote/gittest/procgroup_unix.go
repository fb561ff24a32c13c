//go:build unix

package gittest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group, so killGroup reaches the children git daemon
// forks per connection.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
