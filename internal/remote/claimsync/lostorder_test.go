package claimsync_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestLostClaimsAreSaidInTaskOrder: the notes of a sync that found several tasks set running
// here offline held by another machine came in map order, another each time the same sync was
// run (cairn sync's lines shuffled between two runs). They come in the tasks' order.
func TestLostClaimsAreSaidInTaskOrder(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	f.set(true)
	var ids []string
	for i := range 8 {
		id := fmt.Sprintf("t%d", i)
		ids = append(ids, id)
		if _, err := a.task(id, "running"); err != nil {
			t.Fatal(err)
		}
	}
	other := claim.New(f.Backend, "wf-1", "X", time.Hour, time.Now)
	for _, id := range ids {
		if _, err := other.TryClaim(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	f.set(false)
	notes := a.sync()
	var said []string
	for _, n := range notes {
		said = append(said, strings.Fields(n)[1])
	}
	if !slices.Equal(said, ids) {
		t.Fatalf("the sync said the lost claims of %q, want %q in that order", said, ids)
	}
}
