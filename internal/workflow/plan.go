package workflow

import (
	"fmt"
	"strings"
	"time"
)

// Tier is the degradation tier of a resume (seed 001's matrix).
type Tier string

// Tiers.
const (
	TierFull    Tier = "full"    // L1 and L2: complete resume
	TierMinimal Tier = "minimal" // L1 only: the same position, less context
	TierL2Only  Tier = "l2-only" // only an L2 line: the last known position, no auto-resume
	TierNone    Tier = "none"    // nothing: a fresh start
)

// Layer warnings, in the seed's words.
const (
	WarnL1Unavailable = "Cannot write state files — workflow state will not persist"
	WarnL2Unavailable = "Auto-memory unavailable — learnings will not persist"
)

// PlanInput is what the resume plan is built from; the engine gathers it.
type PlanInput struct {
	// Record is the active workflow read from L1 (after expiry and recovery), or nil.
	Record *Record
	// Def is the record's definition, or nil when it is not loaded.
	Def *Definition
	// L1Available and L2Available say whether each layer can be used (read and written).
	L1Available bool
	L2Available bool
	// L2Line is the latest Cairn line in auto-memory, if any.
	L2Line    string
	Findings  []Finding
	Recovered []RecoveryAction
	Now       time.Time
}

// Plan is the resume plan: what internal/report turns into the text the next session reads
// first. Strings in it are raw stored values; the report sanitises them.
type Plan struct {
	Tier        Tier
	CanResume   bool
	WorkflowID  string
	Type        string
	Context     string
	Phase       string
	PhaseStatus PhaseStatus
	Status      Status
	Outcome     string
	// LastActivity is the record's updated_at; Age is Now minus it (never negative).
	LastActivity time.Time
	Age          time.Duration
	Completed    []string
	// Allowed lists the phases the workflow may move to next.
	Allowed []string
	// AwaitingApproval names the gate phase waiting for the user's approval, if any.
	AwaitingApproval string
	// Next is the next step in words ("continue phase implement; allowed next: review").
	Next      string
	Warnings  []string
	Blocking  []Violation
	Tasks     TaskCounts
	Findings  []Finding
	Recovered []RecoveryAction
	// L2Line is the last known position from auto-memory (tier L2Only), or the latest line.
	L2Line string
}

// BuildPlan decides the tier and the next step. Tier: a record and L2 → Full; a record
// without L2 → Minimal; no record but an L2 line → L2Only; else None.
func BuildPlan(in PlanInput) Plan {
	p := Plan{L2Line: strings.TrimSpace(in.L2Line), Findings: in.Findings, Recovered: in.Recovered}
	if !in.L1Available {
		p.Warnings = append(p.Warnings, WarnL1Unavailable)
	}
	if !in.L2Available {
		p.Warnings = append(p.Warnings, WarnL2Unavailable)
	}
	r := in.Record
	if r == nil {
		if p.L2Line != "" {
			p.Tier = TierL2Only
			p.Next = "last known position from memory: " + p.L2Line + "; the workflow state file is gone, so it cannot be resumed automatically: confirm with the user, then start a new workflow"
		} else {
			p.Tier = TierNone
			p.Next = "no workflow to resume; start one when there is multi-phase work"
		}
		return p
	}
	p.Tier = TierMinimal
	if in.L2Available {
		p.Tier = TierFull
	}
	p.WorkflowID, p.Type, p.Context = r.WorkflowID, r.Type, r.Context
	p.Phase, p.PhaseStatus, p.Status, p.Outcome = r.State, r.PhaseStatus, r.Status, r.Outcome
	p.LastActivity = r.LastActivity()
	if !p.LastActivity.IsZero() {
		p.Age = max(in.Now.Sub(p.LastActivity), 0)
	}
	p.Completed = r.CompletedPhases(in.Def)
	p.Blocking = r.BlockingViolations()
	p.Tasks = CountTasks(r, r.State)
	if in.Def != nil {
		p.Allowed = in.Def.Allowed(r.State)
	}
	p.AwaitingApproval, _ = PendingApproval(r)

	var serious []string
	for _, f := range in.Findings {
		if f.Severity != Info {
			p.Warnings = append(p.Warnings, f.Text)
		}
		if f.Serious() {
			serious = append(serious, f.Code)
		}
	}

	if r.Status != StatusActive {
		p.Next = fmt.Sprintf("the workflow is %s", r.Status)
		if r.Outcome != "" {
			p.Next += " (" + r.Outcome + ")"
		}
		p.Next += "; start a new one for new work"
		return p
	}
	p.CanResume = len(serious) == 0
	var next strings.Builder
	if !p.CanResume {
		fmt.Fprintf(&next, "integrity problems (%s): show them to the user and ask whether to resume anyway or start fresh (the current state is archived, not lost); ", strings.Join(serious, ", "))
	}
	if n := len(p.Blocking); n > 0 {
		fmt.Fprintf(&next, "resolve %d blocking violation%s first; ", n, plural(n))
	}
	switch {
	case p.AwaitingApproval != "":
		// Entering a gate opens its approval request, so an open request alone does not say
		// whether the phase's result was shown yet: say both cases, never "re-run".
		fmt.Fprintf(&next, "phase %s needs the user's approval before moving on: if its result was already presented, present it again for approval (do not re-run it); otherwise finish it, then ask", p.Phase)
	case r.PhaseStatus == PhaseBlocked || r.PhaseStatus == PhaseFailed:
		fmt.Fprintf(&next, "phase %s is %s: deal with that, then continue it", p.Phase, r.PhaseStatus)
	default:
		fmt.Fprintf(&next, "continue phase %s", p.Phase)
	}
	if open := p.Tasks.Pending + p.Tasks.Running; open > 0 {
		fmt.Fprintf(&next, " (%d task%s to run)", open, plural(open))
	}
	if len(p.Allowed) > 0 {
		next.WriteString("; allowed next: " + strings.Join(p.Allowed, ", "))
	}
	p.Next = next.String()
	return p
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
