package engine_test

import (
	"context"
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
	ctx := context.Background()
	crashed := e.openAs("crashed", exitedPID(t))
	must(crashed.Start(ctx, engine.StartRequest{Type: "debug", Context: "flaky test", TTL: "4h"}))(t)
	must(crashed.UpdateTask(ctx, engine.TaskRequest{ID: "t1", Status: "running"}))(t)

	e.clock.Add(3 * time.Hour)
	r := must(e.open("next").Resume(ctx, engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if !strings.Contains(strings.Join(r.Notices, "\n"), "back to pending") {
		t.Fatalf("no recovery happened: %+v", r)
	}
	if r.AgeSeconds != int64(3*time.Hour/time.Second) || !strings.Contains(r.Report, "last change 3h 0m ago") {
		t.Errorf("after recovery the age is %ds, report:\n%s", r.AgeSeconds, r.Report)
	}
	// The recovery write did not restart the TTL: 4h after the agent's change it expires.
	e.clock.Add(61 * time.Minute)
	r = must(e.open("later").Resume(ctx, engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
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
	ctx := context.Background()
	r := must(e.open("s1").Resume(ctx, engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
	if !strings.Contains(r.SystemMessage, ".claude/workflows/review.md:2: ") || !strings.Contains(r.Report, "review.md:2: ") {
		t.Errorf("broken definition not shown: system message %q, report:\n%s", r.SystemMessage, r.Report)
	}
	_, err := e.open("s1").Start(ctx, engine.StartRequest{Type: "review", Context: "x"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "review.md")+":2: ") || !strings.Contains(err.Error(), "unknown workflow type") {
		t.Errorf("start of the broken type: %v", err)
	}
}
