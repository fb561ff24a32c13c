package remotesync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
)

// TestAbandonedHereIsShared: A and B share a workflow and A abandons it (cairn archive, with
// or without a reason). A's next sync shares that end, as it shares a completion, so B learns
// the workflow was abandoned instead of going on with it alone, and neither takes it back.
func TestAbandonedHereIsShared(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"", "wrong approach", "dropped"} {
		t.Run("reason="+reason, func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, 0)
			startShared(r, a, b, "wf-x", "abandoned soon")
			if _, err := a.en.Archive(reason); err != nil {
				t.Fatal(err)
			}
			out := a.sync(r, "")
			if out.Shared == 0 || out.Workflow != "" {
				t.Fatalf("A's sync after abandoning = %+v; want its end shared and nothing taken", out)
			}
			out = b.sync(r, "")
			h, _ := r.Heads(ctx)
			if out.Workflow != "wf-x" || out.Pulled == 0 || out.Local != h["wf-x"] {
				t.Fatalf("B's sync = %+v; want A's end of wf-x pulled to the remote's r%d", out, h["wf-x"])
			}
			if st := b.status(); st != "archived" {
				t.Fatalf("B's copy of wf-x is %q after A abandoned it; want archived", st)
			}
			c := newMachine(t, 0)
			if out := c.sync(r, ""); out.Workflow != "" {
				t.Fatalf("C's idle sync = %+v; want the abandoned wf-x neither taken nor offered", out)
			}
		})
	}
}

// TestFinishedHereTakenBackWhenNamed: A abandons (or completes) a workflow while B, since A's
// last sync, went on with it. A's end cannot be shared on B's line, and A's sync says so with
// the step that takes the workflow back; cairn sync naming it then takes B's line, A's copy
// kept in its archive. Before, the notice named no step, and the named sync refused it as
// "archived here, so it was not taken back", with no way back to the work B goes on with.
func TestFinishedHereTakenBackWhenNamed(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"archive", "complete"} {
		t.Run(end, func(t *testing.T) {
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, 0)
			now := time.Now() // the remote's tip is live against the real clock
			a.now, b.now = now.Add(-time.Hour), now.Add(-time.Hour)
			startShared(r, a, b, "wf-x", "two machines")
			b.move("plan")
			b.sync(r, "")
			if end == "archive" {
				if _, err := a.en.Archive("wrong approach"); err != nil {
					t.Fatal(err)
				}
			} else {
				a.complete()
			}
			archives, err := a.st.ListArchives()
			if err != nil || len(archives) != 1 {
				t.Fatalf("A's archives = %+v, %v", archives, err)
			}
			out := a.sync(r, "")
			said := strings.Join(out.Notices, "\n")
			if out.Workflow != "" || !strings.Contains(said, "workflow wf-x, finished here at r2, was not shared: the remote's line of it was changed elsewhere after r1 and is at r2, active; this machine's end is kept in archive/"+archives[0].Dir+"; to go on with it here, "+remotesync.AskSync+"wf-x") {
				t.Fatalf("A's idle sync = %+v, said %q; want nothing taken and the step that takes wf-x back", out, said)
			}
			out = a.sync(r, "wf-x")
			if out.Workflow != "wf-x" || out.ArchivedHere || out.Pulled != 2 || out.Taken {
				t.Fatalf("A's sync naming wf-x = %+v; want B's line taken back", out)
			}
			if ph, rev := a.phase(); ph != "plan" || rev != 2 {
				t.Fatalf("A after taking wf-x back: %q r%d; want B's plan r2", ph, rev)
			}
			if said := strings.Join(out.Notices, "\n"); !strings.Contains(said, "workflow wf-x, finished here at r2, was changed by another machine after r1, so it was taken back from origin as asked and is active again; this machine's copy stays in archive/"+archives[0].Dir) {
				t.Fatalf("A's sync naming wf-x said %q", said)
			}
			if got, err := a.st.ListArchives(); err != nil || len(got) != 1 {
				t.Fatalf("A's archives after taking wf-x back = %+v, %v; want its copy kept", got, err)
			}
			a.move("implement")
			if out := a.sync(r, ""); out.Pushed != 1 {
				t.Fatalf("A's sync after moving = %+v, want its change pushed", out)
			}
			if out := b.sync(r, ""); out.Pulled != 1 {
				t.Fatalf("B's sync = %+v, want A's change pulled", out)
			}
		})
	}
}
