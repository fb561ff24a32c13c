//go:build unix

package cli_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestRemoteStatusAfterFailedSync: a sync that fetched the remote's line (another clone moved
// it on) and then failed here (the workflow lock was held) leaves this clone's change
// unpushed; remote status says so on both its lines. Before, its second line counted from the
// fetched head and said "0 unpushed" under a first line saying "1 change not pushed".
func TestRemoteStatusAfterFailedSync(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	work := filepath.Dir(dir)
	bare, other := filepath.Join(work, "shared.git"), filepath.Join(work, "other")
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "--bare", bare)
	for _, d := range []string{dir, other} {
		git("init", "-q", d)
		git("-C", d, "remote", "add", "origin", "file://"+bare)
	}
	oenv := append(append([]string{}, env...), "CLAUDE_PROJECT_DIR="+other)
	run(t, dir, env, "remote", "enable")
	run(t, dir, env, "start", "debug", "x", "--id", "wf-1")
	run(t, dir, env, "sync")
	run(t, other, oenv, "remote", "enable")
	run(t, other, oenv, "sync")
	run(t, other, oenv, "vars", "set", "REVIEW_BY", "bob")
	run(t, other, oenv, "vars", "set", "REVIEW_NOTE", "x")
	run(t, other, oenv, "sync")
	run(t, dir, env, "vars", "set", "REVIEW_BY", "ann")

	d, err := durable.OpenDir(filepath.Join(dir, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.Lock(".lock-workflow", 0)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := exitOf(t, cairnCmd(t, dir, env, "sync"))
	unlock()
	d.Close()
	if code == 0 || !strings.Contains(stderr, ".lock-workflow is locked") {
		t.Fatalf("sync under a held lock: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := exitOf(t, cairnCmd(t, dir, env, "remote", "status"))
	if code != 0 || !strings.Contains(stdout, "shared via origin: synced just now, 1 change not pushed\n") ||
		!strings.Contains(stdout, "remote origin: wf-1 at r2 here, r3 on the remote (last sync ") || !strings.HasSuffix(stdout, "; 1 unpushed\n") {
		t.Fatalf("remote status: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRemoteStatusAfterAPullCutShort: a sync that pulled two of the remote's revisions and then
// stopped at one this clone refuses (it holds a secret by this machine's rules) left those two
// here; remote status counted them as unpushed ("2 unpushed") though they came from the remote,
// until a sync went through. They are the remote's: it says 0 unpushed.
func TestRemoteStatusAfterAPullCutShort(t *testing.T) {
	t.Parallel()
	url := "file://" + filepath.Join(bareRepo(t), "shared.git")
	a, b := newMachine(t, url), newMachine(t, url)
	a.must("remote", "enable", "--yes")
	a.must("start", "debug", "cut short", "--id", "wf-1")
	a.must("sync")
	b.must("remote", "enable", "--yes")
	b.must("sync")
	a.must("vars", "set", "REVIEW_BY", "ann")
	a.must("vars", "set", "REVIEW_NOTE", "x")
	a.must("sync")
	// r4, pushed by anyone who can push there, holds what B's rules take for a secret.
	r, err := gitremote.New(gitremote.Config{Dir: a.dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	recs, err := r.Since(ctx, "wf-1", 2)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Since = %d records, %v", len(recs), err)
	}
	var e map[string]any
	if err := json.Unmarshal(recs[0].Data, &e); err != nil {
		t.Fatal(err)
	}
	snap := e["snapshot"].(map[string]any)
	snap["revision"], snap["context"], e["revision"] = 4, "deploy with "+secrettest.Shapes()[0].Text, 4
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append(ctx, "wf-1", 3, remote.Slice(data)); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := b.cairn("sync"); code == 0 || !strings.Contains(errb, "wf-1: pulled 2 revisions from origin before that, now r3 here") {
		t.Fatalf("B's sync: exit %d\n%s%s", code, out, errb)
	}
	if out := b.must("remote", "status"); !strings.HasSuffix(out, "; 0 unpushed\n") || strings.Contains(out, "not pushed") {
		t.Errorf("remote status after the pull cut short:\n%s", out)
	}
}

// TestRemoteStatusNothingToTake: with no active workflow here, remote status told "cairn sync
// takes the remote's" when the last sync found nothing there to take (the remote empty, or
// holding only the workflow abandoned here, whose end that sync shared); the sync it pointed to
// then said "nothing to sync". It now says there was none to take at the last sync, and names
// what the remote holds when there is one.
func TestRemoteStatusNothingToTake(t *testing.T) {
	t.Parallel()
	url := "file://" + filepath.Join(bareRepo(t), "shared.git")
	a, b := newMachine(t, url), newMachine(t, url)
	a.must("remote", "enable", "--yes")
	a.must("sync")
	none := "remote origin: no active workflow here, and origin held none to take at the last sync ("
	if out := a.must("remote", "status"); !strings.HasPrefix(out, none) || strings.Contains(out, "takes the remote's") {
		t.Errorf("remote status with nothing on the remote:\n%s", out)
	}
	a.must("start", "debug", "abandoned soon", "--id", "wf-1")
	a.must("sync")
	a.must("archive")
	a.must("sync")
	if out := a.must("remote", "status"); !strings.HasPrefix(out, none) || strings.Contains(out, "takes the remote's") {
		t.Errorf("remote status with only the workflow abandoned here on the remote:\n%s", out)
	}
	b.must("remote", "enable", "--yes")
	b.must("start", "debug", "going on", "--id", "wf-2")
	b.must("sync")
	a.must("sync") // of wf-2 only: what else origin holds is not known here
	a.must("archive")
	if out := a.must("remote", "status"); out != "remote origin: no active workflow here; cairn sync pushes the end of wf-2, finished here, and looks on origin for one to take\n" {
		t.Errorf("remote status with wf-2 abandoned here but not yet shared:\n%s", out)
	}
	// B goes on with wf-3, which A fetches (as a sync does) but does not take yet.
	b.must("start", "debug", "next", "--id", "wf-3", "--replace")
	b.must("sync")
	r, err := gitremote.New(gitremote.Config{Dir: a.dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := r.Heads(t.Context()); err != nil || h["wf-3"] != 1 {
		t.Fatalf("A's fetch = %v, %v; want wf-3 at r1", h, err)
	}
	if out := a.must("remote", "status"); !strings.HasSuffix(out, "no active workflow here; cairn sync takes the remote's\n") {
		t.Errorf("remote status with wf-3 on the remote:\n%s", out)
	}
}

// TestStatusOfAnEndPulled: another clone abandoned (cairn archive) or completed the workflow,
// and this clone's sync pulled that end into its active slot, where it stays until a session
// start files it. cairn status showed it as the workflow to go on with, "Then: fix or
// implement", and nothing said the abandoned one had ended. It now says it has ended, how, and
// names no next phase.
func TestStatusOfAnEndPulled(t *testing.T) {
	t.Parallel()
	for _, end := range [][]string{{"archive"}, {"complete", "done"}} {
		url := "file://" + filepath.Join(bareRepo(t), "shared.git")
		a, b := newMachine(t, url), newMachine(t, url)
		a.must("remote", "enable", "--yes")
		b.must("remote", "enable", "--yes")
		a.must("start", "debug", "two clones", "--id", "wf-1")
		a.must("sync")
		b.must("sync")
		a.must(end...)
		a.must("sync")
		how := map[string]string{"archive": "archived", "complete": "completed"}[end[0]]
		// The sync that pulled it says it ended, not only the revision it is now at.
		if out := b.must("sync"); !strings.HasSuffix(out, ": it was "+how+" on another machine\n") {
			t.Errorf("B's sync of A's %s: %q; want it to say the workflow was %s there", end[0], out, how)
		}
		out := b.must("status")
		if strings.Contains(out, "Next phases:") ||
			!strings.Contains(out, "Ended:       "+how+" (the next session start files it in the archive); cairn start begins another workflow\n") {
			t.Errorf("B's status after A's %s was pulled:\n%s", end[0], out)
		}
	}
}

// TestRemoteStatusAfterTheLastSyncOfOne: the last sync was of the workflow active here, which
// fetches only its line, and that workflow was completed since. remote status said "origin
// held none to take at the last sync", though origin held another machine's wf-2 then (and the
// sync it pointed to took it). Only an idle sync lists the remote: after any other, status no
// longer says what the remote held, only that cairn sync looks for one to take.
func TestRemoteStatusAfterTheLastSyncOfOne(t *testing.T) {
	t.Parallel()
	url := "file://" + filepath.Join(bareRepo(t), "shared.git")
	a, b := newMachine(t, url), newMachine(t, url)
	a.must("remote", "enable", "--yes")
	b.must("remote", "enable", "--yes")
	b.must("start", "debug", "here", "--id", "wf-1")
	b.must("sync")
	a.must("start", "debug", "there", "--id", "wf-2")
	a.must("sync")
	b.must("sync") // of wf-1 only
	b.must("complete", "done")
	out := b.must("remote", "status")
	if strings.Contains(out, "held none") ||
		!strings.HasSuffix(out, "remote origin: no active workflow here; cairn sync pushes the end of wf-1, finished here, and looks on origin for one to take\n") {
		t.Errorf("remote status after the last sync was of wf-1 only:\n%s", out)
	}
	if out := b.must("sync"); !strings.Contains(out, "wf-2: pulled 1 revision from origin") {
		t.Fatalf("B's idle sync did not take wf-2:\n%s", out)
	}
}

// TestSyncToARemoteThatRefusesPushes: a remote this clone may read but not write (a read-only
// key, a daemon serving fetches only; here its receive-pack fails) failed the sync with
// "origin could not be reached (git push: ...); check that git fetch origin works from this
// clone", though the sync's own fetch had just worked, so the step found nothing. It now says
// origin did not take the push, and to check that this clone can push there.
func TestSyncToARemoteThatRefusesPushes(t *testing.T) {
	t.Parallel()
	url := "file://" + filepath.Join(bareRepo(t), "shared.git")
	a := newMachine(t, url)
	a.must("remote", "enable", "--yes")
	a.must("start", "debug", "read only", "--id", "wf-1")
	a.must("sync")
	a.git("config", "remote.origin.receivepack", "sh -c 'echo access denied >&2; exit 1'")
	a.must("vars", "set", "WF_X", "1")
	code, out, errb := a.cairn("sync")
	if code != 1 || !strings.HasPrefix(errb, "cairn sync: origin did not take the push (git push: ") ||
		!strings.HasSuffix(errb, "): nothing here changed; check that this clone can reach origin and push there (its credentials may allow only reading), then run cairn sync again\n") {
		t.Errorf("sync to a remote that refuses pushes: exit %d\n%s%s", code, out, errb)
	}
}
