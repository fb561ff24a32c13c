package remotesync_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestDeletedLineIsToldWhenPushedAgain: someone deleted the active workflow's ref on the remote
// (git push origin :refs/cairn/wf/wf-1). The next sync pushes the line again whole, by design
// (every machine keeps its own copy), and said nothing of it: the person who deleted it saw it
// come back unexplained, and this machine's user never learned that others lost it meanwhile.
// The sync now says so in one notice; a line pushed for the first time says nothing.
func TestDeletedLineIsToldWhenPushedAgain(t *testing.T) {
	t.Parallel()
	bare := bareRepo(t)
	a := newMachine(t, 0)
	a.addOrigin("file://" + bare)
	r := gitBackend(t, gitremote.Config{Dir: a.dir, Remote: "origin"})
	a.start("wf-1", "deleted on the remote")
	if out := a.sync(r, ""); len(out.Notices) != 0 {
		t.Fatalf("first push = %+v, want no notice", out)
	}
	a.move("plan")
	a.sync(r, "")
	if out, err := exec.Command("git", "--git-dir="+bare, "update-ref", "-d", "refs/cairn/wf/wf-1").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out := a.sync(r, "")
	if out.Pushed != 2 || len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "wf-1 was gone from origin") || !strings.Contains(out.Notices[0], "pushed again") {
		t.Fatalf("sync after the remote's line was deleted = %+v, want it pushed again whole and one notice saying so", out)
	}
	if out := a.sync(r, ""); len(out.Notices) != 0 || out.Pushed != 0 {
		t.Fatalf("the sync after = %+v, want nothing pushed and no notice", out)
	}
}

// TestSetBackLineIsToldWhenPushedAgain: someone set the active workflow's ref on the remote back
// to an earlier revision (a force-push). The next sync pushed the revisions after it again, as
// it pushes a deleted line again, but said nothing: the person who set it back saw them return
// unexplained. The sync now says so in one notice, as for a deleted line.
func TestSetBackLineIsToldWhenPushedAgain(t *testing.T) {
	t.Parallel()
	bare := bareRepo(t)
	a := newMachine(t, 0)
	a.addOrigin("file://" + bare)
	r := gitBackend(t, gitremote.Config{Dir: a.dir, Remote: "origin"})
	a.start("wf-1", "set back on the remote")
	a.move("plan")
	a.sync(r, "")
	if out, err := exec.Command("git", "--git-dir="+bare, "update-ref", "refs/cairn/wf/wf-1", "refs/cairn/wf/wf-1~1").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out := a.sync(r, "")
	if out.Pushed != 1 || len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "wf-1 was back at r1 on origin (it held r2 at the last sync") || !strings.Contains(out.Notices[0], "pushed its later revisions again, now r2") {
		t.Fatalf("sync after the remote's line was set back = %+v, want r2 pushed again and one notice saying so", out)
	}
	if out := a.sync(r, ""); len(out.Notices) != 0 || out.Pushed != 0 {
		t.Fatalf("the sync after = %+v, want nothing pushed and no notice", out)
	}
}
