package mcptools_test

import (
	"strings"
	"testing"
)

// TestSetEnforcementBlockingSaysTheStep: set_enforcement recording blocking findings said only
// "1 HIGH violation (blocking)", with no step (resume_check says it, the Stop hook holds the
// session for it); its structured next now says it, as resume_check's does. Findings that
// block nothing, and an empty list, have none.
func TestSetEnforcementBlockingSaysTheStep(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	for _, tc := range []struct{ args, next string }{
		{`{"violations":[{"code":"V1","severity":"HIGH","details":"d"}]}`, "Fix the blocking violation, then call set_enforcement with what is still open"},
		{`{"violations":[{"code":"V1","severity":"HIGH","details":"d"}]}`, "Fix the blocking violation"}, // already on record
		{`{"violations":[{"code":"V1","severity":"CRITICAL","details":"d"},{"code":"V2","severity":"HIGH","details":"e"},{"code":"V3","severity":"LOW","details":"f"}]}`, "Fix the 2 blocking violations"},
		{`{"violations":[{"code":"V3","severity":"LOW","details":"f"}]}`, ""},
		{`{"violations":[]}`, ""},
	} {
		res := mustOK(t, c, "set_enforcement", tc.args)
		next, _ := structured(t, res)["next"].(string)
		if tc.next == "" && next != "" || !strings.Contains(next, tc.next) {
			t.Errorf("set_enforcement(%s): next %q, want %q", tc.args, next, tc.next)
		}
		if !strings.Contains(text(res), tc.next) {
			t.Errorf("set_enforcement(%s): text %q lacks %q", tc.args, text(res), tc.next)
		}
	}
}
