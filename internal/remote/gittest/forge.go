package gittest

import (
	"os/exec"
	"strings"
	"testing"
)

// ForgeClaims pushes to the repository at url, as anyone with push access could, a claims ref
// for workflow id (refs/cairn/claims/ID) whose commit Cairn did not write: a subject in
// Cairn's form over a record that is not a claim.
func ForgeClaims(t testing.TB, url, id string) {
	t.Helper()
	work := t.TempDir()
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = work, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q")
	blob := git("not a claim", "hash-object", "-w", "--stdin")
	tree := git("100644 blob "+blob+"\trecord\n", "mktree")
	commit := git("cairn claims "+id+" r99999\n", "-c", "user.name=x", "-c", "user.email=x@example.com", "commit-tree", tree)
	git("", "push", "-q", "-f", url, commit+":refs/cairn/claims/"+id)
}
