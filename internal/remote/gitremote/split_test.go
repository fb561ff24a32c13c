package gitremote_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestPushURLElsewhereIsSplit: a remote that pushes to another repository than it fetches from
// (remote.origin.pushurl naming a fork) takes Cairn's first push of a line, which no fetch ever
// reads back; every later push is refused by the lease ("stale info"), which read as the host
// refusing the ref ("run cairn doctor to check which refs it accepts", a step that finds
// nothing, and claims took it for a host that allows none, so tasks ran unclaimed). The error
// now matches gitremote.ErrSplit, says so, is no ErrRefused, and names git's command that
// shows where pushes go. The first push of a new line, which the lease cannot tell (the ref is
// absent on both sides), said it pushed (cairn sync: "pushed 1 revision to origin"); it is read
// back where the fetch reads and is ErrSplit too.
func TestPushURLElsewhereIsSplit(t *testing.T) {
	for _, layout := range []gitremote.Layout{gitremote.Refs, gitremote.ClaimRefs} {
		t.Run(string(layout), func(t *testing.T) {
			up, fork, dir := bareRepo(t), bareRepo(t), t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "remote", "add", "origin", "file://"+up)
			git(t, dir, "config", "remote.origin.pushurl", "file://"+fork)
			b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			for _, push := range []string{"first", "second"} {
				_, err = b.Append(bg(t), "wf-1", 0, remote.Slice([]byte(`{"r":1}`)))
				if !errors.Is(err, gitremote.ErrSplit) || errors.Is(err, gitremote.ErrRefused) || !strings.Contains(err.Error(), "git remote get-url --push origin") {
					t.Errorf("%s Append = %v; want ErrSplit, not ErrRefused, naming git remote get-url --push origin", push, err)
				}
				if recs, err := b.Since(bg(t), "wf-1", 0); err != nil || len(recs) != 0 {
					t.Fatalf("Since = %d records, %v; want none: the fetch reads origin's url", len(recs), err)
				}
			}
		})
	}
}

// TestProbeFindsPushURLElsewhere: Probe (cairn remote enable, cairn doctor) pushed its probe ref
// to where the remote pushes and deleted it there, and found all well on a remote that pushes to
// another repository than it fetches from, whose first sync then wrote where no machine reads.
// It now reads the probe ref back through the fetch side, and is ErrSplit when it is not
// there; neither repository keeps a probe ref.
func TestProbeFindsPushURLElsewhere(t *testing.T) {
	up, fork, dir := bareRepo(t), bareRepo(t), t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", "file://"+up)
	git(t, dir, "config", "remote.origin.pushurl", "file://"+fork)
	got, err := gitremote.Probe(bg(t), gitremote.Config{Dir: dir, Remote: "origin"})
	if !errors.Is(err, gitremote.ErrSplit) {
		t.Errorf("Probe = %q, %v; want ErrSplit", got, err)
	}
	for _, bare := range []string{up, fork} {
		if refs := git(t, bare, "for-each-ref"); refs != "" {
			t.Errorf("refs left in %s:\n%s", bare, refs)
		}
	}
	git(t, dir, "config", "--unset", "remote.origin.pushurl")
	if got, err := gitremote.Probe(bg(t), gitremote.Config{Dir: dir, Remote: "origin"}); err != nil || got != gitremote.Refs {
		t.Errorf("Probe with one repository = %q, %v; want %q", got, err, gitremote.Refs)
	}
}
