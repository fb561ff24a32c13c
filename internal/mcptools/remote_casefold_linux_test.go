package mcptools_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestBackgroundSyncTellsCaseTwin: on a clone whose file system ignores case, a workflow id on
// the remote that differs only in case from another is left out of the server's syncs. The
// notice said it holds refs "Cairn did not write" and to "delete them there", which an agent
// could act on against the twin that syncs here; it says they are twins, which one syncs here,
// and advises no deletion.
func TestBackgroundSyncTellsCaseTwin(t *testing.T) {
	preload := gittest.CaseFold(t)
	bare := bareRepo(t)
	lineOn(t, bare, "Deploy-1")
	// deploy-1 as a Cairn that did not yet refuse twins would have pushed it beside Deploy-1.
	other := bareRepo(t)
	lineOn(t, other, "deploy-1")
	git(t, other, "push", "-q", "file://"+bare, "refs/cairn/wf/deploy-1")

	t.Setenv("LD_PRELOAD", preload)
	_, _, notice := idleServer(t, bare)
	want := "origin holds workflow ids that differ only in case, which this machine's file system cannot keep apart: deploy-1 (twin of Deploy-1, which syncs here). " +
		"They are left out of the syncs, and the other workflows sync as before; ask the user to run `cairn sync`, which names the one step that ends each: delete no ref before reading it."
	if !strings.Contains(notice, want) || strings.Contains(notice, "did not write") || strings.Contains(notice, "delete them") {
		t.Errorf("notice %q\nwant it to hold %q", notice, want)
	}
}
