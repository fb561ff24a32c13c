package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// A person opens a second Claude Code (a new session, not --continue) on the project while the
// first is still in a turn on its workflow. The second is told, in its report, its user
// message and its change's result, that another live session holds the workflow; its change
// makes the workflow its own. The first, when its turn goes on, is told the workflow moved
// under it, and its change is kept with the second's. Once both have exited, a third session
// is told of no live session.
func TestCairnSecondSessionWhileLive(t *testing.T) {
	t.Parallel()
	a := newWorld(t, cairnPlugin)
	b := a.sibling(t)
	aWaits, bDone := make(chan struct{}), make(chan struct{})
	a.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-SESSION")),
			mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "apex", "context": seedContext})).Named("start"),
		mockapi.On(afterToolResult, mockapi.Text("started")).Named("end of turn 1"),
		mockapi.Step{Name: "wait for the second session", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-GOES-ON")),
			Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
				close(aWaits)
				select {
				case <-bDone:
				case <-time.After(runTimeout / 2):
				}
				return mockapi.ToolUse(cairnTool("update_task"), map[string]any{"id": "t1", "status": "running"})
			}},
		mockapi.On(afterToolResult, mockapi.Text("first done")).Named("end of turn 2"),
	)
	b.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-SESSION")),
			mockapi.ToolUse(cairnTool("transition"), map[string]any{"to": "plan"})).Named("second session moves"),
		mockapi.On(afterToolResult, mockapi.Text("second done")).Named("second session ends"),
	)

	var ra *Run
	var errA error
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		ra, errA = a.tryRun(t, RunOptions{Inputs: []string{"FIRST-SESSION: start", "FIRST-GOES-ON: go on"}})
	}()
	select {
	case <-aWaits:
	case <-aDone:
		t.Fatalf("the first session ended before its second turn: %v", errA)
	}
	rb := b.run(t, RunOptions{Prompt: "SECOND-SESSION: where are we?"})
	close(bDone)
	<-aDone
	if errA != nil {
		t.Fatalf("the first session: %v\nstderr:\n%s", errA, ra.Stderr)
	}
	requireOK(t, ra)
	requireOK(t, rb)
	a.requirePluginLoaded(t, ra)
	b.requirePluginLoaded(t, rb)
	requireScriptUsed(t, a)
	requireScriptUsed(t, b)
	if ra.SessionID() == "" || rb.SessionID() == ra.SessionID() {
		t.Fatalf("the second client's session %q, want a new one beside %q", rb.SessionID(), ra.SessionID())
	}

	// The second session: told in its report, its user message, and at its transition.
	if report := cairnReport(t, rb.FirstMain(t)); !strings.Contains(report, liveWarning) {
		t.Errorf("the second session's report does not say another live session holds the workflow:\n%s", report)
	}
	if out := parseHookOutput(t, requireHooksOK(t, rb, "SessionStart")[0]); !strings.Contains(out.SystemMessage, liveWarning) {
		t.Errorf("the second session's user was not told: systemMessage %q", out.SystemMessage)
	}
	if trs := requireToolResultsOK(t, rb, 1); !strings.Contains(trs[0].Text, liveWarning) {
		t.Errorf("the second session's transition does not warn of the live session: %s", trs[0].Text)
	}
	for _, h := range requireHooksOK(t, rb, "Stop") {
		if out := parseHookOutput(t, h); out.Decision != "" || out.SystemMessage != "" {
			t.Errorf("the second session's Stop printed %+v", out)
		}
	}
	// The first session: its next call says the workflow moved under it, and the change is kept.
	trs := requireToolResultsOK(t, ra, 2)
	if !strings.Contains(trs[1].Text, `"notice":"Notice: another session changed workflow `) || !strings.Contains(trs[1].Text, "it is now at phase plan") {
		t.Errorf("the first session was not told the second moved the workflow: %s", trs[1].Text)
	}
	st := a.readState(t)
	if st.State != "plan" || len(st.Tasks) == 0 || st.Tasks[0].Status != "running" {
		t.Errorf("on disk: phase %s, tasks %+v; want plan with t1 running", st.State, st.Tasks)
	}
	if st.Owner == nil || st.Owner.SessionID != ra.SessionID() {
		t.Errorf("owner %+v, want the first session %s, which changed it last", st.Owner, ra.SessionID())
	}

	// Both have exited: a third session is told of no live session.
	a.Mock.Script(mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("THIRD-SESSION")), mockapi.Text("third done")).Named("third"))
	rc := a.run(t, RunOptions{Prompt: "THIRD-SESSION: where are we?"})
	requireOK(t, rc)
	requireScriptUsed(t, a)
	report := cairnReport(t, rc.FirstMain(t))
	if strings.Contains(report, liveWarning) || !strings.Contains(report, "phase plan (in_progress)") {
		t.Errorf("after both sessions exited the report is:\n%s", report)
	}
	if out := parseHookOutput(t, requireHooksOK(t, rc, "SessionStart")[0]); out.SystemMessage != "" {
		t.Errorf("after both sessions exited the user was told %q", out.SystemMessage)
	}
}

// A person opens a second Claude Code on the project while the first is in one long turn (a
// 15-minute build) on a task it set running: that turn's end, which keeps the owner's heartbeat,
// has not come, so the owner has been quiet past the ten-minute live window. The second
// session's start took the first as gone: it moved the running task back to pending and made
// the workflow its own, to run the task again beside the first. Now, the first client being
// in its session still, the second is told another live session works on the workflow, and
// the task stays running, the first's.
func TestCairnSecondSessionBesideALongTurn(t *testing.T) {
	t.Parallel()
	a := newWorld(t, cairnPlugin)
	b := a.sibling(t)
	aWaits, bDone := make(chan struct{}), make(chan struct{})
	a.Mock.Script(mockapi.Step{Name: "one long turn", When: mockapi.All(mockapi.IsMain, mockapi.LastUserContains("FIRST-SESSION")),
		Reply: func(*mockapi.MessagesRequest) mockapi.Reply {
			close(aWaits)
			select {
			case <-bDone:
			case <-time.After(runTimeout / 2):
			}
			return mockapi.Text("built")
		}})
	b.Mock.Script(mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("SECOND-SESSION")), mockapi.Text("second done")).Named("second session"))

	var ra *Run
	var errA error
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		ra, errA = a.tryRun(t, RunOptions{Prompt: "FIRST-SESSION: build"})
	}()
	select {
	case <-aWaits:
	case <-aDone:
		t.Fatalf("the first session ended before its turn: %v", errA)
	}
	// The first client's session, as its SessionStart recorded it; its workflow and running
	// task, set by that session 15 minutes ago, when its long turn began.
	recs := a.clientRecords()
	if len(recs) != 1 {
		close(bDone)
		t.Fatalf("session records %v, want the first client's", recs)
	}
	var first engine.Session
	readJSON(t, recs[0], &first)
	env := map[string]string{"HOME": a.Home, "CLAUDE_PROJECT_DIR": a.Project}
	en, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }, WorkDir: a.Project,
		Now: func() time.Time { return time.Now().Add(-15 * time.Minute) }, SessionID: first.SessionID, PID: first.PID,
		Actor: "cli", YAML: yamldoc.Codec{}})
	if err == nil {
		_, err = en.Start(engine.StartRequest{Type: "apex", Context: seedContext})
	}
	if err == nil {
		_, err = en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"})
	}
	if en != nil {
		en.Close()
	}
	if err != nil {
		close(bDone)
		t.Fatalf("the first session's workflow: %v", err)
	}

	rb := b.run(t, RunOptions{Prompt: "SECOND-SESSION: where are we?"})
	st := a.readState(t)
	close(bDone)
	<-aDone
	if errA != nil {
		t.Fatalf("the first session: %v\nstderr:\n%s", errA, ra.Stderr)
	}
	requireOK(t, ra)
	requireOK(t, rb)
	b.requirePluginLoaded(t, rb)
	requireScriptUsed(t, b)
	if len(st.Tasks) != 1 || st.Tasks[0].Status != "running" || st.Owner == nil || st.Owner.SessionID != first.SessionID {
		t.Errorf("after the second start: tasks %+v, owner %+v; want t1 running, the first session's", st.Tasks, st.Owner)
	}
	report := cairnReport(t, rb.FirstMain(t))
	if !strings.Contains(report, liveWarning) || strings.Contains(report, "back to pending") {
		t.Errorf("the second session's report:\n%s", report)
	}
	if out := parseHookOutput(t, requireHooksOK(t, rb, "SessionStart")[0]); !strings.Contains(out.SystemMessage, liveWarning) {
		t.Errorf("the second session's user was not told: systemMessage %q", out.SystemMessage)
	}
}
