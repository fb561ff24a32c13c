//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// ownGroup puts the command in a process group of its own so a timeout can kill Claude Code
// with its hooks and MCP servers. On Linux the command also dies with this test binary
// (Pdeathsig), even when the binary is killed outright; start it with startGroup, so that a
// run stopped part-way (Ctrl-C, a CI job cancelled) kills its whole group too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// groups are the process groups started and not yet killed: a group leader has left the
// terminal's group, so an interrupt to the test run does not reach it.
var groups struct {
	sync.Mutex
	live map[int]bool
}

// startGroup starts cmd (set up by ownGroup) and notes its group, for killGroupsOnSignal.
func startGroup(cmd *exec.Cmd) error {
	groups.Lock()
	defer groups.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if groups.live == nil {
		groups.live = map[int]bool{}
	}
	groups.live[cmd.Process.Pid] = true
	return nil
}

// runGroup is cmd.Run through startGroup.
func runGroup(cmd *exec.Cmd) error {
	if err := startGroup(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// killGroup kills whatever is left of the group after the command exited (a hook or server
// that outlived Claude Code).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		groups.Lock()
		delete(groups.live, cmd.Process.Pid)
		groups.Unlock()
	}
}

// killGroupsOnSignal makes an interrupt or termination of the test binary kill every group
// still running (Claude Code, its hooks and MCP servers), and run cleanup, before the binary
// dies of it.
func killGroupsOnSignal(cleanup func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		groups.Lock() // held: no group starts after this
		for pid := range groups.live {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		fmt.Fprintf(os.Stderr, "e2e: %v: killed %d process groups still running\n", sig, len(groups.live))
		cleanup()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()
}

// processAlive reports whether pid is a live process (a zombie counts as gone).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc (macOS): kill(0) is all we know
	}
	// The state follows the parenthesised command name, which may itself hold ") ".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// killPID kills one process with SIGKILL, as a crash or the OOM killer would.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
