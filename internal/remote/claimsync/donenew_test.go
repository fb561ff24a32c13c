package claimsync_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestNewTaskDoneIsClaimedFirst: a task may be added done at once (work finished before its
// task was added). Done is final, so with sharing on it is claimed first, as a done of a task
// running here unclaimed is: an id another machine holds is refused, nothing changed; one no
// machine holds is added done, its claim this machine's.
func TestNewTaskDoneIsClaimedFirst(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	x, _ := machineX(t, b)
	if _, err := x.TryClaim(context.Background(), "t9"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t9", "done"); err == nil || !strings.Contains(err.Error(), "task t9 is held by X") {
		t.Fatalf("t9, held by X, added done here: %v", err)
	}
	res, err := a.task("t8", "done")
	if err != nil || !res.Changed {
		t.Fatalf("t8 added done: %+v, %v", res, err)
	}
	if err := x.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h, ok := x.Holders()["t8"]; !ok || h.Owner == "X" {
		t.Fatalf("t8's claim as X reads it: %+v, %v", h, ok)
	}
}
