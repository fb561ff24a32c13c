package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestRecordValidate(t *testing.T) {
	at := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	valid := func() *workflow.Record {
		return &workflow.Record{Version: "2.0", WorkflowID: "apex-1", Type: "apex", State: "plan",
			PhaseStatus: workflow.PhaseInProgress, Status: workflow.StatusActive, TTL: "24h",
			CreatedAt: at, UpdatedAt: at, Revision: 1,
			Phases:    map[string]workflow.Phase{"analyze": {Completed: true}},
			History:   []workflow.HistoryEntry{{To: "analyze", At: at}, {From: "analyze", To: "plan", At: at}},
			Tasks:     []workflow.Task{{ID: "t1", Status: workflow.TaskDone}},
			Approvals: []workflow.Approval{{Phase: "plan"}}}
	}
	tests := []struct {
		name   string
		change func(r *workflow.Record)
		want   string // "" = valid
	}{
		{"valid", func(*workflow.Record) {}, ""},
		{"version 1", func(r *workflow.Record) { r.Version = "1.0" }, "version"},
		{"bad id", func(r *workflow.Record) { r.WorkflowID = "../x" }, "workflow_id"},
		{"bad type", func(r *workflow.Record) { r.Type = "Apex Flow" }, "type"},
		{"no state", func(r *workflow.Record) { r.State = "" }, "state"},
		{"unknown phase status", func(r *workflow.Record) { r.PhaseStatus = "paused" }, "phase_status"},
		{"unknown status", func(r *workflow.Record) { r.Status = "" }, "status"},
		{"no created_at", func(r *workflow.Record) { r.CreatedAt = time.Time{} }, "created_at"},
		{"revision 0", func(r *workflow.Record) { r.Revision = 0 }, "revision"},
		{"bad ttl", func(r *workflow.Record) { r.TTL = "soon" }, "ttl"},
		{"bad phase name", func(r *workflow.Record) { r.Phases["Bad Name"] = workflow.Phase{} }, "phases"},
		{"history without time", func(r *workflow.Record) { r.History[1].At = time.Time{} }, "history[1]"},
		{"history to nowhere", func(r *workflow.Record) { r.History[0].To = "" }, "history[0].to"},
		{"task without id", func(r *workflow.Record) { r.Tasks[0].ID = "" }, "tasks[0]"},
		{"task status", func(r *workflow.Record) { r.Tasks[0].Status = "later" }, "tasks[0]"},
		{"approval phase", func(r *workflow.Record) { r.Approvals[0].Phase = "" }, "approvals[0]"},
		{"owner pid", func(r *workflow.Record) { r.Owner = &workflow.Owner{PID: -1} }, "owner.pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			tt.change(r)
			err := r.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want an error about %s", err, tt.want)
			}
		})
	}
}
