package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestWatchRereadsAfterOverflow: when the kernel's inotify queue overflows while watch is not
// reading (stopped, or a slow terminal), the events after it are dropped, a move among them.
// Watch warned and waited for the next event, so the move was not shown until something else
// changed; it now reads the workflow again and shows it.
func TestWatchRereadsAfterOverflow(t *testing.T) {
	t.Parallel()
	limit := queueLimit(t)
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watch me", "--id", "apex-o")
	cmd, lines, stderr := watcher(t, dir, env, "--json")
	if l := decode(t, next(t, lines, "the current position")); l.Phase != "analyze" {
		t.Fatalf("first line %+v, want analyze", l)
	}
	overflow(t, cmd, dir, limit)
	run(t, dir, env, "transition", "plan")
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if l := decode(t, next(t, lines, "the move made while the queue was full")); l.Phase != "plan" || l.Revision != 2 {
		t.Fatalf("after the overflow: %+v, want plan at revision 2", l)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, "after the interrupt", stderr); code != 0 || !strings.Contains(stderr.String(), "event queue overflowed") {
		t.Errorf("exit %d, stderr %q: want 0 and the overflow said", code, stderr)
	}
}

// TestWatchListsCheckpointsAfterOverflow: a checkpoint saved while the kernel's queue
// overflowed was never listed (the warning said so); watch now looks at the checkpoints again
// and lists the one saved meanwhile, and not the one saved before it started.
func TestWatchListsCheckpointsAfterOverflow(t *testing.T) {
	t.Parallel()
	limit := queueLimit(t)
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watch me", "--id", "apex-c")
	run(t, dir, env, "checkpoint", "save", "before", `{"a":1}`)
	cmd, lines, stderr := watcher(t, dir, env, "--json")
	if l := decode(t, next(t, lines, "the current position")); l.Phase != "analyze" {
		t.Fatalf("first line %+v, want analyze", l)
	}
	overflow(t, cmd, dir, limit)
	run(t, dir, env, "checkpoint", "save", "meanwhile", `{"a":2}`)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if l := decode(t, next(t, lines, "the checkpoint saved while the queue was full")); !slices.Equal(l.Changes, []string{"checkpoint meanwhile saved"}) {
		t.Fatalf("after the overflow: %+v, want checkpoint meanwhile saved", l)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, "after the interrupt", stderr); code != 0 || strings.Contains(stderr.String(), "not listed") {
		t.Errorf("exit %d, stderr %q: want 0, and no word of saves not listed", code, stderr)
	}
}

// queueLimit is the kernel's inotify queue limit, when one small enough to fill is there.
func queueLimit(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to read: %v", err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || limit > 1<<17 {
		t.Skipf("inotify queue limit %q: too large to fill here", b)
	}
	return limit
}

// overflow stops the watch (cmd) and fills the kernel's queue of its events past limit; the
// caller continues it (SIGCONT).
func overflow(t *testing.T, cmd *exec.Cmd, dir string, limit int) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill returns before the process stops, and until it has, it may still read events:
	// waited for (a stop reaps nothing).
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
		t.Fatalf("watch not stopped: %v, status %v", err, ws)
	}
	// A write is an event, and two files written in turn are two (one file's are merged), so
	// the queue is full before the change; next to the state directory, so that none of them is
	// a change watch reads the workflow for.
	var files [2]*os.File
	for i := range files {
		var err error
		if files[i], err = os.Create(filepath.Join(dir, ".claude", "junk"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		defer files[i].Close()
	}
	for range limit/2 + 16 {
		for _, f := range files {
			if _, err := f.Write([]byte{'x'}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
