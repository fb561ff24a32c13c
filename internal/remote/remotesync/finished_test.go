package remotesync_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestIdleSyncLeavesWorkflowsFinishedElsewhere: a workflow another machine finished (its end
// shared on the remote) is no workflow to go on with. A machine with nothing active does not
// take it into its active slot, where the person saw it as the workflow in progress and the
// model was told another machine had moved it; it is not offered among those to choose either.
// A live one beside it is taken as the remote's only one, and naming the finished one still
// takes it, as asked. The idle syncs that follow (cairn-mcp's, every few seconds) read the
// finished line no more.
func TestIdleSyncLeavesWorkflowsFinishedElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		live bool // another machine shares a live workflow beside the finished one
		want string
	}{
		{name: "only a finished one"},
		{name: "a live one beside it", live: true, want: "wf-live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &counting{Backend: memremote.New()}
			a := newSharing(t, r, "wf-done", "finished elsewhere")
			a.move("plan")
			a.complete()
			if out := a.sync(r, ""); out.Shared == 0 {
				t.Fatalf("A's sync after completing = %+v, want its end shared", out)
			}
			if tc.live {
				newSharing(t, r, "wf-live", "in progress")
			}
			c := newMachine(t, 0)
			out, err := remotesync.Sync(ctx, c.st, r, "origin", "", nil)
			if err != nil || out.Workflow != tc.want || out.Available["wf-done"] != 0 {
				t.Fatalf("C's idle sync = %+v, %v; want %q taken and wf-done neither taken nor offered", out, err, tc.want)
			}
			if tc.want == "" {
				if _, err := os.Stat(filepath.Join(c.en.StateDir(), store.WorkflowFile)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("C's active slot holds a workflow after its idle sync: %v", err)
				}
			} else if ph, _ := c.phase(); ph != "analyze" {
				t.Fatalf("C took %s, in phase %q; want it in analyze", tc.want, ph)
			}
			if tc.live {
				return
			}
			r.read.Store(0)
			if out, err := remotesync.Sync(ctx, c.st, r, "origin", "", nil); err != nil || out.Workflow != "" || r.read.Load() != 0 {
				t.Fatalf("C's next idle sync = %+v, %v after reading %d records; want nothing taken after reading none", out, err, r.read.Load())
			}
			out, err = remotesync.Sync(ctx, c.st, r, "origin", "wf-done", nil)
			if err != nil || out.Workflow != "wf-done" || c.status() != "completed" {
				t.Fatalf("C's sync naming wf-done = %+v, %v; want it taken as asked", out, err)
			}
		})
	}
}

// TestPulledEndSaysSo: a sync that pulls another machine's end of the workflow active here
// says it ended (Outcome.Ended), so the person and the model are told it is over, not only
// the phase it stopped at; a pull of a move says nothing of the kind.
func TestPulledEndSaysSo(t *testing.T) {
	t.Parallel()
	r := memremote.New()
	a := newSharing(t, r, "wf-1", "ends elsewhere")
	b := newMachine(t, 0)
	b.sync(r, "wf-1")
	a.move("plan")
	a.sync(r, "")
	if out := b.sync(r, ""); out.Pulled != 1 || out.Ended != "" {
		t.Fatalf("B's sync of A's move = %+v; want 1 revision pulled, not ended", out)
	}
	a.complete()
	a.sync(r, "")
	if out := b.sync(r, ""); out.Pulled == 0 || out.Ended != workflow.StatusCompleted {
		t.Fatalf("B's sync of A's end = %+v; want it pulled and Ended %q", out, workflow.StatusCompleted)
	}
}
