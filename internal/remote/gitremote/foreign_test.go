package gitremote_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestForeignCommitIsNotRead: a ref under refs/cairn/wf/ that points at a commit Cairn did not
// write is reported, with what to do, rather than read as records; Heads leaves it out and
// still lists the workflow beside it, and Watch sees that one move. A ref whose name is no
// workflow id is no line, and is passed over without a word.
func TestForeignCommitIsNotRead(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-x")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-y")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/nested/name") // not an id: not a line
	b := clone(t, "file://"+bare, gitremote.Refs)
	if _, err := b.Append(ctx, "wf-ok", 0, [][]byte{[]byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Since(ctx, "wf-x", 0); err == nil || !strings.Contains(err.Error(), "Cairn did not write") {
		t.Errorf("Since on a foreign ref = %v, want an error naming it", err)
	}
	h, err := b.Heads(ctx)
	ue, ok := errors.AsType[*remote.UnreadableError](err)
	if !ok || !slices.Equal(ue.IDs, []string{"wf-x", "wf-y"}) || !strings.Contains(err.Error(), "Cairn did not write") {
		t.Errorf("Heads beside foreign refs: error %v, want one naming wf-x and wf-y", err)
	}
	if !h.Equal(remote.Heads{"wf-ok": 1}) {
		t.Errorf("Heads beside foreign refs = %v, want wf-ok at 1", h)
	}
	other := clone(t, "file://"+bare, gitremote.Refs)
	if _, err := other.Append(ctx, "wf-ok", 1, [][]byte{[]byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if h, err := b.Watch(wctx, remote.Heads{"wf-ok": 1}); err != nil || h["wf-ok"] != 2 {
		t.Errorf("Watch beside foreign refs = %v, %v; want wf-ok at 2", h, err)
	}
}
