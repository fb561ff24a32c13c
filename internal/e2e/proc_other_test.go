//go:build !unix

package e2e

import (
	"os"
	"os/exec"
)

func ownGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {}

func startGroup(cmd *exec.Cmd) error { return cmd.Start() }

func runGroup(cmd *exec.Cmd) error { return cmd.Run() }

func killGroupsOnSignal(func()) {}

func processAlive(pid int) bool { return true }

func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
