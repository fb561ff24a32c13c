package workflow

import (
	"fmt"
	"slices"
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

// Stateless reports whether a resume of tier t has no workflow state behind it (nothing on
// record, or memory's position only): no workflow to go on with, and no details to show.
func (t Tier) Stateless() bool { return t == TierNone || t == TierL2Only }

// Layer warnings, in the seed's words.
const (
	WarnL1Unavailable = "Cannot write state files — workflow state will not persist"
	WarnL2Unavailable = "Auto-memory unavailable — learnings will not persist"
)

// NothingToResume is the one next step when nothing is on record: the user's request, not a
// workflow (start_workflow's own description says when one begins).
const NothingToResume = "Nothing to resume; go on with the user's request."

// MemoryOnly is the one next step when memory holds a last position but no workflow state is
// on record (TierL2Only).
const MemoryOnly = "Tell the user the last position memory holds; its workflow state is missing, so call " + ToolPrefix + "start_workflow if the work goes on."

// ToolPrefix is how the agent sees Cairn's MCP tools (plugin cairn, server cairn): a text
// that may reach it outside Cairn's own tool results (the resume report at session start, the
// compaction anchor) names a tool it is to call with it, as a direct call needs.
const ToolPrefix = "mcp__plugin_cairn_cairn__"

// PlanInput is what the resume plan is built from; the engine gathers it.
type PlanInput struct {
	// Record is the active workflow read from L1 (after expiry and recovery), or nil.
	Record *Record
	// Def is the record's definition, or nil when it is not loaded.
	Def *Definition
	// L1Available and L2Available say whether each layer can be used (read and written).
	L1Available bool
	L2Available bool
	// L2Off says L2 is not available because the user switched auto-memory off: a choice, not
	// a fault, so nothing is warned of.
	L2Off bool
	// L2Said says the caller warned why L2 is unavailable, with its step: a second, generic
	// warning would only repeat it.
	L2Said bool
	// L2Line is the latest Cairn line in auto-memory, if any.
	L2Line   string
	Findings []Finding
	Now      time.Time
	// OwnerMidWork: the session that owns Record reads it mid-work (its start after its own
	// compaction, its resume_check from its own client), so a workflow past its TTL is
	// resumed (the engine did not expire it), not sent to expiry.
	OwnerMidWork bool
	// RunsElsewhere, when not nil, reports a running task that another machine sharing the
	// workflow runs under its live claim: not this session's to run, so the step does not
	// count it as one.
	RunsElsewhere func(task string) bool
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
	// Age is Now minus the record's last activity; 0 when unknown. A last activity after Now
	// (a clock behind, a copy from a machine whose clock is ahead) gives a negative Age, at
	// least a second, so that it is still negative in whole seconds: the report and the
	// status say "in the future", as the HIGH finding does, not "0s ago".
	Age       time.Duration
	Completed []string
	// Allowed lists the phases the workflow may move to next (NextPhases in every text).
	Allowed []string
	// AwaitingApproval names the gate phase waiting for the user's approval, if any.
	AwaitingApproval string
	// Next is the next step in words ("Continue phase implement, then move on to review.").
	Next     string
	Warnings []string
	Blocking []Violation
	Tasks    TaskCounts
	// Elsewhere counts the phase's running tasks another machine runs (PlanInput.RunsElsewhere),
	// left out of Tasks.Running.
	Elsewhere int
	// L2Line is the last known position from auto-memory (tier L2Only), or the latest line.
	L2Line string
}

// NextPhases is what every text calls the phases a workflow may move to next (Plan.Allowed),
// the label before their names: "next phases: implement, analyze".
const NextPhases = "next phases"

// BuildPlan decides the tier and the next step. Tier: a record and L2 → Full; a record
// without L2 → Minimal; no record but an L2 line → L2Only; else None.
func BuildPlan(in PlanInput) Plan {
	p := Plan{L2Line: strings.TrimSpace(in.L2Line)}
	if !in.L1Available {
		p.Warnings = append(p.Warnings, WarnL1Unavailable)
	}
	if !in.L2Available && !in.L2Off && !in.L2Said {
		p.Warnings = append(p.Warnings, WarnL2Unavailable)
	}
	r := in.Record
	if r == nil {
		if p.L2Line != "" {
			p.Tier = TierL2Only
			p.Next = MemoryOnly
		} else {
			p.Tier = TierNone
			p.Next = NothingToResume
		}
		return p
	}
	p.Tier = TierMinimal
	if in.L2Available {
		p.Tier = TierFull
	}
	p.WorkflowID, p.Type, p.Context = r.WorkflowID, r.Type, r.Context
	p.Phase, p.PhaseStatus = r.State, r.PhaseStatus
	if last := r.LastActivity(); !last.IsZero() {
		p.Age = in.Now.Sub(last)
		if p.Age < 0 {
			p.Age = min(p.Age, -time.Second)
		}
	}
	p.Completed = r.CompletedPhases(in.Def)
	p.Blocking = r.BlockingViolations()
	p.Tasks = CountTasks(r, r.State)
	if in.RunsElsewhere != nil {
		for _, t := range r.Tasks {
			if t.Status == TaskRunning && (t.Phase == "" || t.Phase == r.State) && in.RunsElsewhere(t.ID) {
				p.Tasks.Running--
				p.Elsewhere++
			}
		}
	}
	if in.Def != nil && (r.Status == StatusActive || !r.Status.Valid()) { // one that ended moves no more
		p.Allowed = in.Def.Allowed(r.State)
	}
	if ph, open := Awaiting(in.Def, r); open {
		p.AwaitingApproval = ph
	}

	for _, f := range in.Findings {
		if f.Severity != Info {
			// The step asks the user (or has no continuing to confirm): the warning says only
			// what is so. A person's view words its own step (engine.AncientCheck), kept.
			p.Warnings = append(p.Warnings, strings.TrimSuffix(f.Text, AncientAsk))
		}
	}

	if r.Status != StatusActive {
		p.Next = fmt.Sprintf("The workflow is %s; call %sstart_workflow for new work.", r.Status, ToolPrefix)
		return p
	}
	// Past its TTL: the read protocol archives it, so a view that did not (a read-only one, or
	// a state directory that cannot be written) does not send the agent on with it either.
	if expired, _ := r.Expired(in.Now); expired && !in.OwnerMidWork {
		// Not resumed: no move is a step from here, nor an approval (a person's yes would
		// revive it beside the expiry the step is).
		p.Allowed, p.AwaitingApproval = nil, ""
		if in.L1Available {
			p.Next = "The workflow has " + r.ExpiredAfter() + ", so it is not resumed: call " + ToolPrefix + "expire_ttl, which archives it (kept, not lost)."
		} else {
			p.Next = "Tell the user the workflow has " + r.ExpiredAfter() + " and is not resumed: the first session start that can write the state directory archives it; this one cannot."
		}
		return p
	}
	// A CRITICAL or HIGH finding stops an automatic resume: the user is asked whether to
	// resume anyway or start fresh, the old state archived.
	p.CanResume = !slices.ContainsFunc(in.Findings, func(f Finding) bool { return f.Severity.Blocks() })
	p.Next = nextStep(p, r, in.Findings, in.Def != nil && in.Def.IsTerminal(r.State), in.Def.TerminalAhead(p.Allowed), in.OwnerMidWork)
	if !p.CanResume && !slices.ContainsFunc(in.Findings, func(f Finding) bool { return f.Severity.Blocks() && f.Code != FindingNoDefinition }) {
		// Without its definition the workflow cannot move, so resuming is no choice, and
		// starting fresh (archiving it) is not the fix: its definition file is.
		p.Next = "Show the user the warnings above: the definition of this workflow's type does not load, so the workflow cannot move and is kept as it is; " + DefinitionAsk + ", and it goes on once that loads."
	} else if !p.CanResume && !slices.ContainsFunc(in.Findings, func(f Finding) bool { return f.Severity.Blocks() && f.Code != FindingOutputMissing }) {
		// This is asked again at every session start until the files exist or the user's
		// "go on without them" is recorded (cairn outputs drop, DropOutputs): the step says
		// so, and what ends it. The warning names them: the step does not say it again.
		p.Next = fmt.Sprintf("Show the user the warnings above and ask: write the missing outputs again at the same paths and go on with phase %s, go on without them (then run `cairn outputs drop`), or start fresh (the current one is archived, not lost). Each session start asks until one is done.", p.Phase)
	} else if slices.ContainsFunc(in.Findings, func(f Finding) bool { return f.Code == FindingUnknownPhase }) {
		// Every move out of a phase the definition lost is refused (TransitionError): resuming
		// is no choice either, and the fix is the definition.
		p.Next = fmt.Sprintf("Show the user the warnings above: phase %s is not a phase of this workflow's definition now, so the workflow cannot move. Ask them to restore the phase in the definition; the workflow is kept as it is and goes on once it is there again.", p.Phase)
	}
	if strings.Contains(p.Next, "which session goes on") { // the step asks it: the warning does not again
		for i, w := range p.Warnings {
			p.Warnings[i] = strings.Replace(w, ownedAskAs, "", 1)
		}
	}
	return p
}

// nextStep chooses the single most important thing to do next: a resume the checks put in
// doubt, then what a warning asks for before going on (the work is stale, another live session
// holds it), then blocking violations, then an approval, then a stuck phase, else the phase
// itself. It is Cairn's own instruction, so it names only phases, counts and ages, never
// stored text. mine says the owner reads it mid-work: its running tasks are its own, to
// finish, not to run again.
func nextStep(p Plan, r *Record, findings []Finding, terminal bool, ahead string, mine bool) string {
	stale := slices.ContainsFunc(findings, func(f Finding) bool { return f.Code == FindingAncient })
	owned := slices.ContainsFunc(findings, func(f Finding) bool { return f.Code == FindingOwnedElsewhere })
	switch {
	case !p.CanResume:
		return "Show the user the warnings above and ask whether to resume this workflow or start fresh (the current one is archived, not lost)."
	case stale && owned:
		return fmt.Sprintf("Confirm with the user that this workflow, last active %s ago, should go on, and which session goes on with it (another live session changed it too), before continuing phase %s.", Age(p.Age), p.Phase)
	case stale:
		return fmt.Sprintf("Confirm with the user that this workflow, last active %s ago, should go on before continuing phase %s.", Age(p.Age), p.Phase)
	case owned:
		// The agent cannot reach the other session; the user can.
		return fmt.Sprintf("Ask the user which session goes on with this workflow (another live session changed it too) before continuing phase %s.", p.Phase)
	case len(p.Blocking) > 0:
		return BlockingStep(len(p.Blocking), ToolPrefix+"set_enforcement")
	case p.AwaitingApproval != "":
		// Entering a gate opens its approval request, so an open request alone does not say
		// whether the phase's result was shown yet: say both cases, never "re-run".
		return fmt.Sprintf("Finish phase %s (if its result was already shown, show it again without re-running it) and ask the user to approve it; leaving %s needs their yes.", p.Phase, p.Phase)
	case r.PhaseStatus == PhaseBlocked || r.PhaseStatus == PhaseFailed:
		return fmt.Sprintf("Phase %s is %s: deal with that, then continue it.", p.Phase, r.PhaseStatus)
	}
	open := p.Tasks.Pending + p.Tasks.Running
	toRun, toFinish := open, 0
	if mine {
		toRun, toFinish = p.Tasks.Pending, p.Tasks.Running
	}
	if a, ok := approvedHere(r); ok && len(p.Allowed) > 0 {
		// The person's yes is for the phase's result: going on with it would do it again.
		s := fmt.Sprintf("Phase %s is approved (by %s): ", p.Phase, ApprovedBy(a.Source))
		if open > 0 {
			verb := "run"
			if toFinish > 0 {
				verb = "finish"
			}
			s += fmt.Sprintf("%s its %d open task%s, then ", verb, open, Plural(open))
		}
		s += "move on to " + strings.Join(p.Allowed, " or ")
		if ahead != "" {
			s += ": " + ahead
		}
		if p.Elsewhere > 0 {
			// Not this session's to run, but not done either: moving on leaves them open there.
			s += fmt.Sprintf("; its %d task%s running on another machine %s that machine's to finish", p.Elsewhere, Plural(p.Elsewhere), isAre(p.Elsewhere))
		}
		return s + "."
	}
	s := "Continue phase " + p.Phase
	// A failed task is not open, but the phase's work is not done while it stands; one another
	// machine runs is not this session's to run, but the phase's work is not done either.
	var parts []string
	// say adds n tasks: "N tasks WHAT" when first, "N WHAT" after (of the tasks said).
	say := func(n int, adj, what string) {
		switch {
		case n == 0:
		case len(parts) == 0:
			parts = append(parts, fmt.Sprintf("%d %stask%s %s", n, adj, Plural(n), what))
		default:
			parts = append(parts, fmt.Sprintf("%d %s%s", n, adj, what))
		}
	}
	say(toRun, "", "to run")
	say(toFinish, "", "to finish")
	say(p.Elsewhere, "", "running on another machine")
	say(p.Tasks.Failed, "failed ", "to retry or report to the user")
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if len(p.Allowed) > 0 {
		s += ", then move on to " + strings.Join(p.Allowed, " or ")
		if ahead != "" {
			s += ": " + ahead
		}
	}
	if terminal { // active in a terminal phase: no move leads out of it
		s += ", then call " + ToolPrefix + "complete_workflow with the outcome: " + p.Phase + " is a terminal phase, so no move leads out of it"
	}
	return s + "."
}

// approvedHere returns a person's yes to r's phase in this stay in it: entering a gate opens
// a new request, so the latest for the phase is this stay's. The project setting's (approvals
// off) and one with no source (older state: a seed's checkpoint, an earlier Cairn's agent's
// approval) say nothing of the phase's result.
func approvedHere(r *Record) (Approval, bool) {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		if a := r.Approvals[i]; a.Phase == r.State {
			return a, !a.ApprovedAt.IsZero() && (a.Source == ApprovalCLI || a.Source == ApprovalElicitation)
		}
	}
	return Approval{}, false
}

// BlockingStep is the step n (at least one) blocking violations on record ask for, calling
// the tool set_enforcement by the name given: resume says it, and set_enforcement's own result
// when it records them (by its short name: the model has just called it).
func BlockingStep(n int, tool string) string {
	if n == 1 {
		return "Fix the blocking violation, then call " + tool + " with what is still open ([] once none is)."
	}
	return fmt.Sprintf("Fix the %d blocking violations, then call %s with what is still open ([] once none is).", n, tool)
}

// isAre is the verb for n things.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// Plural is the "s" a count other than one puts on a noun.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
