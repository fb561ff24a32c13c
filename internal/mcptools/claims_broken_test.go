package mcptools_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestBrokenClaimsLineDoesNotStopBackgroundSync: a claims ref on the remote that cannot be
// read stops no background sync of a clone with no claim made offline: the workflow is still
// pushed, and the claims error is said once as a notice.
func TestBrokenClaimsLineDoesNotStopBackgroundSync(t *testing.T) {
	bare := bareRepo(t)
	_, c, runs := machineARuns(t, bare, "claims")
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`) // each sync reads the claims line

	gittest.ForgeClaims(t, "file://"+bare, "wf-1")

	// A sync since the forging may have told the claims error already, on this result (told
	// once); else the sync begun after it tells it.
	got := text(mustOK(t, c, "update_task", `{"id":"t2","status":"pending"}`))
	waitRuns(t, runs, 2) // a sync begun after t2 has ended: it pushed t2
	b := machineB(t, bare)
	b.sync(t)
	if w, err := b.st.ReadWorkflow(); err != nil || !strings.Contains(string(w.Data), `"id":"t2"`) {
		t.Fatalf("B's workflow after A's syncs lacks t2 (%v): the broken claims line stopped the sync", err)
	}
	if !strings.HasPrefix(got, "Notice:") {
		got = text(mustOK(t, c, "get_vars", `{}`))
	}
	if n, _, _ := strings.Cut(got, "\n"); !strings.Contains(n, "task claims could not be synced") {
		t.Fatalf("notice %q", n)
	}
}
