package claimsync_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestUnclaimedRunHereIsThisMachines: on a host that refuses the claims ref (tasks then run
// unclaimed, and update_task says so), a task set running here was taken as another machine's
// run, since no claim of this clone's showed it: a session starting here after its session
// ended left it running for good, where one of a host taking claims recovers it. It is now
// this clone's run; one brought by another machine's revisions is still that machine's.
func TestUnclaimedRunHereIsThisMachines(t *testing.T) {
	for _, offline := range []bool{false, true} {
		t.Run(map[bool]string{false: "online", true: "set-running-offline"}[offline], func(t *testing.T) {
			bare := gittest.Bare(t)
			hook := "#!/bin/sh\ncase \"$1\" in refs/cairn/claims/*|refs/heads/cairn-claims/*) echo 'claims refused' >&2; exit 1;; esac\n"
			if err := os.WriteFile(filepath.Join(bare, "hooks", "update"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			url, base := "file://"+bare, t.TempDir()
			a := gitClone(t, url, filepath.Join(base, "a"))
			a.en = openSession(t, a.opt.Root, "session-a0")
			seturl := func(url string) {
				if out, err := exec.Command("git", "-C", a.opt.Root, "remote", "set-url", "origin", url).CombinedOutput(); err != nil {
					t.Fatalf("git remote set-url: %v\n%s", err, out)
				}
			}
			if offline {
				seturl(url + ".gone")
			}
			res, err := a.task("t1", "running")
			if err != nil {
				t.Fatal(err)
			}
			if offline {
				seturl(url)
				if notes := a.sync(); !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "running here unclaimed") }) {
					t.Fatalf("the sync confirming t1 on a host refusing claims said %q", notes)
				}
			} else if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "running here unclaimed") }) {
				t.Fatalf("setting t1 running on a host refusing claims: %q", res.Warnings)
			}
			a.push()

			b := pulled(t, a, filepath.Join(base, "b"), url)
			if got := taskStatus(t, b, "t1"); got != "running" {
				t.Fatalf("a session start on another machine set a's unclaimed run of t1 to %s", got)
			}
			sessionStart(t, a.opt.Root, nil)
			if got := taskStatus(t, a, "t1"); got != "pending" {
				t.Fatalf("a session start here, the session that set t1 running ended, left it %s; want it recovered", got)
			}
		})
	}
}
