package gitremote_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// Workflow ids that differ only in case are two refs on the remote, but one file on a
// case-insensitive file system (macOS, Windows): a clone there could not fetch both into its
// mirror, and would stop syncing every workflow. A new line whose id differs only in case from
// one the remote has is refused, whichever clone made the first, and nothing is pushed.
func TestAppendRefusesAnIDThatDiffersOnlyInCase(t *testing.T) {
	for _, layout := range []gitremote.Layout{gitremote.Refs, gitremote.Branches, gitremote.ClaimRefs} {
		t.Run(strings.Trim(string(layout), "/"), func(t *testing.T) {
			url := "file://" + bareRepo(t)
			a, b := clone(t, url, layout), clone(t, url, layout)
			ctx := bg(t)
			rec := remote.Slice([]byte(`{"revision":1}`))
			if _, err := a.Append(ctx, "Deploy-1", 0, rec); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				b    *gitremote.Backend
				id   string
			}{{"other clone", b, "deploy-1"}, {"same clone", a, "DEPLOY-1"}} {
				_, err := c.b.Append(ctx, c.id, 0, rec)
				if err == nil || !strings.Contains(err.Error(), "Deploy-1") || !strings.Contains(err.Error(), "only in case") {
					t.Errorf("%s: Append(%s) beside Deploy-1 = %v, want it refused, naming Deploy-1", c.name, c.id, err)
				}
			}
			if refs := git(t, t.TempDir(), "ls-remote", url); strings.Count(refs, "\n")+1 != 1 || !strings.HasSuffix(refs, "/Deploy-1") {
				t.Errorf("the remote's refs = %q, want only Deploy-1's", refs)
			}
			if _, err := a.Append(ctx, "Deploy-1", 1, rec); err != nil {
				t.Errorf("appending to Deploy-1 itself: %v", err)
			}
		})
	}
}
