package claimsync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestClaimOnADamagedRemote: a remote whose repository holds a ref to an object it does not
// have refuses every push ("missing necessary objects"), the claim's with them. The task ran
// here unclaimed for good, with a note that the remote "refuses the claims ref" and to run
// cairn doctor, as for a host whose rules refuse it; it is a claim made offline, the note
// saying the repository is damaged and what ends it, and a sync after the repair claims it.
// The model reads the note in update_task's result: git's step, which deletes a ref on the
// remote every machine shares, is the person's, whom cairn sync tells it.
func TestClaimOnADamagedRemote(t *testing.T) {
	bare := gittest.Bare(t)
	base := t.TempDir()
	a := gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	bad := filepath.Join(bare, "refs", "cairn", "claims", "wf-bad")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.task("t1", "running")
	if err != nil || len(res.Warnings) != 1 {
		t.Fatalf("running on a damaged remote: %v %+v", err, res)
	}
	w := res.Warnings[0]
	if !strings.Contains(w, "task t1 is not yet claimed on origin") || !strings.Contains(w, "damaged") ||
		!strings.Contains(w, claimsync.RemoteStep) || strings.Contains(w, "git push") {
		t.Fatalf("running on a damaged remote warned %q; want it to say the repository is damaged, with the user's step and not git's", w)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	a.sync()
	b := gitClone(t, "file://"+bare, filepath.Join(base, "b"))
	if _, err := b.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "held by") {
		t.Fatalf("another machine set t1 running after the repair: %v; want it refused as held here", err)
	}
}

// TestDoneOnADamagedRemoteIsRefused: done of a task running here unclaimed (brought by
// another machine's revisions) claims it first, and is refused with nothing changed when the
// claim cannot be made, since another machine may hold it. A remote whose repository is
// damaged refuses the claim as a host's rule would, and the done went ahead unclaimed: pushed
// after the repair, it would end the task over its holder's work. It is now refused as out of
// reach, saying the repository is damaged.
func TestDoneOnADamagedRemoteIsRefused(t *testing.T) {
	bare := gittest.Bare(t)
	a := gitClone(t, "file://"+bare, filepath.Join(t.TempDir(), "a"))
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(bare, "refs", "cairn", "claims", "wf-bad")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doneRefused(t, a, "t1", "done on a damaged remote, not claimed here", "nothing was changed", "damaged")
}
