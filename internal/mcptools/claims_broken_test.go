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
	_, c := machineA(t, bare, "claims")
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`) // each sync reads the claims line

	gittest.ForgeClaims(t, "file://"+bare, "wf-1")

	mustOK(t, c, "update_task", `{"id":"t2","status":"pending"}`)
	b := machineB(t, bare)
	waitFor(t, func() bool {
		if _, err := b.trySync(t); err != nil {
			return false
		}
		w, err := b.st.ReadWorkflow()
		return err == nil && strings.Contains(string(w.Data), `"id":"t2"`)
	})
	if n := nextNotice(t, c); !strings.Contains(n, "task claims could not be synced") {
		t.Fatalf("notice %q", n)
	}
}
