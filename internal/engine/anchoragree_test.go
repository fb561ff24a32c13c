package engine_test

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// After a compaction the model reads three answers about the workflow: the anchor PreCompact
// put into the summary, the report of the SessionStart that follows (source compact, the same
// session and client), and resume_check from its own client. They give the same one next
// step; where the start archives the workflow (another session's compaction past its TTL, a
// finished workflow left in the active slot), the anchor keeps no position and sends the model
// nowhere the start makes pointless (expire_ttl, start_workflow).
func TestCompactionAnswersAgree(t *testing.T) {
	t.Parallel()
	start := func(ttl string) func(e *env) {
		return func(e *env) { must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c", TTL: ttl}))(t) }
	}
	for _, tc := range []struct {
		name    string
		setup   func(e *env)
		session string // the session compacting; s1 started the workflow
		pid     int    // its client; 0 is the client s1 started it in
	}{
		{"active", start(""), "s1", 0},
		{"awaiting approval", func(e *env) {
			start("")(e)
			must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t)
		}, "s1", 0},
		{"blocking violations", func(e *env) {
			start("")(e)
			must(e.open("s1").SetEnforcement([]engine.Violation{{Code: "V-1", Severity: "HIGH", Details: "x"}}))(t)
		}, "s1", 0},
		{"past its TTL, the owner's compaction", func(e *env) { start("2h")(e); e.clock.Add(3 * time.Hour) }, "s1", 0},
		{"past its TTL, another session's compaction", func(e *env) { start("2h")(e); e.clock.Add(3 * time.Hour) }, "s2", 0},
		// The same session is the live session, in whichever client: a second terminal's
		// (claude --continue), or one resumed after its first client exited.
		{"past its TTL, the owner's session compacting in another client", func(e *env) { start("2h")(e); e.clock.Add(3 * time.Hour) }, "s1", 5151},
		{"finished, left in the active slot", func(e *env) {
			start("")(e)
			replaceInSlot(t, e.open("s1"), 1, `"status":"active"`, `"status":"completed"`)
		}, "s1", 0},
		{"ended", func(e *env) { start("")(e); must(e.open("s1").Archive("abandoned"))(t) }, "s1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.setup(e)
			pid := cmp.Or(tc.pid, 4242)
			anchor, _ := e.openAs(tc.session, pid).CompactAnchor()
			ss := e.openAs(tc.session, pid).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Compaction: true})
			rc := e.openAs(tc.session, pid).Resume(engine.ResumeOptions{Apply: true, FromClient: true})
			if rc.Next != ss.Next || rc.WorkflowID != ss.WorkflowID {
				t.Errorf("resume_check: %s %q; the start before it: %s %q", rc.WorkflowID, rc.Next, ss.WorkflowID, ss.Next)
			}
			if ss.WorkflowID == "" {
				if anchor != "" {
					t.Errorf("the start after the compaction resumes nothing (%q), but the anchor keeps a position: %q", ss.Report, anchor)
				}
				return
			}
			if !strings.Contains(anchor, "; next: "+strings.TrimSuffix(ss.Next, ".")+".") {
				t.Errorf("anchor %q, want its next step to be the start's: %q", anchor, ss.Next)
			}
		})
	}
}
