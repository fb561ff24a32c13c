package claimsync_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestOfflineReleaseIsSaid: a task this clone holds set back to pending while the remote could
// not be reached at all was set back without a word, though its claim stayed on the remote,
// refusing the task to other machines until the next sync; one whose read went through but
// whose push failed said so (TestReleaseThatFailedIsSaidAndDoneBySync). It is said alike.
func TestOfflineReleaseIsSaid(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(true)
	res, err := a.task("t1", "pending")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task t1's claim could not be released on origin (it could not be reached): the next sync releases it"}
	if !slices.Equal(res.Warnings, want) {
		t.Fatalf("warnings %q, want %q", res.Warnings, want)
	}
	f.set(false)
	a.sync()
	if _, err := claim.New(f.Backend, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatalf("claiming t1 after the sync: %v", err)
	}
}
