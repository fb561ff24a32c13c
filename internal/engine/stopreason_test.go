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

// The Stop hook's reason reaches the model outside any Cairn tool result, so it names the tool
// it asks for as the model sees it, mcp__plugin_cairn_cairn__set_enforcement, as it names
// resume_check; before, it named set_enforcement bare beside the prefixed resume_check.
func TestStopReasonNamesToolsAsTheModelSeesThem(t *testing.T) {
	for _, n := range []int{1, 2} {
		_, en := startApex(t)
		var vs []engine.Violation
		for i := range n {
			vs = append(vs, engine.Violation{Code: fmt.Sprintf("V-%d", i), Severity: "HIGH", Details: "open"})
		}
		must(en.SetEnforcement(vs))(t)
		out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
		lines := strings.Split(strings.TrimSuffix(out.Reason, "\n"), "\n")
		last := lines[len(lines)-1]
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
	for _, n := range []int{1, 2} {
		_, en := startApex(t)
		var vs []engine.Violation
		for i := range n {
			vs = append(vs, engine.Violation{Code: fmt.Sprintf("V-%d", i), Severity: "HIGH", Details: "open"})
		}
		must(en.SetEnforcement(vs))(t)
		out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
		lines := strings.Split(strings.TrimSuffix(out.Reason, "\n"), "\n")
		last := lines[len(lines)-1]
		want := fmt.Sprintf("Next: Fix the blocking violation%s above, or tell the user why you cannot; then, before finishing, take what you fixed out of the list with %sset_enforcement. ",
			map[bool]string{true: "s"}[n > 1], engine.ToolPrefix)
		if !strings.HasPrefix(last, want) {
			t.Errorf("%d violations: the reason's step is %q, want it to start %q", n, last, want)
		}
	}
}
