package gitremote_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestStoppedSyncIsNotWaitedFor: a cairn sync stopped with Ctrl-Z while its git fetched holds
// Cairn's mirror lock until it is resumed. Every other sync of the clone (cairn-mcp's, and the
// claims of each update_task) waited for it for all of its time and then failed; it now fails
// at once, saying how to resume it.
func TestStoppedSyncIsNotWaitedFor(t *testing.T) {
	const timeout = 10 * time.Second
	dir, _, _ := lockedClone(t, time.Time{})
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	stopped := durabletest.StoppedHolder(t, filepath.Join(dir, ".git"), gitremote.MirrorLock)
	start := time.Now()
	_, err = b.Heads(bg(t))
	if err == nil || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(stopped)) {
		t.Fatalf("Heads while a stopped process holds the mirror lock = %v, want the step that resumes it", err)
	}
	if waited := time.Since(start); waited > timeout/2 {
		t.Fatalf("Heads waited %s for a stopped process", waited)
	}
}

// TestSyncStoppedWhileWaitedFor: a sync waiting for the mirror lock held by a cairn sync that
// was then stopped with Ctrl-Z waited for it for all its time (2 minutes by default, a tool
// call's claims held up as long) before saying to resume it; it now says so within a second.
func TestSyncStoppedWhileWaitedFor(t *testing.T) {
	const timeout = 10 * time.Second
	dir, _, _ := lockedClone(t, time.Time{})
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	holder := durabletest.HeldBySleeper(t, filepath.Join(dir, ".git"), gitremote.MirrorLock)
	// The holder is stopped once the sync waits for it.
	gitremote.OnMirrorWait(t, func() {
		if err := holder.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
		}
		durabletest.WaitStopped(t, holder.Pid, true)
	})
	start := time.Now()
	_, err = b.Heads(bg(t))
	if err == nil || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(holder.Pid)) {
		t.Fatalf("Heads while the mirror lock's holder was stopped = %v, want the step that resumes it", err)
	}
	if waited := time.Since(start); waited > timeout/2 {
		t.Fatalf("Heads waited %s for a holder that was stopped", waited)
	}
}

// TestMirrorLockInTheWay: a directory, symlink or FIFO in place of the mirror lock's file
// failed every sync with "another Cairn process of this clone is syncing with its remote",
// which no waiting ends, and named the file without its directory. The error names the file
// where it is, says nothing of another process, and the thing in its place is left alone.
func TestMirrorLockInTheWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(string) error
	}{
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"symlink", func(p string) error { return os.Symlink(os.DevNull, p) }},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, b, _ := lockedClone(t, time.Time{})
			p := filepath.Join(dir, ".git", gitremote.MirrorLock)
			if err := tc.make(p); err != nil {
				t.Skip(err)
			}
			_, err := b.Heads(bg(t))
			if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "another Cairn process") {
				t.Fatalf("Heads with a %s in place of the mirror lock = %v, want an error naming %s and no other process", tc.name, err, p)
			}
			if _, err := os.Lstat(p); err != nil {
				t.Fatalf("the %s in the lock's place was touched: %v", tc.name, err)
			}
		})
	}
}
