//go:build unix

package gitremote_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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

// TestCancelledFetchLeavesNoLockFile: a sync cancelled while its git fetch held a mirror ref's
// lock file (cairn-mcp stopping as the client exits, Ctrl-C on cairn sync, a timeout) killed
// git with SIGKILL, which leaves the lock file: the next sync, cairn sync in the terminal just
// after, failed on it. git is now terminated, which removes its lock files.
func TestCancelledFetchLeavesNoLockFile(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", "file://"+bareRepo(t))
	bin, gate := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(lockHolder), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, ".git", "refs", "cairn-mirror", "origin", "wf-a.lock")
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
	if err := <-done; err == nil {
		t.Fatal("a cancelled fetch succeeded")
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Fatalf("the cancelled fetch's git left %s", lock)
	}
}
