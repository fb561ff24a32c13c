//go:build !unix

package e2e

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {}

func processAlive(pid int) bool { return true }
