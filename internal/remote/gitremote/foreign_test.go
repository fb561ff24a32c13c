package gitremote_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestForeignCommitIsNotRead: a ref under refs/cairn/wf/ that points at a commit Cairn did not
// write is reported, with what to do, rather than read as records.
func TestForeignCommitIsNotRead(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-x")
	b := clone(t, "file://"+bare, gitremote.Refs)
	for name, err := range map[string]error{
		"heads": func() error { _, err := b.Heads(ctx); return err }(),
		"since": func() error { _, err := b.Since(ctx, "wf-x", 0); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), "Cairn did not write") {
			t.Errorf("%s on a foreign ref = %v, want an error naming it", name, err)
		}
	}
}
