package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestRecoveryKeepsTheAge: after a crash, the session-start recovery writes the record, but
// the age the report shows and the TTL still count from the last change an agent made.
func TestRecoveryKeepsTheAge(t *testing.T) {
	e := newEnv(t)
	crashed := e.openAs("crashed", exitedPID(t))
	must(crashed.Start(engine.StartRequest{Type: "debug", Context: "flaky test", TTL: "4h"}))(t)
	must(crashed.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)

	e.clock.Add(3 * time.Hour)
	r := must(e.open("next").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if !strings.Contains(strings.Join(r.Notices, "\n"), "back to pending") {
		t.Fatalf("no recovery happened: %+v", r)
	}
	if r.AgeSeconds != int64(3*time.Hour/time.Second) || !strings.Contains(r.Report, "last change 3h ago") {
		t.Errorf("after recovery the age is %ds, report:\n%s", r.AgeSeconds, r.Report)
	}
	// The recovery write did not restart the TTL: 4h after the agent's change it expires.
	e.clock.Add(61 * time.Minute)
	r = must(e.open("later").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if r.WorkflowID != "" || !strings.HasPrefix(r.Ended, "Expired DEBUG workflow") {
		t.Errorf("4h after the last real change the workflow is still active: %+v", r)
	}
}

// TestBrokenDefinitionIsShown: a .claude/workflows file that does not load is shown to the
// person (systemMessage) and the model (a report line), and start_workflow's refusal names the
// file and line instead of only "unknown workflow type".
func TestBrokenDefinitionIsShown(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.project, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte("---\nname: review\nphases: [read, [broken\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if !strings.Contains(r.SystemMessage, ".claude/workflows/review.md:2: ") || !strings.Contains(r.Report, "review.md:2: ") {
		t.Errorf("broken definition not shown: system message %q, report:\n%s", r.SystemMessage, r.Report)
	}
	_, err := e.open("s1").Start(engine.StartRequest{Type: "review", Context: "x"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "review.md")+":2: ") || !strings.Contains(err.Error(), "unknown workflow type") {
		t.Errorf("start of the broken type: %v", err)
	}
}

// TestReplaceAndArchiveWriteTheirEndings: a start that replaces the active workflow, and an
// archive, each write "Abandoned ..., archived" to memory, so that memory no longer calls the
// workflow active; after the archive the next session is told once.
func TestReplaceAndArchiveWriteTheirEndings(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "first try"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(en.Start(engine.StartRequest{Type: "debug", Context: "second try", Replace: true}))(t)
	if topic := e.readMemory("cairn-workflow.md"); !strings.Contains(topic, "Abandoned APEX workflow at plan for “first try”, archived") {
		t.Errorf("replace wrote no abandon line:\n%s", topic)
	}
	if mem := e.readMemory("MEMORY.md"); strings.Contains(mem, "Active APEX") {
		t.Errorf("MEMORY.md still calls the replaced workflow active:\n%s", mem)
	}
	must(e.open("person").Archive("abandoned"))(t)
	if topic := e.readMemory("cairn-workflow.md"); !strings.Contains(topic, "Abandoned DEBUG workflow at troubleshoot for “second try”, archived") {
		t.Errorf("archive wrote no abandon line:\n%s", topic)
	}
	r := must(e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if !strings.Contains(r.Report, `the last one ended ("Abandoned DEBUG workflow at troubleshoot for “second try”, archived")`) {
		t.Errorf("report after archive: %q", r.Report)
	}
	st := must(e.open("person").Resume(engine.ResumeOptions{}))(t)
	if st.Ended == "" || st.Report == "" {
		t.Errorf("cairn status after the ending: ended %q report %q", st.Ended, st.Report)
	}
}
