package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/report"
)

// A record stored before start refused a context past 300 characters still resumes, moves
// and is archived: the cap is on what is started, not on what is read. The report stays within
// its size and says the next step.
func TestOlderLongContextStillWorks(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	rec["context"] = strings.Repeat("an older, much longer context ", 100)
	writeRecord(t, path, rec)
	en = e.open("s2")
	r := en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if len(r.Report) > report.MaxLen || !strings.Contains(r.Report, "context: an older, much longer context") || !strings.Contains(r.Report, "\nNext: ") {
		t.Fatalf("report of %d bytes:\n%s", len(r.Report), r.Report)
	}
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(en.Archive("superseded"))(t)
	list := must(en.List())(t)
	if len(list) != 1 || list[0].Status != "superseded" || !strings.HasPrefix(list[0].Context, "an older, much longer context") {
		t.Fatalf("list %+v", list)
	}
}
