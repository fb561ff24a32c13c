package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A finding given twice in one set_enforcement list (two reviews pasted together, a retry
// appended to its first try) was stored twice: "2 HIGH violations" for one, the Stop hook's
// reason listing it twice. It is refused, naming the two by position (a code may hold
// anything), and nothing changes; the same code with other details is another finding.
func TestSetEnforcementRefusesAFindingTwice(t *testing.T) {
	t.Parallel()
	first := engine.Violation{Code: "V-TEST-03", Severity: "HIGH", Details: "no test for retry"}
	for _, tc := range []struct {
		name    string
		second  engine.Violation
		refused bool
	}{
		{"same", first, true},
		{"code in other case", engine.Violation{Code: "v-test-03", Severity: "HIGH", Details: "no test for retry"}, true},
		{"other severity", engine.Violation{Code: "V-TEST-03", Severity: "low", Details: "no test for retry"}, true},
		{"other details", engine.Violation{Code: "V-TEST-03", Severity: "HIGH", Details: "no test for timeout"}, false},
		{"other code", engine.Violation{Code: "V-TEST-04", Severity: "HIGH", Details: "no test for retry"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, en := startApex(t)
			res, err := en.SetEnforcement([]engine.Violation{first, {Code: "V-DOC-01", Severity: "LOW", Details: "x"}, tc.second})
			if !tc.refused {
				if err != nil || !strings.HasPrefix(res.Message, "2 HIGH violations") {
					t.Fatalf("two findings: %v %+v", err, res)
				}
				return
			}
			if err == nil {
				t.Fatalf("the same finding twice was accepted: %s", res.Message)
			}
			if want := "violations 1 and 3 are the same finding"; !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
			if strings.Contains(err.Error(), "V-TEST") {
				t.Errorf("refusal repeats the code: %v", err)
			}
			if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); out.Block {
				t.Errorf("the refused list was stored: %s", out.Reason)
			}
		})
	}
}
