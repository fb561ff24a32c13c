package workflow_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestEnforcement(t *testing.T) {
	v := func(code, sev string) workflow.Violation {
		return workflow.Violation{Code: code, Severity: workflow.Severity(sev), Details: "d"}
	}
	for _, tc := range []struct {
		name     string
		vs       []workflow.Violation
		blocking bool
		summary  string
	}{
		{"none", nil, false, "no violations"},
		{"one-high", []workflow.Violation{v("V-TEST-03", "HIGH")}, true, "1 HIGH violation (blocking)"},
		{"critical-lowercase", []workflow.Violation{v("V1", "critical")}, true, "1 CRITICAL violation (blocking)"},
		{"medium-low-info", []workflow.Violation{v("V1", "MEDIUM"), v("V2", "LOW"), v("V3", "INFO"), v("V4", "LOW")}, false, "1 MEDIUM, 2 LOW, 1 INFO violations"},
		{"two-high", []workflow.Violation{v("V1", "high"), v("V2", "HIGH")}, true, "2 HIGH violations (blocking)"},
		// Only the CRITICAL and HIGH ones block: the summary must not read as if the LOW did.
		{"mixed", []workflow.Violation{v("V1", "LOW"), v("V2", "CRITICAL"), v("V3", "HIGH")}, true, "1 CRITICAL, 1 HIGH violations (blocking) and 1 LOW violation"},
		{"high-low", []workflow.Violation{v("V1", "HIGH"), v("V2", "LOW"), v("V3", "INFO")}, true, "1 HIGH violation (blocking) and 1 LOW, 1 INFO violations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := workflow.NewEnforcement(tc.vs)
			if err != nil || e.Blocking != tc.blocking || e.Summary != tc.summary {
				t.Fatalf("got %v %q %v", e.Blocking, e.Summary, err)
			}
			r := &workflow.Record{Status: workflow.StatusActive, Enforcement: &e}
			if r.Blocking() != tc.blocking {
				t.Fatal("Record.Blocking disagrees")
			}
			if bv := r.BlockingViolations(); len(bv) > 0 && bv[0].Severity != workflow.Critical && tc.name == "mixed" {
				t.Fatalf("most serious first: %+v", bv)
			}
		})
	}
	if _, err := workflow.NewEnforcement([]workflow.Violation{v("V1", "URGENT")}); err == nil {
		t.Fatal("unknown severity accepted")
	}
	if _, err := workflow.NewEnforcement([]workflow.Violation{v("", "LOW")}); err == nil {
		t.Fatal("empty code accepted")
	}
}

func TestEnforcementMissingFieldAndStoredFlag(t *testing.T) {
	var r workflow.Record
	_ = json.Unmarshal([]byte(`{"status":"active","state":"review","type":"apex"}`), &r)
	if r.Blocking() || r.BlockingViolations() != nil || workflow.StopShouldBlock(nil, &r) {
		t.Fatal("a missing enforcement field must mean no violations")
	}
	// A stored blocking flag that disagrees with the violations is not trusted.
	_ = json.Unmarshal([]byte(`{"status":"active","enforcement":{"violations":[{"code":"V","severity":"high"}],"blocking":false}}`), &r)
	if !r.Blocking() {
		t.Fatal("HIGH violation with blocking:false stored must still block")
	}
	def := mustDef(t, "apex")
	if !workflow.StopShouldBlock(def, &r) {
		t.Fatal("Stop hook should block")
	}
	quiet := *def
	quiet.Blocking = false
	if workflow.StopShouldBlock(&quiet, &r) {
		t.Fatal("blocking: false in the definition should turn Stop-hook blocking off")
	}
}

func TestSetEnforcement(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	res, err := workflow.SetEnforcement(r, []workflow.Violation{{Code: "V-TEST-03", Severity: "high", Details: "no test"}}, t0.Add(time.Hour), alice)
	if err != nil || !res.Record.Enforcement.Blocking || res.Record.Enforcement.Violations[0].Severity != workflow.High {
		t.Fatalf("%v %+v", err, res.Record.Enforcement)
	}
	out, _ := json.Marshal(res.Record.Enforcement)
	if string(out) != `{"violations":[{"code":"V-TEST-03","severity":"HIGH","details":"no test"}],"blocking":true,"summary":"1 HIGH violation (blocking)"}` {
		t.Fatalf("json %s", out)
	}
	cleared, _ := workflow.SetEnforcement(res.Record, nil, t0.Add(2*time.Hour), alice)
	out, _ = json.Marshal(cleared.Record.Enforcement)
	if cleared.Record.Blocking() || string(out) != `{"violations":[],"blocking":false,"summary":"no violations"}` {
		t.Fatalf("cleared %s", out)
	}
}

// An agent that retries set_enforcement (after a timeout, a compaction) sends the same list
// again: that is no change, and must not bump the revision nor take the workflow's ownership.
// Severities in another letter case are the same list.
func TestSetEnforcementAgainChangesNothing(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	vs := []workflow.Violation{{Code: "V-TEST-03", Severity: "high", Details: "no test"}, {Code: "V-DOC-01", Severity: "LOW"}}
	first, err := workflow.SetEnforcement(r, vs, t0.Add(time.Hour), alice)
	if err != nil || !first.Changed {
		t.Fatalf("first: %v %+v", err, first)
	}
	bob := workflow.Actor{SessionID: "sess-bob", PID: 202}
	again, err := workflow.SetEnforcement(first.Record, []workflow.Violation{{Code: "V-TEST-03", Severity: "HIGH", Details: "no test"}, {Code: "V-DOC-01", Severity: "low"}}, t0.Add(2*time.Hour), bob)
	if err != nil || again.Changed || again.Event != workflow.EventNone {
		t.Fatalf("the same list again: err %v, changed %v, event %s; want no change", err, again.Changed, again.Event)
	}
	if again.Record.Owner.SessionID != alice.SessionID || !again.Record.UpdatedAt.Equal(first.Record.UpdatedAt) {
		t.Fatalf("the same list again stamped the record: owner %s, updated %s", again.Record.Owner.SessionID, again.Record.UpdatedAt)
	}
	for _, other := range [][]workflow.Violation{
		{{Code: "V-TEST-03", Severity: "high", Details: "no test"}},
		{{Code: "V-TEST-03", Severity: "high", Details: "no tests"}, {Code: "V-DOC-01", Severity: "LOW"}},
		{{Code: "V-DOC-01", Severity: "LOW"}, {Code: "V-TEST-03", Severity: "high", Details: "no test"}},
		nil,
	} {
		if res, err := workflow.SetEnforcement(first.Record, other, t0.Add(2*time.Hour), alice); err != nil || !res.Changed {
			t.Errorf("a different list %v: err %v, changed %v; want a change", other, err, res.Changed)
		}
	}
	cleared, _ := workflow.SetEnforcement(first.Record, nil, t0.Add(2*time.Hour), alice)
	if res, err := workflow.SetEnforcement(cleared.Record, []workflow.Violation{}, t0.Add(3*time.Hour), alice); err != nil || res.Changed {
		t.Errorf("clearing again: err %v, changed %v; want no change", err, res.Changed)
	}
}
