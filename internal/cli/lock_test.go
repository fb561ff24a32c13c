//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestLockHeld: while another process holds the workflow lock, a write gives up after the
// engine's bounded wait with exit 3, naming the lock and changing nothing; doctor names the
// busy lock with its holder and the pid to look at, not in the words of a command that waited
// ("gave up after 0s with nothing changed", before: doctor only tries it); reads still work.
func TestLockHeld(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "locked out", "--id", "apex-l")
	holdLock(t, filepath.Join(dir, ".claude", "cairn"), ".lock-workflow")

	code, stdout, stderr := exitOf(t, cairnCmd(t, dir, env, "transition", "plan"))
	if code != 3 || stdout != "" || !strings.Contains(stderr, ".lock-workflow is locked") || !strings.Contains(stderr, "nothing changed") {
		t.Fatalf("transition under a held lock: exit %d, stdout %q, stderr %q; want 3 and the lock named", code, stdout, stderr)
	}
	code, stdout, _ = exitOf(t, cairnCmd(t, dir, env, "doctor"))
	pid := fmt.Sprintf("pid %d", os.Getpid())
	if code != 1 || !strings.Contains(stdout, "FAIL  locks") || !strings.Contains(stdout, ".lock-workflow is held by "+pid) ||
		strings.Contains(stdout, "gave up") || !strings.Contains(stdout, "fix: a lock is held only while a Cairn process writes: if "+pid+" still holds it") {
		t.Fatalf("doctor under a held lock: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = exitOf(t, cairnCmd(t, dir, env, "show", "--json"))
	if code != 0 || !strings.Contains(stdout, `"state": "analyze"`) {
		t.Fatalf("show under a held lock: exit %d\n%s", code, stdout)
	}
}

// holdLock holds the lock file name in the state directory dir, as another process would,
// until the test ends.
func holdLock(t *testing.T, dir, name string) {
	t.Helper()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	unlock, err := d.Lock(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unlock() })
}

func exitOf(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// TestLockHeldFromAnotherMachine: the workflow lock held over a shared state directory by a
// process of another machine. Its pid names no process here (or another one), so doctor's
// step to end a stuck holder names the machine it runs on, and so does a write that gives up.
func TestLockHeldFromAnotherMachine(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "locked out", "--id", "apex-l")
	state := filepath.Join(dir, ".claude", "cairn")
	holdLock(t, state, ".lock-workflow")
	// What that machine's Cairn wrote into the lock file it holds.
	if err := os.WriteFile(filepath.Join(state, ".lock-workflow"), []byte(`{"pid":4242,"command":"cairn","since":"2026-11-30T01:00:00Z","host":"build-7.example"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := exitOf(t, cairnCmd(t, dir, env, "transition", "plan"))
	if code != 3 || !strings.Contains(stderr, "locked by pid 4242 (cairn) on build-7.example since") {
		t.Fatalf("transition under a held lock: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := exitOf(t, cairnCmd(t, dir, env, "doctor"))
	if code != 1 || !strings.Contains(stdout, ".lock-workflow is held by pid 4242 (cairn) on build-7.example") ||
		!strings.Contains(stdout, "if pid 4242 on build-7.example still holds it") {
		t.Fatalf("doctor under a lock held from another machine: exit %d\n%s", code, stdout)
	}
}

// TestLockHeldByAStoppedProcess: the workflow lock held by a process that is stopped (Ctrl-Z
// on the session it runs in, SIGSTOP) holds it until it is resumed: a write that gives up and
// doctor both say so, and the step is to resume it, which ends nothing.
func TestLockHeldByAStoppedProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("a stopped process is told through /proc")
	}
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "locked out", "--id", "apex-l")
	state := filepath.Join(dir, ".claude", "cairn")
	pid := durabletest.StoppedHolder(t, state, ".lock-workflow")
	resume := fmt.Sprintf("kill -CONT %d", pid)
	code, _, stderr := exitOf(t, cairnCmd(t, dir, env, "transition", "plan"))
	if code != 3 || !strings.Contains(stderr, fmt.Sprintf("locked by pid %d (sleep, stopped)", pid)) || !strings.Contains(stderr, resume) {
		t.Fatalf("transition under a held lock: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := exitOf(t, cairnCmd(t, dir, env, "doctor"))
	if code != 1 || !strings.Contains(stdout, fmt.Sprintf("is held by pid %d (sleep, stopped)", pid)) || !strings.Contains(stdout, resume) || strings.Contains(stdout, "end it") {
		t.Fatalf("doctor under a lock held by a stopped process: exit %d\n%s", code, stdout)
	}
}
