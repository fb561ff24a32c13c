package mcptools

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Notices that queue up between two calls (a sync or two, then another process) are said
// together, each what changed, with one instruction at the end, not one after each.
func TestQueuedNoticesEndWithOneInstruction(t *testing.T) {
	s := &Server{}
	s.addSyncNoticeLocked(nil, "Notice: another machine moved workflow wf-1 (via origin): it is now at phase plan (revision 3)."+callResume)
	s.addSyncNoticeLocked(nil, "Notice: another machine moved workflow wf-1 (via origin): it is now at phase implement (revision 4)."+callResume)
	generic := "Notice: another session changed workflow wf-1 since your last call: it is now at phase review (revision 5, was 2)." + callResume
	got := s.withSyncNotices(engine.Snapshot{WorkflowID: "wf-1", Revision: 5}, true, generic)
	if n := strings.Count(got, callResume); n != 1 || !strings.HasSuffix(got, callResume) ||
		!strings.Contains(got, "(revision 3). Notice: another machine") || !strings.Contains(got, "phase review (revision 5, was 2).") {
		t.Errorf("queued notices: %q", got)
	}
}
