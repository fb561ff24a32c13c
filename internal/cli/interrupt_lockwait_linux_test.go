package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// TestInterruptDuringLockWaitChangesNothing: Ctrl-C (or SIGTERM) on a command waiting for the
// workflow lock stops it there, nothing changed, as it does cairn transition. cairn task, with
// sharing off, caught the signal for a git it never runs: once the lock was free it set the
// task, printed so, and only then ended by the signal.
func TestInterruptDuringLockWaitChangesNothing(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "interrupted", "--id", "apex-i")
	state := filepath.Join(dir, ".claude", "cairn")
	for _, args := range [][]string{{"transition", "plan"}, {"task", "t1", "running"}} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			cmd, out, unlock := waitingForTheLock(t, state, dir, env, args...)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			unlock()
			cmd.Wait()
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig || out.Len() > 0 {
				t.Errorf("cairn %s sent %v waiting for the lock: ended %v, printed %q; want ended by the signal, nothing printed", strings.Join(args, " "), sig, cmd.ProcessState, out.String())
			}
		}
	}
	if out, err := cairnCmd(t, dir, env, "show", "--json").Output(); err != nil || strings.Contains(string(out), "t1") || !strings.Contains(string(out), `"state": "analyze"`) {
		t.Errorf("interrupted commands changed the workflow (%v): t1 is on record, or it left analyze", err)
	}
}

// waitingForTheLock holds the workflow lock of state and starts cairn args in dir, returned once
// it waits for that lock (it has the lock file open), with its stdout and the lock's release.
func waitingForTheLock(t *testing.T, state, dir string, env []string, args ...string) (*exec.Cmd, *strings.Builder, func()) {
	t.Helper()
	d, err := durable.OpenDir(state)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.Lock(".lock-workflow", 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := cairnCmd(t, dir, env, args...)
	out := new(strings.Builder)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); !hasOpen(cmd.Process.Pid, ".lock-workflow"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatalf("cairn %s never waited for the lock", strings.Join(args, " "))
		}
	}
	return cmd, out, func() { unlock(); d.Close() }
}

// hasOpen says whether process pid has a file named name open.
func hasOpen(pid int, name string) bool {
	fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && filepath.Base(target) == name {
			return true
		}
	}
	return false
}
