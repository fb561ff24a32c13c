package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// At exactly the end of its TTL a workflow is still live (workflow.Expired: now > last +
// ttl), and every part of the session-start report agrees; a second later it is archived and
// the report says it ended, nothing else.
func TestTTLEdgeReport(t *testing.T) {
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "edge", TTL: "2h"}))(t)
	e.clock.Add(2 * time.Hour)
	res := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID == "" || !strings.Contains(res.Report, "last change 2h ago") || !strings.Contains(res.Report, "\nNext: Continue phase analyze") ||
		strings.Contains(res.Report, "expired") || strings.Contains(res.SystemMessage, "expired") {
		t.Fatalf("at exactly its TTL: %q / %q, want it live and resumed", res.Report, res.SystemMessage)
	}
	e.clock.Add(time.Second)
	res = e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID != "" || !strings.HasPrefix(res.Report, "Cairn: no active workflow, nothing to resume; the last one ended (\"Expired APEX") ||
		!strings.Contains(res.SystemMessage, "expired after 2h without a change") {
		t.Errorf("a second past its TTL: %q / %q, want it archived and said once", res.Report, res.SystemMessage)
	}
}
