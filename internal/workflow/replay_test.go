package workflow_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

var bob = workflow.Actor{SessionID: "sess-bob", PID: 202}

// TestReplaySteps: a change made on a copy that lost a race is read back as the operation that
// made it and applied again on the other copy's tip. What the other copy changed first since
// the shared revision stands (the step is skipped); the rest goes through the same rules.
func TestReplaySteps(t *testing.T) {
	def := mustDef(t, "apex")
	at := t0.Add(time.Hour)
	// base: in analyze with a task, a variable and an artifact, shared by both copies.
	base := mustStart(t, def)
	step := func(r *workflow.Record, f func(r *workflow.Record) (workflow.Result, error)) *workflow.Record {
		t.Helper()
		res, err := f(r)
		if err != nil || !res.Changed {
			t.Fatalf("setting up: %+v %v", res, err)
		}
		return res.Record
	}
	task := func(id string, s workflow.TaskStatus, note string) func(r *workflow.Record) (workflow.Result, error) {
		return func(r *workflow.Record) (workflow.Result, error) {
			return workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: s, Note: note}, at, alice)
		}
	}
	setVar := func(k, v string) func(r *workflow.Record) (workflow.Result, error) {
		return func(r *workflow.Record) (workflow.Result, error) { return workflow.SetVar(r, k, v, at, alice) }
	}
	move := func(to string) func(r *workflow.Record) (workflow.Result, error) {
		return func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Transition(def, r, workflow.TransitionRequest{To: to, Note: "why " + to, Outputs: []string{"out/" + to}}, at, alice)
		}
	}
	base = step(base, task("T1", workflow.TaskPending, ""))
	base = step(base, setVar("SHARED", "0"))
	inPlan := step(base, move("plan")) // a gate: plan waits for approval
	// withOutputs: gone.md and back.md recorded, missing on disk when ours drops them; back.md
	// is on disk again when ours is replayed (onDisk).
	withOutputs := step(base, func(r *workflow.Record) (workflow.Result, error) {
		return workflow.AddArtifacts(r, []string{"gone.md", "back.md"}, at, alice)
	})
	onDisk := func(p string) bool { return p == "back.md" }
	drop := func(paths ...string) func(r *workflow.Record) (workflow.Result, error) {
		return func(r *workflow.Record) (workflow.Result, error) {
			return workflow.DropOutputs(r, paths, func(string) bool { return false }, at, alice)
		}
	}
	recorded := func(want ...string) func(t *testing.T, r *workflow.Record) {
		return func(t *testing.T, r *workflow.Record) {
			if got := strings.Join(r.Artifacts, ","); got != strings.Join(want, ",") {
				t.Fatalf("artifacts %q, want %q", got, want)
			}
		}
	}

	cases := []struct {
		name   string
		from   *workflow.Record // the shared revision (base when nil)
		ours   func(r *workflow.Record) (workflow.Result, error)
		theirs func(r *workflow.Record) (workflow.Result, error) // the other copy's change, nil for none
		kind   workflow.Event
		skip   string // what the skip says, "" when applied
		check  func(t *testing.T, r *workflow.Record)
	}{
		{name: "new task", ours: task("T2", workflow.TaskRunning, "mine"), theirs: setVar("OTHER", "1"), kind: workflow.EventTask,
			check: func(t *testing.T, r *workflow.Record) {
				if i := len(r.Tasks) - 1; r.Tasks[i].ID != "T2" || r.Tasks[i].Status != workflow.TaskRunning || r.Tasks[i].Note != "mine" || r.Vars["OTHER"] != "1" {
					t.Fatalf("tasks %+v vars %v", r.Tasks, r.Vars)
				}
			}},
		{name: "task moved", ours: task("T1", workflow.TaskRunning, ""), kind: workflow.EventTask,
			check: func(t *testing.T, r *workflow.Record) {
				if r.Tasks[0].Status != workflow.TaskRunning {
					t.Fatalf("T1 is %s", r.Tasks[0].Status)
				}
			}},
		{name: "task moved on both sides", ours: task("T1", workflow.TaskRunning, "mine"), theirs: task("T1", workflow.TaskRunning, "theirs"),
			kind: workflow.EventTask, skip: "changed it first"},
		{name: "same task move on both sides", ours: task("T1", workflow.TaskRunning, ""), theirs: task("T1", workflow.TaskRunning, ""), kind: workflow.EventTask,
			check: func(t *testing.T, r *workflow.Record) {}},
		{name: "new task after the phase moved", ours: task("T2", workflow.TaskPending, ""), theirs: move("plan"), kind: workflow.EventTask, skip: "belongs to phase analyze"},
		{name: "variable", ours: setVar("MINE", "1"), theirs: setVar("SHARED", "2"), kind: workflow.EventVar,
			check: func(t *testing.T, r *workflow.Record) {
				if r.Vars["MINE"] != "1" || r.Vars["SHARED"] != "2" {
					t.Fatalf("vars %v", r.Vars)
				}
			}},
		{name: "variable set on both sides", ours: setVar("SHARED", "1"), theirs: setVar("SHARED", "2"), kind: workflow.EventVar, skip: "changed it first"},
		{name: "variable unset", ours: func(r *workflow.Record) (workflow.Result, error) { return workflow.UnsetVar(r, "SHARED", at, alice) },
			kind: workflow.EventVar, check: func(t *testing.T, r *workflow.Record) {
				if _, ok := r.Vars["SHARED"]; ok {
					t.Fatalf("vars %v", r.Vars)
				}
			}},
		{name: "artifacts", ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.AddArtifacts(r, []string{"a.md"}, at, alice)
		}, theirs: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.AddArtifacts(r, []string{"b.md"}, at, bob)
		},
			kind: workflow.EventArtifact, check: func(t *testing.T, r *workflow.Record) {
				if strings.Join(r.Artifacts, ",") != "b.md,a.md" {
					t.Fatalf("artifacts %v", r.Artifacts)
				}
			}},
		{name: "phase status", ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.SetPhaseStatus(r, workflow.PhaseBlocked, at, alice)
		}, kind: workflow.EventPhase, check: func(t *testing.T, r *workflow.Record) {
			if r.PhaseStatus != workflow.PhaseBlocked {
				t.Fatalf("phase status %s", r.PhaseStatus)
			}
		}},
		{name: "phase status after the phase moved", ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.SetPhaseStatus(r, workflow.PhaseBlocked, at, alice)
		}, theirs: move("plan"), kind: workflow.EventPhase, skip: "has moved to plan"},
		{name: "enforcement", ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.SetEnforcement(r, []workflow.Violation{{Code: "E1", Severity: workflow.High}}, at, alice)
		}, kind: workflow.EventEnforce, check: func(t *testing.T, r *workflow.Record) {
			if !r.Blocking() {
				t.Fatalf("enforcement %+v", r.Enforcement)
			}
		}},
		{name: "move", ours: move("plan"), theirs: setVar("OTHER", "1"), kind: workflow.EventTransition,
			check: func(t *testing.T, r *workflow.Record) {
				h := r.History[len(r.History)-1]
				if r.State != "plan" || h.Note != "why plan" || r.Phases["analyze"].Outputs[0] != "out/plan" || r.Vars["OTHER"] != "1" {
					t.Fatalf("state %s, history %+v, phases %+v", r.State, h, r.Phases)
				}
			}},
		{name: "move with a checkpoint", ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Transition(def, r, workflow.TransitionRequest{To: "plan", CheckpointJSON: json.RawMessage(`{"step":2}`)}, at, alice)
		}, theirs: setVar("OTHER", "1"), kind: workflow.EventTransition, check: func(t *testing.T, r *workflow.Record) {
			if got := string(r.Phases["analyze"].Metadata["checkpoint"]); r.State != "plan" || got != `{"step":2}` {
				t.Fatalf("state %s, analyze's checkpoint %s", r.State, got)
			}
		}},
		{name: "the same move on both sides", ours: move("plan"), theirs: move("plan"), kind: workflow.EventTransition,
			check: func(t *testing.T, r *workflow.Record) {}},
		{name: "move after the other copy moved elsewhere", from: inPlan, ours: move("implement"), theirs: move("analyze"), kind: workflow.EventTransition, skip: "expected phase plan"},
		{name: "approval", from: inPlan, ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Approve(nil, r, workflow.ApprovalCLI, "ok", at, alice)
		}, kind: workflow.EventApprove, check: func(t *testing.T, r *workflow.Record) {
			if _, open := workflow.PendingApproval(r); open || r.Approvals[len(r.Approvals)-1].Source != workflow.ApprovalCLI {
				t.Fatalf("approvals %+v", r.Approvals)
			}
		}},
		{name: "move out of a gate carries its approval", from: inPlan, ours: func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Transition(def, r, workflow.TransitionRequest{To: "implement", Approval: &workflow.Approval{Source: workflow.ApprovalElicitation}}, at, alice)
		}, kind: workflow.EventTransition, check: func(t *testing.T, r *workflow.Record) {
			a := r.Approvals[len(r.Approvals)-1]
			if r.State != "implement" || a.Phase != "plan" || a.Source != workflow.ApprovalElicitation {
				t.Fatalf("state %s approvals %+v", r.State, r.Approvals)
			}
		}},
		// The user's "go on without them" (cairn outputs drop) was not replayed: the question
		// came back at the next session start. A path gone from the record since, or on disk
		// again here, is left as it is.
		{name: "outputs dropped", from: withOutputs, ours: drop("gone.md"), theirs: setVar("OTHER", "1"), kind: workflow.EventDrop,
			check: recorded("back.md")},
		{name: "outputs dropped after the phase moved", from: withOutputs, ours: drop("gone.md"), theirs: move("plan"), kind: workflow.EventDrop,
			check: recorded("back.md", "out/plan")},
		{name: "outputs dropped on both sides", from: withOutputs, ours: drop("gone.md"), theirs: drop("gone.md"), kind: workflow.EventDrop,
			check: recorded("back.md")},
		{name: "outputs dropped that are on disk again", from: withOutputs, ours: drop("gone.md", "back.md"), kind: workflow.EventDrop,
			check: recorded("back.md")},
		{name: "completion", ours: func(r *workflow.Record) (workflow.Result, error) { return workflow.Complete(r, "shipped", at, alice) },
			kind: workflow.EventComplete, check: func(t *testing.T, r *workflow.Record) {
				if r.Status != workflow.StatusCompleted || r.Outcome != "shipped" {
					t.Fatalf("status %s outcome %q", r.Status, r.Outcome)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from := base
			if tc.from != nil {
				from = tc.from
			}
			ours, err := tc.ours(from)
			if err != nil || !ours.Changed {
				t.Fatalf("setting up: %+v %v", ours, err)
			}
			after := ours.Record
			theirs := from
			if tc.theirs != nil {
				res, err := tc.theirs(from)
				if err != nil {
					t.Fatal(err)
				}
				theirs = res.Record
			}
			steps := workflow.Steps(ours.Event, from, after)
			if len(steps) != 1 || steps[0].Kind != tc.kind {
				t.Fatalf("steps %+v, want one %s", steps, tc.kind)
			}
			res, err := steps[0].Apply(def, from, theirs, theirs, onDisk, at.Add(time.Minute), alice)
			var skip *workflow.SkipError
			if tc.skip != "" {
				if !errors.As(err, &skip) || !strings.Contains(err.Error(), tc.skip) {
					t.Fatalf("Apply = %+v, %v; want skipped: %s", res.Record, err, tc.skip)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res.Record)
			// Once applied, the same step again changes nothing or is refused: never twice.
			if again, err := steps[0].Apply(def, from, theirs, res.Record, onDisk, at.Add(2*time.Minute), alice); err == nil && again.Changed {
				b, _ := json.Marshal(again.Record)
				t.Fatalf("applied twice: %s", b)
			}
		})
	}
}

// TestReplayHousekeepingIsNotAChange: a heartbeat (owner and time only) gives no step.
func TestReplayHousekeepingIsNotAChange(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	n := r.Clone()
	n.Owner.Heartbeat = n.Owner.Heartbeat.Add(time.Minute)
	n.UpdatedAt = n.UpdatedAt.Add(time.Minute)
	if steps := workflow.Steps(workflow.EventHeartbeat, r, n); len(steps) != 0 {
		t.Fatalf("steps %+v", steps)
	}
}

// A move from one approval phase into another, on a record whose approvals are at their bound,
// both gives the first its yes and drops the oldest entry, an earlier yes of that phase
// (TrimHistory): read back as a step, the move still carries its yes. Counting the given
// entries, as before, saw none new.
func TestReplayStepKeepsTheYesOfAMoveOnATrimmedRecord(t *testing.T) {
	def, err := workflow.BuildDefinition("gates.md", workflow.Definition{
		Phases:      []string{"a", "b", "c", "done"},
		Transitions: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a", "done"}},
		Terminal:    []string{"done"},
		Approvals:   []string{"b", "c"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := walk(t, def, mustStart(t, def), "b")
	var earlier []workflow.Approval
	for i := range workflow.MaxHistory - 1 {
		at := t0.Add(-time.Duration(workflow.MaxHistory-i) * time.Hour)
		earlier = append(earlier, workflow.Approval{Phase: "b", RequestedAt: at, ApprovedAt: at.Add(time.Minute), Source: workflow.ApprovalSetting})
	}
	before.Approvals = append(earlier, before.Approvals...)
	res, err := workflow.Transition(def, before, workflow.TransitionRequest{To: "c", Approval: &workflow.Approval{Source: workflow.ApprovalSetting}}, before.UpdatedAt.Add(time.Minute), alice)
	if err != nil {
		t.Fatal(err)
	}
	workflow.TrimHistory(res.Record)
	steps := workflow.Steps(res.Event, before, res.Record)
	if len(steps) != 1 || steps[0].Transition.Approval == nil || steps[0].Transition.Approval.Source != workflow.ApprovalSetting {
		t.Fatalf("the move b -> c with its yes: steps %+v", steps)
	}
}
