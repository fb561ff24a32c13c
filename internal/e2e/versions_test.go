package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
)

// State Cairn did not write itself, in the real client: a record from a newer Cairn, a seed's
// state file, and a checkpoint too large for one tool result. Each is one Claude Code run.

// A checkpoint over load_checkpoint's 40,000 bytes: what reaches the model (the tool_result in
// the next request the mock gets) is an outline of its parts, not the checkpoint and not
// Claude Code's note that the output went to a file; a part still too large is outlined in
// turn, and a call with the part of one item returns that item.
func TestCairnLargeCheckpointInParts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	files := make([]string, 300)
	for i := range files {
		files[i] = fmt.Sprintf("src/pkg%03d/upload.go: %s", i, strings.Repeat("retry ", 30))
	}
	data, _ := json.Marshal(map[string]any{"files": files, "summary": "uploads fail on 503"})
	if len(data) <= 40_000 {
		t.Fatalf("the checkpoint is %d bytes, want over 40,000", len(data))
	}
	e := startAt(t, w, time.Now().Add(-time.Minute), engine.StartRequest{Type: "apex", Context: seedContext})
	if _, err := e.SaveCheckpoint("survey", data); err != nil {
		t.Fatal(err)
	}
	e.Close()

	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("BIG-CHECKPOINT")),
			mockapi.ToolUse(cairnTool("load_checkpoint"), map[string]any{"name": "survey"})).Named("load whole"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse(cairnTool("load_checkpoint"), map[string]any{"name": "survey", "part": "/files"})).Named("load a part too large"),
		mockapi.On(afterToolResult,
			mockapi.ToolUse(cairnTool("load_checkpoint"), map[string]any{"name": "survey", "part": "/files/3"})).Named("load a part"),
		mockapi.On(afterToolResult, mockapi.Text("read it")).Named("end the turn"),
	)
	r := w.runScript(t, RunOptions{Prompt: "BIG-CHECKPOINT: read the survey"})
	requireToolResultsOK(t, r, 3)
	requireHooksOK(t, r, "Stop")
	reqs := r.MainRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d agent-loop requests, want 4", len(reqs))
	}
	seen := func(m *mockapi.MessagesRequest) string {
		trs := m.ToolResults()
		return trs[len(trs)-1].Text
	}

	outline := seen(reqs[1])
	t.Logf("the model saw, for the whole checkpoint (%d bytes):\n%s", len(data), tail(outline, 3000))
	if len(outline) > 8<<10 || strings.Contains(outline, files[0]) {
		t.Errorf("the %d-byte checkpoint reached the model whole or nearly (%d characters)", len(data), len(outline))
	}
	for _, want := range []string{"part argument", "/files", "/summary", fmt.Sprint(len(data))} {
		if !strings.Contains(outline, want) {
			t.Errorf("what the model saw lacks %q: it is no outline of the parts", want)
		}
	}

	// A part still too large is outlined in turn, with its range of items.
	items := seen(reqs[2])
	if len(items) > 16<<10 || strings.Contains(items, files[0]) || !strings.Contains(items, "an array of 300 items, /files/0 to /files/299") {
		t.Errorf("part /files did not reach the model as an outline of its 300 items:\n%s", tail(items, 2000))
	}

	got := seen(reqs[3])
	t.Logf("the model saw, for part /files/3:\n%s", tail(got, 1000))
	if !strings.Contains(got, files[3]) || strings.Contains(got, files[2]) || strings.Contains(got, files[4]) {
		t.Errorf("part /files/3 did not reach the model as that item alone:\n%s", tail(got, 2000))
	}
}

// A project whose state a newer Cairn wrote (internal/cli/testdata/script/newer.txtar's
// record): the report in the model's first request says so and does not send it to
// start_workflow, resume_check says the same, the user is told, and nothing in the session
// (hooks or MCP server) touches the record.
func TestCairnNewerStateLeftAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	const record = `{"version":"3.1","workflow_id":"apex-20261122T173000Z-3f9a","revision":9,"future":true}` + "\n"
	path := filepath.Join(w.stateDir(), "workflow-state.json")
	r := resumeWith(t, w, path, record, 0o600, "NEWER-STATE")

	report := cairnReport(t, r.FirstMain(t))
	if !strings.Contains(report, "written by a newer Cairn") || !strings.Contains(report, `record version "3.1"`) {
		t.Errorf("the report does not say a newer Cairn wrote the state:\n%s", report)
	}
	told := sessionStartText(t, r.FirstMain(t))
	t.Logf("the model was told at session start:\n%s", told)
	if strings.Contains(told, "start_workflow") || strings.Contains(told, "No active workflow") {
		t.Errorf("the SessionStart context offers to start over:\n%s", told)
	}
	// Cairn's instruction is the Next line outside the fence (the model is told the fenced
	// text is data, not instructions), and it says to install, not to start over.
	if !strings.Contains(told, "\nNext: The workflow state was written by a newer Cairn: install a Cairn newer than ") || !strings.Contains(told, "do not start a new workflow over it.") {
		t.Errorf("the SessionStart context has no Next line saying what to install:\n%s", told)
	}
	starts := requireHooksOK(t, r, "SessionStart")
	if out := parseHookOutput(t, starts[0]); !strings.Contains(out.SystemMessage, "written by a newer Cairn") {
		t.Errorf("SessionStart told the user %q, want that a newer Cairn wrote the state", out.SystemMessage)
	}
	trs := r.ToolResults()
	t.Logf("resume_check gave the model: %q", toolTexts(trs))
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(trs[0].Text, "newer Cairn") || strings.Contains(trs[0].Text, "start_workflow") {
		t.Errorf("resume_check gave %q, want that a newer Cairn wrote the state and no start_workflow", toolTexts(trs))
	}
	requireHooksOK(t, r, "Stop")
	if got := readFile(t, path); got != record {
		t.Errorf("the newer record was changed:\n%s", got)
	}
}

// A seed-era project (seed 001's .claude/workflow-state.json, as in
// internal/cli/testdata/script/legacy.txtar, of a type the project defines with ttl 72h, and
// changed 30 hours ago): the session start migrates it with its definition's TTL, not the
// built-in 24h, so it is not archived as expired; the model's first request carries the
// resumed workflow, the MCP server acts on it in the same session, and the original is kept as
// .bak.
func TestCairnSeedStateMigrated(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	w.writeDefinition(t, "release.md", "---\nphases: [plan, implement, verify]\nttl: 72h\n---\nShip a release.\n")
	const context = "add rate limiting to the public API"
	seed := fmt.Sprintf("{\n  \"type\": \"release\",\n  \"phase\": \"implement\",\n  \"lastUpdated\": %q,\n  \"context\": %q\n}\n",
		time.Now().UTC().Add(-30*time.Hour).Format(time.RFC3339), context)
	legacy := filepath.Join(w.Project, ".claude", "workflow-state.json")
	r := resumeWith(t, w, legacy, seed, 0o644, "SEED-PROJECT")

	if exists(filepath.Join(w.stateDir(), "archive", "index.jsonl")) {
		t.Errorf("the migrated workflow was archived:\n%s", readFile(t, filepath.Join(w.stateDir(), "archive", "index.jsonl")))
	}
	st := w.readState(t)
	if st.Type != "release" || st.State != "implement" || st.Context != context || st.TTL != "72h" {
		t.Fatalf("the migrated workflow is %+v, want release at implement for %q with its definition's ttl 72h", st, context)
	}
	report := cairnReport(t, r.FirstMain(t))
	for _, want := range []string{
		"workflow: " + st.WorkflowID + " (release), phase implement (in_progress)",
		"context: " + context,
		"notice: .claude/workflow-state.json, written by an older Cairn, was migrated to this Cairn's format; the original is kept as .claude/workflow-state.v1.json.bak",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if !r.FirstMain(t).Contains("Next: Continue phase implement") {
		t.Errorf("the first request does not say to continue phase implement")
	}
	trs := requireToolResultsOK(t, r, 1)
	if !strings.Contains(trs[0].Text, st.WorkflowID) || !strings.Contains(trs[0].Text, "implement") {
		t.Errorf("resume_check in the same session does not see the migrated workflow: %s", trs[0].Text)
	}
	requireHooksOK(t, r, "Stop")
	if exists(legacy) {
		t.Errorf("the seed's state file is still there, to be migrated again")
	}
	if got := readFile(t, filepath.Join(w.Project, ".claude", "workflow-state.v1.json.bak")); got != seed {
		t.Errorf("the .bak differs from the seed's file:\n%s", got)
	}
}

// sessionStartText is the SessionStart context as it reached the model: from Claude Code's
// header to the blank line that ends it (what follows is Claude Code's own, such as the list
// of deferred tools that names start_workflow).
func sessionStartText(t testing.TB, m *mockapi.MessagesRequest) string {
	t.Helper()
	text := fromSessionStart(t, m)
	if j := strings.Index(text, "\n\n"); j >= 0 {
		text = text[:j]
	}
	return text
}

// resumeWith writes a state file at path (its directory made as needed), then runs one
// session whose prompt starts with marker and whose model calls resume_check once and ends
// the turn, and checks that it ran with the plugin loaded and its script used.
func resumeWith(t *testing.T, w *World, path, content string, mode os.FileMode, marker string) *Run {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
			mockapi.ToolUse(cairnTool("resume_check"), map[string]any{})).Named("resume_check"),
		mockapi.On(afterToolResult, mockapi.Text("ok")).Named("end the turn"),
	)
	r := w.runScript(t, RunOptions{Prompt: marker + ": where were we?"})
	return r
}
