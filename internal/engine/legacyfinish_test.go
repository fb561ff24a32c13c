package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestFinishedSeedRenameIsSaid: a session start that finds the active workflow's own seed
// file still in place (a kill between the migration's commit and the seed file's rename)
// finishes the rename and says so once, among the notices where the migration itself is
// said, naming the file and where its original now is. The next start says nothing of it.
func TestFinishedSeedRenameIsSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seed := e.seedCopy(0)
	backup := filepath.Join(e.project, ".claude", "workflow-state.v1.json.bak")
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true})
	if !containsAny(r.Notices, "was migrated to this Cairn's format") {
		t.Fatalf("the seed file was not migrated: notices %v, warnings %v", r.Notices, r.Warnings)
	}
	// The kill: the migration committed, the seed file not yet renamed.
	if err := os.Rename(backup, seed); err != nil {
		t.Fatal(err)
	}
	r = e.open("s2").Resume(engine.ResumeOptions{Apply: true})
	var said []string
	for _, n := range r.Notices {
		if strings.Contains(n, ".claude/workflow-state.json") {
			said = append(said, n)
		}
	}
	want := ".claude/workflow-state.json, written by an older Cairn, was still in place after its migration; it is now kept as .claude/workflow-state.v1.json.bak; the workflow is unchanged"
	if len(said) != 1 || said[0] != want {
		t.Fatalf("notices about the seed file %q, want only %q (warnings %v)", said, want, r.Warnings)
	}
	if containsAny(r.Notices, "two copies") || containsAny(r.Warnings, "workflow-state.json") {
		t.Fatalf("the finished rename was taken for something else: notices %v, warnings %v", r.Notices, r.Warnings)
	}
	if _, err := os.Stat(backup); err != nil {
		t.Fatalf("the original is not where the notice says: %v", err)
	}
	r = e.open("s3").Resume(engine.ResumeOptions{Apply: true})
	if containsAny(r.Notices, "workflow-state.json") {
		t.Fatalf("a start with nothing to finish still speaks of the seed file: %v", r.Notices)
	}
}

// TestMigratedCheckpointsAreNotCalledTheAgents: approvals recorded without a source (a seed's
// user_checkpoints, which were the user's, or an earlier Cairn's) do not say who gave them.
// Before, every one read "by the agent (recorded before approvals needed a person)", which
// for seed 002's checkpoints named the wrong one.
func TestMigratedCheckpointsAreNotCalledTheAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("memory/state/phase.json", `{"workflow_id":"wf-auth","started_at":"2026-11-22T08:00:00Z","last_updated":"2026-11-22T09:20:00Z",`+
		`"current_phase":"ARCHITECTURE","phase_status":"in_progress","completed_phases":[{"phase":"REQUIREMENTS","completed_at":"2026-11-22T09:10:00Z"}],`+
		`"user_checkpoints":[{"phase":"REQUIREMENTS","approved_at":"2026-11-22T09:15:00Z"}],"interruption_safe":true}`)
	res := e.open("s1").Resume(engine.ResumeOptions{Apply: true})
	if len(res.Approvals) != 1 || strings.Contains(res.Approvals[0], "agent") || !strings.Contains(res.Approvals[0], "by an approver the older state did not record") {
		t.Errorf("approvals %q (workflow %q); want the checkpoint's approver said as not recorded, not as the agent", res.Approvals, res.WorkflowID)
	}
}

// TestUnmigratableWarningSaysWhatToCorrect: the report's warning about an older snapshot that
// could not be migrated was the store's text, its state directory first, cut at its first
// clause: "... could not be migrated." and no more, so the step "ask the user to correct it by
// hand as the warning says" pointed at a warning that did not say what. It now says what, then
// the file.
func TestUnmigratableWarningSaysWhatToCorrect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/cairn/workflow-state.json", `{"version":"1.0","type":"weird","state":"","workflow_id":"wf-1"}`)
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	const want = "\nwarning: the workflow snapshot is in an older format that could not be migrated and was left as it is: migrating a schema 1.x Cairn record: " +
		"it names no current phase, and no definition of \"weird\" gives the phases to pick one from; it is .claude/cairn/workflow-state.json\n"
	if !strings.Contains(r.Report, want) {
		t.Errorf("report:\n%s\nwant the warning %q", r.Report, want)
	}
	// The person's line keeps the store's words, with the directory.
	if !strings.Contains(r.SystemMessage, filepath.Join(e.project, ".claude", "cairn")+" is in an older format") {
		t.Errorf("systemMessage %q", r.SystemMessage)
	}
}
