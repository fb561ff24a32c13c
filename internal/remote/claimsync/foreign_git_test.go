package claimsync_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestDoneBesideAForeignClaimsRefSaysWhy: with the claims ref on the host pointing at a commit
// Cairn did not write, done of a task set running here (its claim never confirmed) was refused
// as if the remote were out of reach, to be marked done "once origin can be reached", which it
// could be all along: the person and the model were never told what stood in the way. The
// refusal says what stands in the way, and the user's step (git's deletes a ref every machine
// shares), as the done of a task this clone never claimed does.
func TestDoneBesideAForeignClaimsRefSaysWhy(t *testing.T) {
	bare := gittest.Bare(t)
	url, base := "file://"+bare, t.TempDir()
	work := filepath.Join(base, "w")
	for _, args := range [][]string{{"init", "-q", work},
		{"-C", work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn"},
		{"-C", work, "push", "-q", url, "HEAD:refs/cairn/claims/wf-1"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	a := gitClone(t, url, filepath.Join(base, "a"))
	if res, err := a.task("t1", "running"); err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not one Cairn can read") || !strings.HasSuffix(res.Warnings[0], "; "+claimsync.RemoteStep) {
		t.Fatalf("setting t1 running beside a foreign claims ref: %v %q", err, res.Warnings)
	}
	_, err := a.task("t1", "done")
	if err == nil || !strings.Contains(err.Error(), "(its claims line there is not one Cairn can read: "+claimsync.RemoteStep+")") ||
		!strings.HasSuffix(err.Error(), "mark it done once that is resolved") {
		t.Fatalf("done beside a foreign claims ref: %v; want it refused, saying why and the user's step", err)
	}
}

// TestRunningBesideAForeignClaimsRefSaysUnchecked: A runs t1 under its claim, then the claims
// ref on the host is replaced by a commit Cairn did not write. B, which cannot read the line,
// set t1 running and heard only that it was "not yet claimed", as if a sync would claim it or
// name its holder, and two steps; none will until the ref is dealt with, and A may hold it.
// B is told the claim could not be checked, that another machine may hold it, and one step.
func TestRunningBesideAForeignClaimsRefSaysUnchecked(t *testing.T) {
	a, b, _ := twoClones(t)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(gitOut(t, a.opt.Root, "remote", "get-url", "origin"))
	work := filepath.Join(t.TempDir(), "w")
	for _, args := range [][]string{{"init", "-q", work},
		{"-C", work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn"},
		{"-C", work, "push", "-q", "--force", url, "HEAD:refs/cairn/claims/wf-1"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	res, err := b.task("t1", "running")
	want := "task t1 is running here, but its claim could not be checked: its claims line on origin is not one Cairn can read, so another machine may hold it; " + claimsync.RemoteStep
	if err != nil || len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Fatalf("B setting t1 running beside a foreign claims ref: %v %q; want %q", err, res.Warnings, want)
	}
}
