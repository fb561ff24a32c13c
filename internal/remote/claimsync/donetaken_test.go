package claimsync_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
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
