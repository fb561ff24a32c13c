//go:build unix

package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdleSyncNamesForeignRefs: a ref under refs/cairn/wf/ that Cairn did not write is left out
// of an idle cairn sync, which says so and takes the remote's workflow all the same.
func TestIdleSyncNamesForeignRefs(t *testing.T) {
	base := bareRepo(t)
	url := "file://" + filepath.Join(base, "shared.git")
	team(t, url, 1, nil)
	work := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn"},
		{"push", "-q", url, "HEAD:refs/cairn/wf/wf-x"}} {
		if out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	b := newMachine(t, url)
	b.must("remote", "enable", "--yes")
	out := b.must("sync")
	if !strings.Contains(out, "origin holds refs Cairn did not write, left out of this sync (move them back or delete them there): wf-x\n") ||
		!strings.Contains(out, "wf-1: pulled 1 revision(s) from origin") {
		t.Fatalf("idle sync beside a foreign ref:\n%s", out)
	}
	if !strings.Contains(b.must("remote", "status"), "wf-1 at r1 here, r1 on the remote") {
		t.Fatalf("status beside a foreign ref: %s", b.must("remote", "status"))
	}
}
