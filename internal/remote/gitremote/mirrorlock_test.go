package gitremote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// lockedClone is a clone of a remote holding workflow wf-a, a Backend on it, and the path of
// the lock file of its mirror ref for wf-a, made with mtime at (zero: none made).
func lockedClone(t *testing.T, at time.Time) (dir string, b *gitremote.Backend, lock string) {
	t.Helper()
	url := "file://" + bareRepo(t)
	if _, err := clone(t, url, gitremote.Refs).Append(bg(t), "wf-a", 0, remote.Slice([]byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", url)
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	lock = filepath.Join(dir, ".git", "refs", "cairn-mirror", "origin", "wf-a.lock")
	if at.IsZero() {
		return dir, b, lock
	}
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lock, at, at); err != nil {
		t.Fatal(err)
	}
	return dir, b, lock
}

// TestSyncWaitsForAnotherCairnSync: cairn sync in a terminal while cairn-mcp's background sync
// of the same clone is fetching (its git holding the mirror ref's lock file) waited for that
// fetch to end rather than failing with git's "cannot lock ref ... File exists".
func TestSyncWaitsForAnotherCairnSync(t *testing.T) {
	dir, b, lock := lockedClone(t, time.Now())
	// The other Cairn process's sync: its lock, and its git's lock file on the mirror ref.
	d, err := durable.OpenDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(gitremote.MirrorLock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		h, err := b.Heads(bg(t))
		if err == nil && h["wf-a"] != 1 {
			t.Errorf("Heads = %v, want wf-a at r1", h)
		}
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(dir, ".git", gitremote.MirrorLock), done) {
		unlock()
		t.Fatalf("a sync beside another Cairn process's fetch did not wait for it: %v", <-done)
	}
	// The other fetch ends: its git's lock file is gone, then its Cairn's lock.
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a sync that waited for another Cairn process's fetch: %v", err)
	}
}

// TestSyncWaitsForAGitsRefLock: a git of the user's (or one whose Cairn was killed and that
// runs on) holding a mirror ref's lock file for a moment is waited for.
func TestSyncWaitsForAGitsRefLock(t *testing.T) {
	_, b, lock := lockedClone(t, time.Now())
	// A time, not an event: nothing shows that git is waiting; the wait is far longer.
	time.AfterFunc(time.Second, func() { os.Remove(lock) })
	if h, err := b.Heads(bg(t)); err != nil || h["wf-a"] != 1 {
		t.Fatalf("Heads while a git held a mirror ref's lock file for a second = %v, %v", h, err)
	}
}

// TestLeftLockFileIsCleared: a lock file left beside a mirror ref by a git that was killed (a
// sync cancelled as cairn-mcp stopped, or timed out) used to make every sync fail until someone
// deleted it, on the word of an error that told the agent to delete it. It outlasts git's wait
// with no Cairn process syncing: the sync clears it, as it guards only Cairn's copy of the
// remote's ref, and goes on.
func TestLeftLockFileIsCleared(t *testing.T) {
	gitremote.SetRefLockWait(t, 200*time.Millisecond)
	_, b, lock := lockedClone(t, time.Now().Add(-time.Minute))
	if h, err := b.Heads(bg(t)); err != nil || h["wf-a"] != 1 {
		t.Fatalf("Heads beside a lock file a killed git left = %v, %v", h, err)
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Fatalf("%s is still there", lock)
	}
}

// TestHeldLockFileIsNamedSafely: a lock file that may still be held (it is dated after the
// fetch started: another machine's clock, on a shared file system) is left alone, and the error
// names it without telling the agent to delete it.
func TestHeldLockFileIsNamedSafely(t *testing.T) {
	gitremote.SetRefLockWait(t, 100*time.Millisecond)
	_, b, lock := lockedClone(t, time.Now().Add(time.Hour))
	_, err := b.Heads(bg(t))
	if err == nil || !strings.Contains(err.Error(), lock) {
		t.Fatalf("Heads beside a held lock file = %v, want an error naming %s", err, lock)
	}
	if strings.Contains(err.Error(), "delete") || strings.Contains(err.Error(), "remove") {
		t.Fatalf("the error steers the agent to delete a lock file a git may hold: %v", err)
	}
	if _, serr := os.Lstat(lock); serr != nil {
		t.Fatalf("the held lock file was touched: %v", serr)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if h, err := b.Heads(bg(t)); err != nil || h["wf-a"] != 1 {
		t.Fatalf("Heads once the lock file is gone = %v, %v", h, err)
	}
}

// TestInterruptedWaitForTheMirrorIsSaid: a sync interrupted (Ctrl-C, cairn-mcp stopping) while
// it waited for another Cairn process's sync says so: it said the other synced "until the time
// ran out", as if the wait had timed out, when none had.
func TestInterruptedWaitForTheMirrorIsSaid(t *testing.T) {
	dir, b, _ := lockedClone(t, time.Time{})
	d, err := durable.OpenDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(gitremote.MirrorLock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(bg(t))
	gitremote.OnMirrorWait(t, cancel)
	_, err = b.Heads(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || strings.Contains(err.Error(), "time ran out") {
		t.Fatalf("Heads interrupted while it waited for another sync = %v; want it said interrupted", err)
	}
}
