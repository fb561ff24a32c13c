package workflow_test

import (
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// The engine's side of a transition: look up the definition, compute the change, then (not
// shown) journal and persist Record and write the L2 line it owes.
func Example() {
	defs, _ := workflow.LoadDefinitions(nil, nil) // the built-ins
	def, _ := defs.Get("apex")
	now := time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)
	me := workflow.Actor{SessionID: "s1", PID: 42}

	res, _ := workflow.Start(def, nil, workflow.StartRequest{Context: "add login", ID: "apex-demo"}, now, me)
	res, _ = workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "plan", From: "analyze"}, now.Add(time.Minute), me)
	fmt.Println(res.Record.State)
	fmt.Println(res.L2)

	_, err := workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "review"}, now.Add(2*time.Minute), me)
	fmt.Println(err)

	_, err = workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "implement", From: "analyze"}, now.Add(2*time.Minute), me)
	fmt.Println(err)

	_, err = defs.Get("deploy")
	fmt.Println(err)
	// Output:
	// plan
	// Active APEX workflow: analyze completed, planning “add login”
	// apex workflow cannot move from plan to review: next phases: implement, analyze
	// workflow apex-demo is not where this call expected it: expected phase analyze, found plan, last changed by this session at 2026-11-22T17:31:00Z; nothing was changed: check it with mcp__plugin_cairn_cairn__resume_check and decide from its current phase
	// unknown workflow type: known types are apex, brainstorm, coordinate, debug, dotagent
}
