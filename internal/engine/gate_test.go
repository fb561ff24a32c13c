package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// A phase that became an approval gate while the workflow was in it (the project's definition
// was edited) has no approval request on record. The move out of it is refused until a person
// approves, so `cairn approve` must take it: otherwise nothing can move the workflow on.
func TestGateAddedWhileInThePhaseCanBeApproved(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.project, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(approvals string) {
		def := "---\nname: review\ndescription: review\nphases: [draft, check, done]\ntransitions: {draft: [check], check: [done]}\nterminal: [done]\n" + approvals + "---\nbody\n"
		if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "review", Context: "gate added later"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "check"}))(t)

	write("approvals: [check]\n")
	en = e.open("s1")
	if _, err := en.Transition(engine.TransitionRequest{To: "done"}); !errors.As(err, new(*workflow.ApprovalError)) {
		t.Fatalf("leaving the new gate without approval: err = %v, want an approval error", err)
	}
	if _, err := e.open("cli").Approve("looks good"); err != nil {
		t.Fatalf("cairn approve refused the gate the move waits for: %v", err)
	}
	res, err := e.open("s1").Transition(engine.TransitionRequest{To: "done"})
	if err != nil {
		t.Fatalf("leaving the approved gate: %v", err)
	}
	if !res.Changed {
		t.Fatalf("the move was not made: %+v", res)
	}
}
