package gitremote_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestShellGitEnvironmentIsIgnored: variables that point git at another repository (set by a
// git hook that runs cairn, or left exported in the user's shell) must not redirect the
// backend: its repository is Config.Dir, and its refs go where every other machine reads them.
func TestShellGitEnvironmentIsIgnored(t *testing.T) {
	ctx := bg(t)
	for _, tc := range []struct{ name, value string }{
		{"GIT_DIR", ""}, // another repository, filled in below
		{"GIT_NAMESPACE", "elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := bareRepo(t)
			other := t.TempDir()
			git(t, other, "init", "-q")
			b := clone(t, "file://"+bare, gitremote.Refs)
			value := tc.value
			if value == "" {
				value = other + "/.git"
			}
			t.Setenv(tc.name, value)
			if _, err := b.Append(ctx, "wf-env", 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
				t.Fatalf("Append with %s=%s in the environment: %v", tc.name, value, err)
			}
			recs, err := b.Since(ctx, "wf-env", 0)
			if err != nil || len(recs) != 1 {
				t.Fatalf("Since = %d records, %v; want the one appended", len(recs), err)
			}
			// --git-dir outranks the environment, so these read the repositories themselves.
			if got := git(t, bare, "--git-dir="+bare, "for-each-ref", "--format=%(refname)"); got != "refs/cairn/wf/wf-env" {
				t.Errorf("the remote holds %q, want refs/cairn/wf/wf-env", got)
			}
			if got := git(t, other, "--git-dir="+other+"/.git", "for-each-ref"); got != "" {
				t.Errorf("the repository %s names was written:\n%s", tc.name, got)
			}
		})
	}
}
