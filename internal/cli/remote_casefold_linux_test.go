package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestIdleSyncNamesCaseTwin: on a clone whose file system ignores case, of two workflow ids on the
// remote that differ only in case one is synced and the other left out. cairn sync said of the
// one left out that it holds refs "Cairn did not write", to "delete them there", which read
// against the twin synced here deletes a workflow someone works on. It says the ids are twins,
// which one is synced here, and the step: deleting the other's ref, on the machine whose files
// hold its work, leaving the synced one's alone.
func TestIdleSyncNamesCaseTwin(t *testing.T) {
	t.Parallel()
	preload := "LD_PRELOAD=" + gittest.CaseFold(t)
	base := bareRepo(t)
	url := "file://" + filepath.Join(base, "shared.git")
	a := newMachine(t, url)
	a.must("remote", "enable", "--yes")
	a.must("start", "apex", "upper", "--id", "Deploy-1")
	a.must("sync")
	// deploy-1 as a Cairn that did not yet refuse twins would have pushed it beside Deploy-1.
	other := bareRepo(t)
	b := newMachine(t, "file://"+filepath.Join(other, "shared.git"))
	b.must("remote", "enable", "--yes")
	b.must("start", "apex", "lower", "--id", "deploy-1")
	b.must("sync")
	if out, err := exec.Command("git", "--git-dir="+filepath.Join(other, "shared.git"), "push", "-q", url, "refs/cairn/wf/deploy-1").CombinedOutput(); err != nil {
		t.Fatalf("git push: %v\n%s", err, out)
	}

	mac := newMachine(t, url, preload)
	mac.must("remote", "enable", "--yes")
	out := mac.must("sync")
	want := "origin: deploy-1 was left out of this sync: its id differs only in case from Deploy-1, which is synced here, and this machine's file system holds the two refs as one file; " +
		"nothing is lost and nothing needs doing: deploy-1's line stays on the remote and a clone whose file system tells case apart syncs both; " +
		"once deploy-1 has ended, the machine whose files hold its work (only there) may quiet this with git push origin :refs/cairn/wf/deploy-1, leaving refs/cairn/wf/Deploy-1 alone\n"
	if !strings.Contains(out, want) || strings.Contains(out, "did not write") || !strings.Contains(out, "Deploy-1: pulled 1 revision from origin") {
		t.Fatalf("idle sync beside a case twin:\n%s\nwant the line\n%s", out, want)
	}
}
