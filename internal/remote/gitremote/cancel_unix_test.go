//go:build unix

package gitremote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// lockHolder is a git on PATH whose fetch holds a ref's lock file until it is stopped, and
// removes it when terminated, as git does for its lock files on SIGTERM (not on SIGKILL).
const lockHolder = `#!/bin/sh
for a in "$@"; do
  if [ "$a" = fetch ]; then
    : > "$CAIRN_TEST_LOCK"
    trap 'rm -f "$CAIRN_TEST_LOCK"; exit 143' TERM
    : > "$CAIRN_TEST_READY"
    while :; do sleep 0.05; done
  fi
done
exec "$CAIRN_REAL_GIT" "$@"
`

// cancelFetch runs Heads through a git whose fetch holds a mirror ref's lock file
// (lockHolder), cancels it once git runs, and returns the lock file and the Heads' error.
func cancelFetch(t *testing.T) (lock string, err error) {
	t.Helper()
	realGit, lerr := exec.LookPath("git")
	if lerr != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", "file://"+bareRepo(t))
	bin, gate := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(lockHolder), 0o755); err != nil {
		t.Fatal(err)
	}
	lock = filepath.Join(dir, ".git", "refs", "cairn-mirror", "origin", "wf-a.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_REAL_GIT", realGit)
	t.Setenv("CAIRN_TEST_LOCK", lock)
	t.Setenv("CAIRN_TEST_READY", filepath.Join(gate, "ready"))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Heads(ctx)
		done <- err
	}()
	waitFile(t, filepath.Join(gate, "ready"))
	cancel()
	return lock, <-done
}

// TestCancelledFetchLeavesNoLockFile: a sync cancelled while its git fetch held a mirror ref's
// lock file (cairn-mcp stopping as the client exits, Ctrl-C on cairn sync, a timeout) killed
// git with SIGKILL, which leaves the lock file: the next sync, cairn sync in the terminal just
// after, failed on it. git is now terminated, which removes its lock files.
func TestCancelledFetchLeavesNoLockFile(t *testing.T) {
	lock, err := cancelFetch(t)
	if err == nil {
		t.Fatal("a cancelled fetch succeeded")
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Fatalf("the cancelled fetch's git left %s", lock)
	}
}

// TestCancelledGitGroupIsLeftAloneOnceGone: a cancelled git that ended on SIGTERM at once, as
// git does, had its process group sent SIGKILL 2 s (WaitDelay) later all the same: by then
// the group is gone and its id free, and a process group started since (a shell's job, any
// daemon) can have it, and was killed. Nothing is sent to the group once its git was waited for.
func TestCancelledGitGroupIsLeftAloneOnceGone(t *testing.T) {
	var (
		mu       sync.Mutex
		returned bool
		late     []syscall.Signal
	)
	gitremote.OnSignalGroup(t, func(_ int, sig syscall.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			late = append(late, sig)
		}
	})
	if _, err := cancelFetch(t); err == nil {
		t.Fatal("a cancelled fetch succeeded")
	}
	mu.Lock()
	returned = true
	mu.Unlock()
	time.Sleep(3 * time.Second) // past the command's WaitDelay
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		t.Fatalf("the cancelled git's process group was sent %v after the git was waited for", late)
	}
}
