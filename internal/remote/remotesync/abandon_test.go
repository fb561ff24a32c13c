package remotesync_test

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestAbandonedHereIsShared: A and B share a workflow and A abandons it (cairn archive, with
// or without a reason). A's next sync shares that end, as it shares a completion, so B learns
// the workflow was abandoned instead of going on with it alone, and neither takes it back.
func TestAbandonedHereIsShared(t *testing.T) {
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
