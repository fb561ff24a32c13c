package claimsync_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// setURL points c's origin at url.
func (c *clone) setURL(url string) {
	c.t.Helper()
	if out, err := exec.Command("git", "-C", c.opt.Root, "remote", "set-url", "origin", url).CombinedOutput(); err != nil {
		c.t.Fatalf("git remote set-url: %v\n%s", err, out)
	}
}

// finishOnA runs t1 on A to done, pushes the done and syncs, which releases the claim.
func finishOnA(t *testing.T, a *clone) {
	t.Helper()
	for _, s := range []string{"running", "done"} {
		if _, err := a.task("t1", s); err != nil {
			t.Fatal(err)
		}
	}
	a.push()
	a.sync()
	if hs := lineHolders(t, a); len(hs) != 0 {
		t.Fatalf("t1, done and pushed on A, is still held: %+v", hs)
	}
}

// TestFinishedElsewhereIsNotRunAgain: once A's done of t1 was pushed and its claim released,
// B, which had not pulled the done (t1 still pending there), claimed t1 and ran it again: the
// claims line said only "released". A done's release now says done on the line, and B is
// refused the task, told who finished it; as is B out of reach, which read the line before.
func TestFinishedElsewhereIsNotRunAgain(t *testing.T) {
	t.Run("online", func(t *testing.T) {
		a, b, _ := twoClones(t)
		finishOnA(t, a)
		_, err := b.task("t1", "running")
		if err == nil || !strings.Contains(err.Error(), "task t1 was finished by "+a.owner()+" on another machine: nothing was changed") {
			t.Fatalf("B set running t1, done and pushed on A: %v; want it refused as finished by A", err)
		}
		if got := taskStatus(t, b, "t1"); got != "" {
			t.Fatalf("t1 on B is %s; want it not started", got)
		}
		if hs := lineHolders(t, a); len(hs) != 0 {
			t.Fatalf("B claimed t1, finished on A: %+v", hs)
		}
	})
	t.Run("out of reach", func(t *testing.T) {
		a, b, _ := twoClones(t)
		finishOnA(t, a)
		if _, err := b.task("t2", "running"); err != nil { // reads the line
			t.Fatal(err)
		}
		b.setURL("file:///nowhere.gone")
		if _, err := b.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "task t1 was finished by "+a.owner()) {
			t.Fatalf("B out of reach set running t1, which it read finished on A: %v; want it refused", err)
		}
	})
}

// TestOfflineRunOfATaskFinishedElsewhere: B set t1 running out of reach, then A ran it, finished
// it, pushed the done and released the claim; B's next sync claimed t1, and B went on running
// a finished task. The sync now finds it finished on A and sets it back to pending here, as it
// does a task another machine holds.
func TestOfflineRunOfATaskFinishedElsewhere(t *testing.T) {
	a, b, _ := twoClones(t)
	url := strings.TrimSpace(gitOut(t, b.opt.Root, "remote", "get-url", "origin"))
	b.setURL(url + ".gone")
	if res, err := b.task("t1", "running"); err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not yet claimed") {
		t.Fatalf("offline, t1 running on B: %v %+v", err, res)
	}
	finishOnA(t, a)
	b.setURL(url)
	notes := b.sync()
	if len(notes) != 1 || !strings.Contains(notes[0], "task t1 was set running here offline, but "+a.owner()+" finished it on another machine: it went back to pending here") {
		t.Fatalf("B's sync said %q; want t1 found finished on A", notes)
	}
	if got := taskStatus(t, b, "t1"); got != "pending" {
		t.Fatalf("t1 on B is %s; want pending", got)
	}
	if hs := lineHolders(t, a); len(hs) != 0 {
		t.Fatalf("B claimed t1, finished on A: %+v", hs)
	}
	b.push() // the workflow's sync, after the claims': the done comes here, and stays on A
	a.push()
	if got, other := taskStatus(t, b, "t1"), taskStatus(t, a, "t1"); got != "done" || other != "done" {
		t.Fatalf("after both pushed, t1 is %s on B and %s on A; want done on both", got, other)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestDoneOfATaskFinishedElsewhere: a task running here unclaimed (another machine's revisions
// brought it) that another machine finished and released as done is marked done here without
// a claim: it is done there too, and no machine may claim it.
func TestDoneOfATaskFinishedElsewhere(t *testing.T) {
	a, b, _ := twoClones(t)
	if _, err := b.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	finishOnA(t, a)
	if res, err := b.task("t1", "done"); err != nil || len(res.Warnings) != 0 {
		t.Fatalf("B marking done t1, finished on A: %v %+v; want it done", err, res)
	}
	if got := taskStatus(t, b, "t1"); got != "done" {
		t.Fatalf("t1 on B is %s; want done", got)
	}
	if hs := lineHolders(t, a); len(hs) != 0 {
		t.Fatalf("B claimed t1, finished on A: %+v", hs)
	}
}

// TestSyncOfARunFinishedElsewhere: the claims line went from the host while t1 ran here, and
// another machine claimed t1 on the new line and finished it. The sync, claiming t1 again, is
// refused it as finished: it says so once, rather than failing every sync on it.
func TestSyncOfARunFinishedElsewhere(t *testing.T) {
	s := &swappable{Backend: memremote.New()}
	a := newClone(t, s)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	s.wipe()
	x := claim.New(s, "wf-1", "X", time.Hour, time.Now)
	rev, err := x.TryClaim(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.ReleaseAll(context.Background(), map[string]int64{"t1": rev}, map[string]bool{"t1": true}); err != nil {
		t.Fatal(err)
	}
	notes := a.sync()
	if len(notes) != 1 || notes[0] != "task t1, running here, was finished by X on another machine: save_checkpoint keeps the data, then pick another task" {
		t.Fatalf("notes = %q", notes)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the next sync repeated: %q", notes)
	}
}
