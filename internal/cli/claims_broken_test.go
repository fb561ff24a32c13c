//go:build unix

package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokenClaimsLineDoesNotStopTheSync: a claims ref on the remote that cannot be read (a
// forged or corrupted commit) stops no workflow sync of a clone with no claim made offline:
// the workflow is pushed and the claims error said as a warning.
func TestBrokenClaimsLineDoesNotStopTheSync(t *testing.T) {
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	a.must("task", "t1", "running") // a task running here: each sync reads the claims line

	// Anyone with push access to the host replaces the claims ref with a commit cairn did not
	// write.
	work := t.TempDir()
	gitRun := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = work, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	gitRun("", "init", "-q")
	blob := gitRun("not a claim", "hash-object", "-w", "--stdin")
	tree := gitRun("100644 blob "+blob+"\trecord\n", "mktree")
	commit := gitRun("cairn claims wf-1 r99999\n", "-c", "user.name=x", "-c", "user.email=x@example.com", "commit-tree", tree)
	gitRun("", "push", "-q", "-f", "file://"+bare, commit+":refs/cairn/claims/wf-1")

	a.must("task", "t2", "pending")
	code, out, errb := a.cairn("sync")
	if code != 0 || !strings.Contains(out, "wf-1: pushed") || !strings.Contains(errb, "warning: the task claims could not be synced") {
		t.Fatalf("sync with a broken claims line: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
}
