package claimsync_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// killing is a remote whose next append, once armed, lands and then ends the call, as a
// process killed right after its push landed (kill -9): nothing after it runs.
type killing struct {
	remote.Backend
	armed atomic.Bool
}

func (k *killing) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	rev, err := k.Backend.Append(ctx, id, after, data)
	if err == nil && k.armed.CompareAndSwap(true, false) {
		panic("killed")
	}
	return rev, err
}

// TestClaimOfAKilledCallIsReleased: a task call killed once its claim landed, before it set
// the task running here or recorded the claim, left the claim on the line held by this clone,
// and the syncs here, with nothing running nor recorded as claimed, never read the line: every
// other machine was refused the task ("held by A, free to take over in 59m") for a lease, while
// no machine ran it. The call now records the claim it is about to make first, so the next
// sync finds it and releases it.
func TestClaimOfAKilledCallIsReleased(t *testing.T) {
	m := memremote.New()
	k := &killing{Backend: m}
	a := cloneOf(t, k, m)
	b := cloneOf(t, m, m)
	k.armed.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the claim's append did not end the call")
			}
		}()
		a.task("k1", "running")
	}()
	if got := taskStatus(t, a, "k1"); got == "running" {
		t.Fatalf("k1 is %s here, want not running: the call was killed before its update", got)
	}
	a.sync()
	if _, err := b.task("k1", "running"); err != nil {
		t.Fatalf("B setting k1 running after A's sync: %v", err)
	}
}
