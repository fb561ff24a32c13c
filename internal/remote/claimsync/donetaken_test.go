package claimsync_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
)

// TestDoneTakenOverIsSaidAsDone: a task done here, not yet pushed, keeps its claim, and
// another machine that took that claim over (it lapsed here) may run the finished task again.
// A sync that read the takeover said nothing, one whose renewal read it said "task t1, running
// here, is now held by X", and a task call nothing. Each now says it was done here and may be
// run again there, once.
func TestDoneTakenOverIsSaidAsDone(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(h *hooked, take func())
		call bool
	}{
		{"read by the sync", func(h *hooked, take func()) { take() }, false},
		{"read by the renewal", func(h *hooked, take func()) {
			h.arm(func() { h.arm(take) }) // after the sync's first read, before the renewal's
		}, false},
		{"read by a task call", func(h *hooked, take func()) { take() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hooked{Backend: memremote.New()}
			a := newClone(t, h)
			for _, st := range []string{"running", "done"} {
				if _, err := a.task("t1", st); err != nil {
					t.Fatal(err)
				}
			}
			x, later := machineX(t, h)
			later()
			tc.arm(h, func() {
				if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
					t.Error(err)
				}
			})
			a.vars[claimsync.EnvClockSkew] = "20s" // past a quarter of the lease: the sync renews
			var notes []string
			if tc.call {
				res, err := a.task("t2", "running")
				if err != nil {
					t.Fatal(err)
				}
				notes = res.Warnings
			} else {
				notes = a.sync()
			}
			if len(notes) != 1 || !strings.HasPrefix(notes[0], "task t1, done here") || strings.Contains(notes[0], "running here") {
				t.Fatalf("notes %q, want one saying t1, done here, was taken over by X", notes)
			}
			if notes := a.sync(); len(notes) != 0 {
				t.Fatalf("the next sync said again %q", notes)
			}
		})
	}
}

// TestRunningBeforeSharingIsThisMachines: a task set running here before sharing was switched
// on was taken by this machine as another machine's: its session start after the session that
// ran it was interrupted left it running ("t1 (running)", recovered never), as it does a task
// another machine runs. Adopt, which cairn remote enable calls, queues it as a claim made
// offline: this machine's, recovered as any, and claimed by the next sync while it runs.
func TestRunningBeforeSharingIsThisMachines(t *testing.T) {
	for _, recover := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "proj")
		gitInit(t, "file://"+gittest.Bare(t), dir)
		a := openClone(t, dir)
		a.en = openSession(t, dir, "session-a0")
		if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "claims", WorkflowID: "wf-1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
			t.Fatal(err)
		}
		if err := mirror.Save(a.store(), mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
			t.Fatal(err)
		}
		if err := claimsync.Adopt(a.opt, ""); err != nil {
			t.Fatal(err)
		}
		if recover {
			r := openSession(t, dir, "session-a1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if !slices.Equal(r.OpenTasks, []string{"t1"}) || taskStatus(t, a, "t1") != "pending" {
				t.Fatalf("open tasks %q, t1 %s: want t1 recovered to pending, as a run of this machine's", r.OpenTasks, taskStatus(t, a, "t1"))
			}
			continue
		}
		a.sync()
		if hs := lineHolders(t, a); hs["t1"].Owner != a.owner() {
			t.Fatalf("the sync after the enable left t1, running here, unclaimed: %+v", hs)
		}
	}
}

// TestRunningAsSharingIsSwitchedOn: a task set running by a call that found sharing off, and
// landed after cairn remote enable had queued the tasks running then (Adopt), was claimed by
// nobody: the next sync left it unclaimed, another machine could set it running too, and this
// clone's reports took it as another machine's run. The call that set it running, finding
// sharing on since, now queues it as a claim made offline, which the next sync makes.
func TestRunningAsSharingIsSwitchedOn(t *testing.T) {
	m := memremote.New()
	a := newClone(t, m)
	if err := mirror.Save(a.store(), mirror.Settings{Remote: "origin"}); err != nil { // sharing off
		t.Fatal(err)
	}
	_, err := claimsync.Task(context.Background(), a.opt, "t1", "running", func(rerun bool) (*engine.Result, error) {
		// cairn remote enable, between this call's read of the settings and its update.
		if err := mirror.Save(a.store(), mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
			t.Fatal(err)
		}
		if err := claimsync.Adopt(a.opt, ""); err != nil {
			t.Fatal(err)
		}
		return a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Rerun: rerun})
	})
	if err != nil {
		t.Fatal(err)
	}
	a.sync()
	x := claim.New(m, "wf-1", "X", time.Minute, time.Now)
	if err := x.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := x.Holders()["t1"]; h.Owner != a.owner() {
		t.Fatalf("the sync after the enable left t1, set running here, held by %q", h.Owner)
	}
}

// TestTakeoverIsSaid: setting running a task whose claim another machine left unrenewed past
// the lease took it over, and said only "task t1 is running", as of a task nobody held: that
// machine may still run it (its clock, or this one's, set forward makes a live claim look
// lapsed). Marking done a task running here unclaimed (another machine's revisions brought
// it), which claims it first, took it over without a word too. The result now says whose claim
// was taken over, once.
func TestTakeoverIsSaid(t *testing.T) {
	for _, status := range []string{"running", "done"} {
		t.Run(status, func(t *testing.T) {
			m := memremote.New()
			a := newClone(t, m)
			b := cloneOf(t, m, m)
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			if status == "done" { // running here as pulled from A, not claimed here
				if _, err := b.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := b.task("t1", status); err == nil {
				t.Fatalf("B set %s t1, which A holds", status)
			}
			b.vars[claimsync.EnvClockSkew] = "2m" // past B's one-minute lease since it read A's claim
			res, err := b.task("t1", status)
			if err != nil {
				t.Fatal(err)
			}
			if want := "task t1 was taken over from " + a.owner() + " (claimed "; len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], want) {
				t.Fatalf("warnings %q, want one beginning %q", res.Warnings, want)
			}
			if res, err := b.task("t1", status); err != nil || len(res.Warnings) != 0 {
				t.Fatalf("set %s again, B's own claim: %v, warnings %q", status, err, res.Warnings)
			}
		})
	}
}
