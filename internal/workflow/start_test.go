package workflow_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestStart(t *testing.T) {
	def := mustDef(t, "dotagent")
	res, err := workflow.Start(def, nil, workflow.StartRequest{Type: "DOTAGENT", Context: "  build\nthe  thing ", Scope: "standard"}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if !regexp.MustCompile(`^dotagent-20261122T173000Z-[0-9a-f]{4}$`).MatchString(r.WorkflowID) {
		t.Fatalf("generated id %q", r.WorkflowID)
	}
	if err := workflow.ValidID(r.WorkflowID); err != nil {
		t.Fatal(err)
	}
	if r.Version != "2.0" || r.Type != "dotagent" || r.Context != "build the thing" || r.State != "requirements" ||
		r.Status != workflow.StatusActive || r.PhaseStatus != workflow.PhaseInProgress || r.TTL != "24h" ||
		!r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(t0) || r.Owner.SessionID != "sess-alice" || r.Owner.PID != 101 ||
		!*r.InterruptionSafe || r.Vars != nil {
		t.Fatalf("record %+v", r)
	}
	// requirements is a gate: starting in it requests its approval.
	if len(r.Approvals) != 1 || r.Approvals[0].Phase != "requirements" || !r.Approvals[0].Open() {
		t.Fatalf("approvals %+v", r.Approvals)
	}
	if res.Archive != nil || !res.Changed || res.Event != workflow.EventStart {
		t.Fatalf("result %+v", res)
	}
}

func TestStartRefusesSecondActive(t *testing.T) {
	def := mustDef(t, "apex")
	cur := mustStart(t, def)
	_, err := workflow.Start(def, cur, workflow.StartRequest{Context: "other"}, t0.Add(time.Hour), alice)
	var ae *workflow.ActiveError
	if !errors.As(err, &ae) || ae.WorkflowID != "apex-1" || !strings.Contains(err.Error(), "replace") {
		t.Fatalf("err = %v", err)
	}
	res, err := workflow.Start(def, cur, workflow.StartRequest{Context: "other", ID: "apex-2", Replace: true}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.Archive == nil || res.Archive.WorkflowID != "apex-1" || res.Archive.Status != workflow.StatusArchived ||
		!strings.Contains(res.Archive.History[len(res.Archive.History)-1].Note, "replaced by apex-2") {
		t.Fatalf("archive %+v", res.Archive)
	}
	if cur.Status != workflow.StatusActive {
		t.Fatal("Start modified the current record")
	}
	if res.Record.WorkflowID != "apex-2" {
		t.Fatal(res.Record.WorkflowID)
	}
	// A finished current record is handed back for archiving too, without needing replace.
	done, _ := workflow.Complete(cur, "ok", t0, alice)
	res, err = workflow.Start(def, done.Record, workflow.StartRequest{Context: "next", ID: "apex-3"}, t0.Add(time.Hour), alice)
	if err != nil || res.Archive == nil || res.Archive.Status != workflow.StatusCompleted {
		t.Fatalf("after completion: %v %+v", err, res.Archive)
	}
}

func TestStartValidation(t *testing.T) {
	def := mustDef(t, "apex")
	for name, req := range map[string]workflow.StartRequest{
		"empty context":  {Context: " \n "},
		"bad id":         {Context: "x", ID: "../etc"},
		"device id":      {Context: "x", ID: "NUL.json"},
		"dotdot id":      {Context: "x", ID: "a..b"},
		"bad ttl":        {Context: "x", TTL: "1w"},
		"type mismatch":  {Context: "x", Type: "debug"},
		"id too long":    {Context: "x", ID: strings.Repeat("a", 101)},
		"trailing dot":   {Context: "x", ID: "abc."},
		"leading hyphen": {Context: "x", ID: "-abc"},
	} {
		if _, err := workflow.Start(def, nil, req, t0, alice); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	res, err := workflow.Start(def, nil, workflow.StartRequest{Context: "x", TTL: "7d"}, t0, alice)
	if err != nil || res.Record.TTL != "7d" {
		t.Fatalf("ttl override: %v", err)
	}
}

func TestNewID(t *testing.T) {
	id, err := workflow.NewID("APEX", t0.In(time.FixedZone("x", 3600)), bytes.NewReader([]byte{0x3f, 0x9a}))
	if err != nil || id != "apex-20261122T173000Z-3f9a" {
		t.Fatalf("id %q %v", id, err)
	}
	if _, err := workflow.NewID("apex", t0, bytes.NewReader(nil)); err == nil {
		t.Fatal("no randomness accepted")
	}
}

func TestSmallOperations(t *testing.T) {
	def := mustDef(t, "coordinate")
	r := mustStart(t, def)
	res, err := workflow.SetVar(r, "PLAN_PATH", "/p/plan.md", t0.Add(time.Minute), alice)
	if err != nil || !res.Changed || res.Record.Vars["PLAN_PATH"] != "/p/plan.md" || !res.Record.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("SetVar: %v %+v", err, res.Record)
	}
	again, _ := workflow.SetVar(res.Record, "PLAN_PATH", "/p/plan.md", t0.Add(2*time.Minute), alice)
	if again.Changed {
		t.Fatal("setting the same value changed the record")
	}
	if _, err := workflow.SetVar(r, "bad-name", "v", t0, alice); err == nil {
		t.Fatal("bad var name accepted")
	}
	a, err := workflow.AddArtifacts(r, []string{"r1.md", "r1.md", "r2.md"}, t0, alice)
	if err != nil || len(a.Record.Artifacts) != 2 {
		t.Fatalf("AddArtifacts %v %v", err, a.Record.Artifacts)
	}
	if again, _ := workflow.AddArtifacts(a.Record, []string{"r2.md"}, t0, alice); again.Changed {
		t.Fatal("known artifact changed the record")
	}
	// Artifacts (a sync replays them) have the outputs' limit.
	many := make([]string, 501)
	for i := range many {
		many[i] = fmt.Sprintf("out/%03d.md", i)
	}
	if _, err := workflow.AddArtifacts(r, many, t0, alice); err == nil || !strings.Contains(err.Error(), "artifacts not added") || !strings.Contains(err.Error(), "500 outputs") {
		t.Fatalf("501 artifacts: %v; want a refusal with the limit", err)
	}
	ps, err := workflow.SetPhaseStatus(r, workflow.PhaseBlocked, t0, alice)
	if err != nil || ps.Record.PhaseStatus != workflow.PhaseBlocked {
		t.Fatal(err)
	}
	if _, err := workflow.SetPhaseStatus(r, "stuck", t0, alice); err == nil {
		t.Fatal("bad phase status accepted")
	}
}

// A context or a scope is refused past the start_workflow tool's own limits, from any caller
// (cairn start has no other), before anything changes: not even a replace archives the active
// workflow. The limits count characters after the text is made one line.
func TestStartRefusesLongText(t *testing.T) {
	def := mustDef(t, "apex")
	for _, tt := range []struct {
		name           string
		context, scope string
		refused        string // "" when started
	}{
		{"context at the limit", strings.Repeat("é", workflow.MaxContextRunes), "", ""},
		{"context folded to the limit", strings.Repeat("a\n", workflow.MaxContextRunes/2) + "  ", "", ""},
		{"context over", strings.Repeat("a", workflow.MaxContextRunes+1), "", fmt.Sprintf("the context is %d characters, the most is %d; nothing was changed", workflow.MaxContextRunes+1, workflow.MaxContextRunes)},
		{"context of 100 KB", strings.Repeat("word ", 20_000), "", "the context is 99999 characters"},
		{"scope at the limit", "x", strings.Repeat("s", workflow.MaxScopeRunes), ""},
		{"scope over", "x", strings.Repeat("s", workflow.MaxScopeRunes+1), fmt.Sprintf("the scope is %d characters, the most is %d; nothing was changed", workflow.MaxScopeRunes+1, workflow.MaxScopeRunes)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cur := mustStart(t, def)
			res, err := workflow.Start(def, cur, workflow.StartRequest{Context: tt.context, Scope: tt.scope, ID: "apex-2", Replace: true}, t0.Add(time.Hour), alice)
			if tt.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) || res.Archive != nil || res.Record != nil {
				t.Fatalf("err = %v, result %+v; want a refusal saying %q", err, res, tt.refused)
			}
		})
	}
}
