package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// A record filled by its approvals (a definition that cycles through an approval phase, each
// pass adding one) is told so, not sent to look for what fills it.
func TestFullByNamesApprovals(t *testing.T) {
	at := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	r := &workflow.Record{}
	for range 3000 {
		r.Approvals = append(r.Approvals, workflow.Approval{Phase: "review", RequestedAt: at, ApprovedAt: at,
			Source: workflow.ApprovalCLI, Note: strings.Repeat("n", 200)})
	}
	got := fullBy(r)
	if !strings.Contains(got, "approvals take") || !strings.Contains(got, "cairn archive") {
		t.Errorf("fullBy = %q, want its approvals named with cairn archive", got)
	}
}
