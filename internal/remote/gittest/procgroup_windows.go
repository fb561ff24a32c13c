package gittest

import "os/exec"

// OwnGroup does nothing on Windows: there is no process group to kill.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills cmd alone on Windows.
func KillGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
