package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
)

// Issue 14 in the real client: what the model is told after an ending, after a crash, and at
// an approval gate in claude -p.

// After a completion, the next session's first request carries one line saying what ended and
// that there is nothing to resume; the session after it gets nothing from the hook.
func TestToldEndingOnceThenNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	e := startAt(t, w, time.Now().Add(-time.Hour), engine.StartRequest{Type: "debug", Context: "fix the flaky upload test"})
	if _, err := e.Complete("race fixed"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	want := `Cairn: no active workflow, nothing to resume; the last one ended ("Completed DEBUG for “fix the flaky upload test”: “race fixed”").`
	for i, prompt := range []string{"FIRST-AFTER: anything to resume?", "SECOND-AFTER: anything to resume?"} {
		r := w.run(t, RunOptions{Prompt: prompt})
		requireOK(t, r)
		w.requirePluginLoaded(t, r)
		first := r.FirstMain(t)
		switch i {
		case 0:
			if !first.Contains(sessionStartContext) || !first.Contains(want) || first.Contains("<cairn-state") {
				t.Errorf("the first session after completion was not told, in one line, %q:\n%s", want, tail(first.MessagesText(), 2000))
			}
			if len(want) > 250 {
				t.Errorf("the ending line is %d characters, want at most 250", len(want))
			}
		case 1:
			// (MEMORY.md, which Claude Code loads itself, still holds the completion line.)
			if first.Contains(sessionStartContext) || first.Contains("nothing to resume") {
				t.Errorf("the second session after completion got something from the hook:\n%s", tail(first.MessagesText(), 2000))
			}
		}
		for _, h := range requireHooksOK(t, r, "SessionStart") {
			if out := parseHookOutput(t, h); out.SystemMessage != "" {
				t.Errorf("session %d: SessionStart told the user %q", i+1, out.SystemMessage)
			}
		}
	}
}

// After a crash (a task left running by a session that is gone), the session-start recovery
// resets the task, and the report gives the age of the last change the agent made, not of
// the recovery write.
func TestToldAgeAfterCrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	e := startAt(t, w, time.Now().Add(-3*time.Hour), engine.StartRequest{Type: "debug", Context: "bisect the slow build"})
	if _, err := e.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	r := w.run(t, RunOptions{Prompt: "AFTER-CRASH: where were we?"})
	requireOK(t, r)
	w.requirePluginLoaded(t, r)
	report := cairnReport(t, r.FirstMain(t))
	if !regexp.MustCompile(`last change 3h( [0-9]m)? ago`).MatchString(report) {
		t.Errorf("the report does not give the age of the last real change (3h):\n%s", report)
	}
	if !strings.Contains(report, "task t1 was running with no output: back to pending") {
		t.Errorf("the recovery is not reported:\n%s", report)
	}
	if st := w.readState(t); len(st.Tasks) != 1 || st.Tasks[0].Status != "pending" {
		t.Errorf("after recovery the tasks are %+v", st.Tasks)
	}
}

// In claude -p no person can be asked: Claude Code cancels the elicitation at once, and the
// move out of an approval phase is refused with one line saying how a person approves.
func TestToldApprovalRefusedHeadless(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cairnPlugin)
	startAt(t, w, time.Now().Add(-time.Minute), engine.StartRequest{Type: "apex", Context: "add retries"}, "plan").Close()

	w.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("GATE-PROMPT")),
			mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "implement", "from": "plan"})).Named("leave plan"),
		mockapi.On(afterToolResult, mockapi.Text("waiting")).Named("after the refusal"),
	)
	r := w.runScript(t, RunOptions{Prompt: "GATE-PROMPT: the plan is done, move on"})
	trs := r.ToolResults()
	// Claude Code declared elicitation, so Cairn asked; the answer was cancel.
	want := "leaving phase plan needs a person's approval and the prompt was cancelled (claude -p cancels every prompt): a person runs `cairn approve [NOTE]` in the project, then call transition again"
	// Cairn's answer is the first line; Claude Code appends its own note about the schema of a
	// deferred tool called without ToolSearch.
	if len(trs) != 1 || !trs[0].IsError || strings.SplitN(trs[0].Text, "\n", 2)[0] != want {
		t.Fatalf("tool results %+v (text %q), want one error line %q", trs, toolTexts(trs), want)
	}
	if st := w.readState(t); st.State != "plan" {
		t.Errorf("the refused move left the workflow at %s", st.State)
	}
}

func toolTexts(trs []ToolResultEvent) []string {
	var out []string
	for _, tr := range trs {
		out = append(out, tr.Text)
	}
	return out
}
