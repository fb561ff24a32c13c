package workflow

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// A change this machine made on a copy of a workflow that lost a race (another copy's change
// was acknowledged first, and that copy is now the active one) is replayed as the operations
// that made it, through the same rules: Steps reads them from the record before and after the
// change, and Step.Apply applies one on the current record. Where the other copy changed the
// same thing since the last revision both shared (base), its change stands and the step is
// skipped: the first acknowledged write wins.

// Step is one operation of a change: Kind says which, and the fields for it are set.
type Step struct {
	Kind Event
	// Phase is the phase the change was made in.
	Phase string
	// Transition is a move (Kind transition), with the checkpoint kept in the left phase's
	// metadata with it, when there was one.
	Transition TransitionRequest
	// Task is a task added or moved (Kind task); TaskPhase is the phase the task belongs to.
	Task      TaskUpdate
	TaskPhase string
	// Key and Value set a variable (Kind var); Unset removes it.
	Key, Value string
	Unset      bool
	// Paths are artifacts added (Kind artifact), or outputs taken off the record (Kind
	// outputs_dropped).
	Paths []string
	// Violations replace the enforcement (Kind enforcement).
	Violations []Violation
	// PhaseStatus is the current phase's new status (Kind phase_status).
	PhaseStatus PhaseStatus
	// Approval is a person's yes given to Phase (Kind approve).
	Approval Approval
	// Outcome ends the workflow (Kind complete).
	Outcome string
}

// String names the step for a report: "transition plan -> implement", "task T1 done", ...
func (s Step) String() string {
	switch s.Kind {
	case EventTransition:
		return "transition " + s.Transition.From + " -> " + s.Transition.To
	case EventTask:
		return "task " + s.Task.ID + " " + string(s.Task.Status)
	case EventVar:
		if s.Unset {
			return "unset " + s.Key
		}
		return "variable " + s.Key
	case EventPhase:
		return "phase status " + string(s.PhaseStatus)
	case EventApprove:
		return "approval of " + s.Phase
	}
	return string(s.Kind)
}

// SkipError says why a step was not replayed; the change stays in the conflict archive.
type SkipError struct {
	Step Step
	Why  string
}

func (e *SkipError) Error() string { return e.Step.String() + ": " + e.Why }

// Steps lists the operations that took before to after, one change of the same workflow made
// by ev (the journal's kind), in the order they apply. A move is one step (its approval,
// outputs and checkpoint go with it); an end other than completion (expiry, archive) is a step
// that Apply always skips; changes Cairn makes on its own (heartbeats, recovery) are none. A
// drop is told by ev: a fit to the size limit also takes outputs off the record.
func Steps(ev Event, before, after *Record) []Step {
	phase := before.State
	if ev == EventDrop {
		kept := recordedOutputs(after)
		gone := slices.DeleteFunc(recordedOutputs(before), func(p string) bool { return slices.Contains(kept, p) })
		if len(gone) == 0 {
			return nil
		}
		return []Step{{Kind: EventDrop, Phase: phase, Paths: gone}}
	}
	if before.State != after.State {
		t := TransitionRequest{From: before.State, To: after.State, Outcome: after.Outcome}
		if n := len(after.History); n > 0 && after.History[n-1].To == after.State {
			t.Note = after.History[n-1].Note
		}
		left, was := after.Phases[before.State], before.Phases[before.State]
		t.Outputs = slices.DeleteFunc(slices.Clone(left.Outputs), func(o string) bool { return slices.Contains(was.Outputs, o) })
		if a, ok := newApproval(before, after, before.State); ok && a.Source != "" {
			// A person's yes (or the setting) goes with the move; an approval without a
			// source is the agent's, which the approval rule decides again.
			t.Approval = &Approval{Source: a.Source, Note: a.Note}
		}
		if cp := left.Metadata["checkpoint"]; cp != nil && !bytes.Equal(cp, was.Metadata["checkpoint"]) {
			t.CheckpointJSON = cp
		}
		return []Step{{Kind: EventTransition, Phase: phase, Transition: t}}
	}
	if before.Status != after.Status {
		if after.Status == StatusCompleted {
			return []Step{{Kind: EventComplete, Phase: phase, Outcome: after.Outcome}}
		}
		return []Step{{Kind: Event(after.Status), Phase: phase}}
	}
	var steps []Step
	if a, ok := newApproval(before, after, phase); ok {
		steps = append(steps, Step{Kind: EventApprove, Phase: phase, Approval: a})
	}
	for _, k := range slices.Sorted(maps.Keys(after.Vars)) {
		if v, ok := before.Vars[k]; !ok || v != after.Vars[k] {
			steps = append(steps, Step{Kind: EventVar, Phase: phase, Key: k, Value: after.Vars[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before.Vars)) {
		if _, ok := after.Vars[k]; !ok {
			steps = append(steps, Step{Kind: EventVar, Phase: phase, Key: k, Unset: true})
		}
	}
	for _, t := range after.Tasks {
		old, ok := FindTask(before, t.ID)
		if ok && sameTask(old, t) {
			continue
		}
		u := TaskUpdate{ID: t.ID, Status: t.Status}
		if !ok || old.Output != t.Output {
			u.Output = t.Output
		}
		if !ok || old.Note != t.Note {
			u.Note = t.Note
		}
		steps = append(steps, Step{Kind: EventTask, Phase: phase, Task: u, TaskPhase: t.Phase})
	}
	paths := slices.DeleteFunc(slices.Clone(after.Artifacts), func(p string) bool { return slices.Contains(before.Artifacts, p) })
	if len(paths) > 0 {
		steps = append(steps, Step{Kind: EventArtifact, Phase: phase, Paths: paths})
	}
	if !sameJSON(before.Enforcement, after.Enforcement) {
		steps = append(steps, Step{Kind: EventEnforce, Phase: phase, Violations: after.violations()})
	}
	if before.PhaseStatus != after.PhaseStatus {
		steps = append(steps, Step{Kind: EventPhase, Phase: phase, PhaseStatus: after.PhaseStatus})
	}
	return steps
}

// Apply applies s on r, the current record, which holds the other copy's line (theirs is its
// tip as it was adopted) and what was replayed so far. base is the last revision both copies
// shared; exists says whether the project here holds a path. A step is skipped (*SkipError)
// when theirs changed the same thing since base, or when the operation no longer applies; a
// transition's approval policy is the caller's, as for any move.
func (s Step) Apply(def *Definition, base, theirs, r *Record, exists func(string) bool, now time.Time, by Actor) (Result, error) {
	skip := func(why string) (Result, error) { return Result{}, &SkipError{Step: s, Why: why} }
	if r == nil {
		return Result{}, ErrNoWorkflow
	}
	if !slices.Contains([]Event{EventTransition, EventArtifact, EventVar, EventTask, EventDrop}, s.Kind) && r.State != s.Phase {
		return skip("the workflow has moved to " + r.State + " since")
	}
	var res Result
	var err error
	switch s.Kind {
	case EventTransition:
		if n := len(r.History); n > 0 && r.State == s.Transition.To && r.History[n-1].From == s.Transition.From && r.History[n-1].To == s.Transition.To {
			return Result{Record: r.Clone(), Event: EventNone}, nil // the same move is there already
		}
		res, err = Transition(def, r, s.Transition, now, by)
	case EventComplete:
		res, err = Complete(r, s.Outcome, now, by)
	case EventApprove:
		res, err = Approve(def, r, s.Approval.Source, s.Approval.Note, now, by)
	case EventVar:
		b, bok := base.Vars[s.Key]
		t, tok := theirs.Vars[s.Key]
		if b != t || bok != tok {
			if tok != s.Unset && t == s.Value {
				return Result{Record: r.Clone(), Event: EventNone}, nil
			}
			return skip("the other machine changed it first")
		}
		if s.Unset {
			res, err = UnsetVar(r, s.Key, now, by)
		} else {
			res, err = SetVar(r, s.Key, s.Value, now, by)
		}
	case EventTask:
		b, bok := FindTask(base, s.Task.ID)
		t, tok := FindTask(theirs, s.Task.ID)
		// A new run there (a takeover: TaskUpdate.Rerun) is a change too, though it reads alike.
		if bok != tok || bok && (!sameTask(b, t) || b.Attempts != t.Attempts || !b.StartedAt.Equal(t.StartedAt)) {
			if tok && t.Status == s.Task.Status && (s.Task.Output == "" || s.Task.Output == t.Output) && (s.Task.Note == "" || s.Task.Note == t.Note) {
				return Result{Record: r.Clone(), Event: EventNone}, nil
			}
			return skip("the other machine changed it first")
		}
		if _, ok := FindTask(r, s.Task.ID); !ok && r.State != s.TaskPhase {
			return skip("it belongs to phase " + s.TaskPhase + " and the workflow is in " + r.State + " now")
		}
		res, err = UpdateTask(r, s.Task, now, by)
	case EventArtifact:
		res, err = AddArtifacts(r, s.Paths, now, by)
	case EventDrop:
		// A path off the record already, or on disk again here, is left as it is.
		missing := slices.DeleteFunc(recordedOutputs(r), exists)
		keep := slices.DeleteFunc(slices.Clone(s.Paths), func(p string) bool { return !slices.Contains(missing, p) })
		if len(keep) == 0 {
			return Result{Record: r.Clone(), Event: EventNone}, nil
		}
		res, err = DropOutputs(r, keep, exists, now, by)
	case EventEnforce:
		if !sameJSON(base.Enforcement, theirs.Enforcement) {
			return skip("the other machine changed it first")
		}
		cur := r.violations()
		if len(cur) == 0 && len(s.Violations) == 0 || len(cur) == len(s.Violations) && sameJSON(cur, s.Violations) {
			return Result{Record: r.Clone(), Event: EventNone}, nil
		}
		res, err = SetEnforcement(r, s.Violations, now, by)
	case EventPhase:
		if base.State == theirs.State && base.PhaseStatus != theirs.PhaseStatus {
			return skip("the other machine changed it first")
		}
		res, err = SetPhaseStatus(r, s.PhaseStatus, now, by)
	default:
		return skip("an end other than completion is not replayed")
	}
	if err != nil {
		return skip(err.Error())
	}
	return res, nil
}

// newApproval is the approval of phase p that after holds and before did not (given, or
// newly recorded as given): after's latest given entry of p, unless before holds that entry.
// Entries are not counted: TrimHistory drops the oldest as new ones come.
func newApproval(before, after *Record, p string) (Approval, bool) {
	for i := len(after.Approvals) - 1; i >= 0; i-- {
		if a := after.Approvals[i]; a.Phase == p && !a.ApprovedAt.IsZero() {
			held := slices.ContainsFunc(before.Approvals, func(b Approval) bool {
				return b.Phase == p && b.RequestedAt.Equal(a.RequestedAt) && b.ApprovedAt.Equal(a.ApprovedAt)
			})
			return a, !held
		}
	}
	return Approval{}, false
}

// FindTask returns r's task of id, and whether there is one.
func FindTask(r *Record, id string) (Task, bool) {
	if i := slices.IndexFunc(r.Tasks, func(t Task) bool { return t.ID == id }); i >= 0 {
		return r.Tasks[i], true
	}
	return Task{}, false
}

func sameTask(a, b Task) bool {
	return a.Status == b.Status && a.Output == b.Output && a.Note == b.Note
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
