package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A Stop block's reason shows at most five violations and counts the rest ("+N more"); the
// agent is asked to deal with all of them, so the reason says where the whole list is, as the
// session-start report does.
func TestStopReasonSaysWhereTheRestIs(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	var vs []engine.Violation
	for i := range 40 {
		vs = append(vs, engine.Violation{Code: fmt.Sprintf("V-%d", i), Severity: "HIGH", Details: strings.Repeat("a long detail ", 20)})
	}
	must(en.SetEnforcement(vs))(t)
	out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
	if !out.Block || !strings.Contains(out.Reason, "blocking: +") {
		t.Fatalf("want a block that leaves violations out: %+v", out)
	}
	lines := strings.Split(strings.TrimSuffix(out.Reason, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Next: Fix the blocking violations") || !strings.HasSuffix(last, " Details: "+engine.ToolPrefix+"resume_check.") {
		t.Errorf("the reason's last line does not say where the whole list is: %q", last)
	}
}

// blockStep is the last line of the Stop hook's reason (its one step) with n HIGH violations.
func blockStep(t *testing.T, n int) string {
	t.Helper()
	_, en := startApex(t)
	var vs []engine.Violation
	for i := range n {
		vs = append(vs, engine.Violation{Code: fmt.Sprintf("V-%d", i), Severity: "HIGH", Details: "open"})
	}
	must(en.SetEnforcement(vs))(t)
	out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
	lines := strings.Split(strings.TrimSuffix(out.Reason, "\n"), "\n")
	return lines[len(lines)-1]
}

// The Stop hook's reason reaches the model outside any Cairn tool result, so it names the tool
// it asks for as the model sees it, mcp__plugin_cairn_cairn__set_enforcement, as it names
// resume_check; before, it named set_enforcement bare beside the prefixed resume_check.
func TestStopReasonNamesToolsAsTheModelSeesThem(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2} {
		last := blockStep(t, n)
		if !strings.Contains(last, " with "+engine.ToolPrefix+"set_enforcement. ") {
			t.Errorf("%d violations: the reason does not name the tool as the model sees it: %q", n, last)
		}
	}
}

// The reason's one step ends in taking what was fixed out of the list, whichever way the agent
// deals with the violations. It read "fix them, or tell the user why not and record the
// current list": the record went with not fixing, where the list stands as it is, and fixing
// left the fixed violations on record as blocking, shown as open to every later session.
// set_enforcement replaces the whole list, so the step says to take out what was fixed, not to
// record the violations named here (the LOW ones are not).
func TestStopReasonTakesTheFixedOnesOut(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2} {
		last := blockStep(t, n)
		want := fmt.Sprintf("Next: Fix the blocking violation%s above, or tell the user why you cannot; then, before finishing, take what you fixed out of the list with %sset_enforcement. ",
			map[bool]string{true: "s"}[n > 1], engine.ToolPrefix)
		if !strings.HasPrefix(last, want) {
			t.Errorf("%d violations: the reason's step is %q, want it to start %q", n, last, want)
		}
	}
}

// A continuation Cairn did not ask for (another plugin's Stop hook blocked, so Claude Code
// runs the next Stop with stop_hook_active) is not the answer to a question Cairn asked turns
// ago: a set of violations recorded since is asked about at the next ordinary Stop, not taken
// as answered. Nor is another session's continuation the answer to this session's question.
func TestStopOtherContinuationIsNoAnswer(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	must(en.SetEnforcement([]engine.Violation{{Code: "V-TEST-03", Severity: "HIGH", Details: "no test for retry"}}))(t)
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); !out.Block {
		t.Fatalf("first stop: %+v", out)
	}
	// Cairn's own continuation: its end is the answer, and the next turn is not asked.
	must(en.Stop(engine.StopInput{SessionID: "s1", StopHookActive: true}))(t)
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); out.Block {
		t.Fatalf("asked again after the answer: %s", out.Reason)
	}
	for _, tc := range []struct{ code, continued string }{
		{"V-SEC-01", "s1"}, // a later turn of the session Cairn asked
		{"V-SEC-02", "s2"}, // another session
	} {
		must(en.SetEnforcement([]engine.Violation{{Code: tc.code, Severity: "CRITICAL", Details: "token in log"}}))(t)
		if out := must(en.Stop(engine.StopInput{SessionID: tc.continued, StopHookActive: true}))(t); out.Block {
			t.Fatalf("%s: blocked while stop_hook_active", tc.code)
		}
		if out := must(en.Stop(engine.StopInput{SessionID: tc.continued}))(t); !out.Block || !strings.Contains(out.Reason, tc.code) {
			t.Errorf("%s: a set recorded after the last answer was taken as answered by a continuation Cairn did not ask for: %+v", tc.code, out)
		}
		must(en.Stop(engine.StopInput{SessionID: tc.continued, StopHookActive: true}))(t)
	}
}
