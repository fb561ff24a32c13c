package mcptools_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBrokenClaimsLineDoesNotStopBackgroundSync: a claims ref on the remote that cannot be
// read stops no background sync of a clone with no claim made offline: the workflow is still
// pushed, and the claims error is said once as a notice.
func TestBrokenClaimsLineDoesNotStopBackgroundSync(t *testing.T) {
	bare := bareRepo(t)
	_, c := machineA(t, bare, "claims")
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`) // each sync reads the claims line

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

	mustOK(t, c, "update_task", `{"id":"t2","status":"pending"}`)
	b := machineB(t, bare)
	waitFor(t, func() bool {
		if _, err := b.trySync(t); err != nil {
			return false
		}
		w, err := b.st.ReadWorkflow()
		return err == nil && strings.Contains(string(w.Data), `"id":"t2"`)
	})
	if n := nextNotice(t, c); !strings.Contains(n, "task claims could not be synced") {
		t.Fatalf("notice %q", n)
	}
}
