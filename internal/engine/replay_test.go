package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestReplayKeepsTheApprovalRule: a lost move out of an approval phase is replayed with the
// person's yes it was made with; one made without a person's yes is refused by the same rule
// as any move, and said.
func TestReplayKeepsTheApprovalRule(t *testing.T) {
	t.Parallel()
	def, ok := workflow.BuiltinDefinition("apex")
	if !ok {
		t.Fatal("no apex")
	}
	for _, tc := range []struct {
		name     string
		approval *workflow.Approval
		skipped  string
	}{
		{"with a person's yes", &workflow.Approval{Source: workflow.ApprovalElicitation, Note: "go"}, ""},
		{"without", nil, "approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "replay", WorkflowID: "wf-r"}))(t)
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			rec := storetest.ReadRecord(t, en.StateDir())
			res, err := workflow.Transition(def, rec, workflow.TransitionRequest{To: "implement", Approval: tc.approval}, e.clock.Now(), workflow.Actor{SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			after := res.Record
			if tc.approval == nil { // as a record from before approvals needed a person holds it
				after.Approvals[len(after.Approvals)-1].Source = ""
			}
			out, skipped, err := en.Replay(rec, rec, rec, after, res.Event)
			if err != nil {
				t.Fatal(err)
			}
			now := storetest.ReadRecord(t, en.StateDir())
			if want := map[bool]string{true: "replayed 1 of 1 step", false: "replayed 0 of 1 step"}[tc.skipped == ""]; out.Message != want {
				t.Errorf("message %q, want %q", out.Message, want)
			}
			if tc.skipped == "" {
				if !out.Changed || now.State != "implement" || len(skipped) != 0 {
					t.Fatalf("replay = %+v, skipped %q; the workflow is in %s", out, skipped, now.State)
				}
				return
			}
			if out.Changed || now.State != "plan" || len(skipped) != 1 || !strings.Contains(skipped[0], tc.skipped) {
				t.Fatalf("replay = %+v, skipped %q; the workflow is in %s", out, skipped, now.State)
			}
		})
	}
}
