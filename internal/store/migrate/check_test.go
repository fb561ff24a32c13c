package migrate

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkRecord must catch what it claims to; otherwise Convert's postcondition and the fuzz
// target prove nothing. Each case breaks one field of a good record.
func TestCheckRecordRejects(t *testing.T) {
	good, err := Convert(Seed002, readFixture(t, "testdata/seed002/implementation.json"),
		Extra{Name: "phase.json", Execution: readFixture(t, "testdata/seed002/implementation.execution.json")}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRecord(good); err != nil {
		t.Fatalf("good record refused: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		msg    string
	}{
		{"version 1.0", func(m map[string]any) { m["version"] = "1.0" }, "version"},
		{"no workflow_id", func(m map[string]any) { delete(m, "workflow_id") }, "missing workflow_id"},
		{"id with a slash", func(m map[string]any) { m["workflow_id"] = "a/b" }, "workflow_id"},
		{"id too long", func(m map[string]any) { m["workflow_id"] = strings.Repeat("a", 65) }, "workflow_id"},
		{"upper-case type", func(m map[string]any) { m["type"] = "APEX" }, "type"},
		{"state with a dot", func(m map[string]any) { m["state"] = "a.b" }, "state"},
		{"phase_status", func(m map[string]any) { m["phase_status"] = "done" }, "phase_status"},
		{"status", func(m map[string]any) { m["status"] = "paused" }, "status"},
		{"phases array", func(m map[string]any) { m["phases"] = []any{} }, "phases"},
		{"phase name", func(m map[string]any) { m["phases"] = map[string]any{"Plan": map[string]any{"completed": true}} }, "phases"},
		{"phase completed missing", func(m map[string]any) { m["phases"] = map[string]any{"plan": map[string]any{}} }, "missing completed"},
		{"phase completed string", func(m map[string]any) { m["phases"] = map[string]any{"plan": map[string]any{"completed": "yes"}} }, "boolean"},
		{"phase time", func(m map[string]any) {
			m["phases"] = map[string]any{"plan": map[string]any{"completed": true, "completed_at": "yesterday"}}
		}, "completed_at"},
		{"task status", func(m map[string]any) {
			m["tasks"] = []any{map[string]any{"id": "t", "status": "skipped", "attempts": 0}}
		}, "tasks"},
		{"task attempts", func(m map[string]any) {
			m["tasks"] = []any{map[string]any{"id": "t", "status": "done", "attempts": -1}}
		}, "attempts"},
		{"task id empty", func(m map[string]any) { m["tasks"] = []any{map[string]any{"id": "", "status": "done", "attempts": 0}} }, "empty id"},
		{"approval phase", func(m map[string]any) { m["approvals"] = []any{map[string]any{"approved_at": "2026-02-11T09:00:00Z"}} }, "missing phase"},
		{"history time", func(m map[string]any) { m["history"] = []any{map[string]any{"from": "", "to": "a", "at": 5}} }, "at"},
		{"artifacts number", func(m map[string]any) { m["artifacts"] = []any{1} }, "artifacts"},
		{"vars number", func(m map[string]any) { m["vars"] = map[string]any{"A": 1} }, "vars"},
		{"enforcement blocking", func(m map[string]any) { m["enforcement"] = map[string]any{"violations": []any{}, "blocking": "yes"} }, "blocking"},
		{"ttl", func(m map[string]any) { m["ttl"] = "7d" }, "ttl"},
		{"ttl zero", func(m map[string]any) { m["ttl"] = "0s" }, "ttl"},
		{"created_at offset", func(m map[string]any) { m["created_at"] = "2026-02-11T09:00:00+01:00" }, "not UTC"},
		{"updated_at missing", func(m map[string]any) { delete(m, "updated_at") }, "missing updated_at"},
		{"revision 0", func(m map[string]any) { m["revision"] = 0 }, "revision"},
		{"revision fraction", func(m map[string]any) { m["revision"] = 1.5 }, "revision"},
		{"interruption_safe string", func(m map[string]any) { m["interruption_safe"] = "true" }, "interruption_safe"},
		{"owner pid", func(m map[string]any) { m["owner"] = map[string]any{"pid": "x"} }, "owner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(good, &m); err != nil {
				t.Fatal(err)
			}
			tc.mutate(m)
			bad, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			err = checkRecord(bad)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("checkRecord = %v, want an error saying %q", err, tc.msg)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"version":"2.0"}`, `{"a":1,"a":2}`} {
		if checkRecord([]byte(bad)) == nil {
			t.Errorf("checkRecord(%s) accepted it", bad)
		}
	}
}
