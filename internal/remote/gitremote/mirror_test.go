package gitremote_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// waitFile waits for path to exist, failing the test after a while.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear within 30s", path)
}

// TestMirrorIsNotMovedBack: two processes of one clone append to one line; the first one's
// push lands, then stalls (in the host's post-receive hook) while the second reads it, appends
// the next record and moves the mirror ref on. The first one, resuming, must not move the
// mirror ref back to its own record: the mirror would then say the remote is behind what it
// is, until the next fetch.
func TestMirrorIsNotMovedBack(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	gate := t.TempDir()
	hook := "#!/bin/sh\nif [ -e '" + gate + "/block' ]; then\n  rm -f '" + gate + "/block'\n  : > '" + gate +
		"/arrived'\n  while [ ! -e '" + gate + "/go' ]; do sleep 0.02; done\nfi\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "post-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", "file://"+bare)
	open := func() *gitremote.Backend {
		b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first, second := open(), open()
	if err := os.WriteFile(filepath.Join(gate, "block"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := first.Append(ctx, "wf-1", 0, remote.Slice([]byte("one")))
		done <- err
	}()
	waitFile(t, filepath.Join(gate, "arrived"))
	if _, err := second.Append(ctx, "wf-1", 1, remote.Slice([]byte("two"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h, err := first.Mirrored(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h["wf-1"] != 2 {
		t.Fatalf("the mirror says r%d after r2 landed: a stale update moved it back", h["wf-1"])
	}
}
