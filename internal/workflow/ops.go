package workflow

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// Event names what an operation did, for the journal and the caller's messages.
type Event string

// Events.
const (
	EventNone       Event = "none" // nothing changed: the engine writes nothing
	EventStart      Event = "start"
	EventTransition Event = "transition"
	EventComplete   Event = "complete"
	EventTask       Event = "task"
	EventVar        Event = "var"
	EventArtifact   Event = "artifact"
	EventEnforce    Event = "enforcement"
	EventPhase      Event = "phase_status"
	EventHeartbeat  Event = "heartbeat"
	EventExpire     Event = "expire"
	EventRecover    Event = "recover"
	EventApprove    Event = "approve"
	EventDrop       Event = "outputs_dropped"
)

// Actor is who makes a change: the Claude Code session and the process acting for it.
type Actor struct {
	SessionID string
	PID       int
	Host      string // the machine PID is on; "" when unknown
	// ClientStart is when PID's process started (0: not known), told apart from a later
	// process of that pid.
	ClientStart uint64
}

// Result is what an operation returns: the new record and what happened. The input record is
// never modified.
type Result struct {
	// Record is the new record to write; nil when the active slot is to be cleared (expiry).
	Record *Record
	// Changed is false when nothing is to be written (an idempotent call).
	Changed bool
	Event   Event
	// From and To are the phases before and after.
	From, To string
	// Completed is true when this change completed the workflow.
	Completed bool
	// Subject names the task or variable a change within the phase changed ("task t1 done",
	// "variable PLAN_PATH", "unset PLAN_PATH"; a name of a secret's shape is not repeated);
	// "" for other changes.
	Subject string
	// L2 is the line the write protocol owes for this change (position, completion or
	// expiry), unsanitised; empty when none is owed.
	L2 string
	// Archive, when set, is a record the engine must archive (never delete) before writing
	// Record: the workflow replaced by Start, or the expired one.
	Archive *Record
	// Warnings are for the user or agent (another live session owns the workflow, ...).
	Warnings []string
}

// ActiveError refuses to start a workflow while another is active.
type ActiveError struct {
	WorkflowID string
	Type       string
	Phase      string
	// LiveOwner, when set, is how long ago another live session last changed it (Ago): the
	// work is that session's, which the caller must not take up.
	LiveOwner string
	// SharedOn, when set, names the remote it is shared through: a replace ends it there, and
	// so on every other machine sharing it, which the user decides knowing.
	SharedOn string
}

func (e *ActiveError) Error() string {
	shared := ""
	if e.SharedOn != "" {
		shared = "; " + EndsElsewhere(e.SharedOn)
	}
	if e.LiveOwner != "" {
		return fmt.Sprintf("workflow %s (%s, at %s) is still active, and another live session is working in it (it last changed it %s); nothing was changed: the work in it is that session's, so do not take it up or complete it from here; tell the user, who decides whether this work waits for it or replaces it%s",
			e.WorkflowID, e.Type, e.Phase, e.LiveOwner, shared)
	}
	return fmt.Sprintf("workflow %s (%s, at %s) is still active; nothing was changed: continue or complete it; to start another instead, ask the user first, then start again with replace (it archives the active one, kept, not lost)%s",
		e.WorkflowID, e.Type, e.Phase, shared)
}

// EndsElsewhere says that a workflow shared through remote ends on every machine sharing it
// when it is replaced here: the next sync pushes its end.
func EndsElsewhere(remote string) string {
	return "it is shared through " + remote + ", so a replace ends it on the other machines sharing it too"
}

// NotActiveError refuses to change a workflow that is no longer active.
type NotActiveError struct {
	WorkflowID string
	Status     Status
}

func (e *NotActiveError) Error() string {
	return fmt.Sprintf("workflow %s is %s, not active; nothing was changed: start a new workflow to continue", e.WorkflowID, e.Status)
}

// TransitionError refuses a move the definition does not allow, naming the moves it does.
type TransitionError struct {
	Type    string
	From    string
	Allowed []string
	// To is the phase asked for, named in the message when it has a phase name's shape (what
	// was typed may be anything a caller pasted); NoSuchPhase says it is none of the definition's.
	To          string
	NoSuchPhase bool
	// Phases, set when From is not a phase of the definition (renamed or removed since the
	// workflow entered it), are the definition's phases.
	Phases []string
}

func (e *TransitionError) Error() string {
	if len(e.Phases) > 0 {
		return fmt.Sprintf("%s workflow is in phase %s, which is not a phase of its definition now (%s): it cannot move from there; nothing was changed: tell the user, who can restore the phase in the definition",
			e.Type, said(e.From), strings.Join(e.Phases, ", ")) // a phase on record only: a hand edit, say
	}
	if len(e.Allowed) == 0 { // a terminal phase: a definition lets no move out of one
		return fmt.Sprintf("%s workflow cannot move from %s: %s is a terminal phase of its definition, so no move leads out of it; nothing was changed: %s", e.Type, e.From, e.From, CompleteStep)
	}
	to := "the phase asked for"
	if echoable(e.To) {
		to = e.To
	}
	if e.NoSuchPhase {
		to += " (no such phase)"
	}
	return fmt.Sprintf("%s workflow cannot move from %s to %s: %s: %s", e.Type, e.From, to, NextPhases, strings.Join(e.Allowed, ", "))
}

// ConflictError is a failed compare-and-swap: the workflow is not where the caller expected,
// because another session or process moved it, or the caller's own session did. It carries
// what the caller needs to explain and retry.
type ConflictError struct {
	WorkflowID    string
	ExpectedPhase string
	FoundPhase    string
	FoundStatus   Status
	// ChangedBy and ChangedAt say who made the last change (last history entry, else owner).
	ChangedBy string
	ChangedAt time.Time
	// Own says ChangedBy is the caller's own session: said so, not as an id the caller may
	// take for another session's.
	Own bool
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s is not where this call expected it: ", e.WorkflowID)
	if echoable(e.ExpectedPhase) {
		fmt.Fprintf(&b, "expected phase %s, found %s", e.ExpectedPhase, e.FoundPhase)
	} else {
		fmt.Fprintf(&b, "the phase expected is not the one found, %s", e.FoundPhase)
	}
	if e.FoundStatus != "" && e.FoundStatus != StatusActive {
		fmt.Fprintf(&b, " and the workflow is %s", e.FoundStatus)
	}
	// The session is stored text (another machine's, through a remote, or whatever
	// CLAUDE_CODE_SESSION_ID held): said as one clean line, cut where no secret is made.
	if by := secrets.Line(e.ChangedBy, 80); e.Own {
		b.WriteString(", last changed by this session")
	} else if by != "" {
		fmt.Fprintf(&b, ", last changed by session %s", by)
	}
	if !e.ChangedAt.IsZero() {
		fmt.Fprintf(&b, " at %s", e.ChangedAt.UTC().Format(time.RFC3339))
	}
	b.WriteString("; nothing was changed: " + CheckOnRecord + " and decide from its current phase")
	return b.String()
}

// CheckOnRecord is the step to look at what is on record: it names the agent's tool, as the
// hook output and the MCP tools say it; the CLI puts its own command in its place
// (engine.CheckOnRecord).
const CheckOnRecord = "check it with " + ToolPrefix + "resume_check"

// CompleteStep ends the refusal of a move out of a terminal phase the workflow is active in
// (its definition made the phase terminal after the workflow entered it, or has that one
// phase only): completing it is the way on. It names complete_workflow; the CLI puts its
// complete command in its place.
const CompleteStep = "call complete_workflow with the outcome to finish the workflow"

// DefinitionAsk is the agent's step when an active workflow's definition does not load, in
// resume_check's next step and in the refusal of a move: the file is the user's to fix; the
// CLI gives a person the fix itself.
const DefinitionAsk = "ask the user to fix or restore its definition file"

// GiveAnID ends the refusal of a start whose id cannot be used. It names start_workflow's
// argument; the CLI puts its --id flag in its place.
const GiveAnID = "start again with workflow_id set to an id not used before"

// ErrNoWorkflow is returned by operations that need a record when there is none. It names no
// step: the right one depends on the reader (the model, a person at a shell), so the engine
// and the CLI add it.
var ErrNoWorkflow = errors.New("no active workflow")

// StartRequest asks for a new workflow.
type StartRequest struct {
	Type    string
	Context string
	ID      string // optional; generated from type, UTC time and randomness when empty
	Scope   string
	TTL     string // optional; the definition's TTL when empty
	// Replace archives an active workflow instead of refusing to start.
	Replace bool
}

// maxIDLen is the store's bound on a name (store.MaxNameLen), which an id is there: a longer
// one passed here and was refused by the store with no word of why.
const maxIDLen = 64

var windowsDevices = []string{"con", "prn", "aux", "nul",
	"com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9",
	"lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9"}

// ValidID checks that a workflow id is safe as a file name on every platform: letters, digits,
// '.', '-', '_', starting with a letter or digit, no "..", not ending in '.', not a Windows
// device name, at most 64 characters.
func ValidID(id string) error {
	switch {
	case id == "":
		return errors.New("workflow id is empty")
	case len(id) > maxIDLen:
		return fmt.Errorf("workflow id is longer than %d characters", maxIDLen)
	case !shaped(id, letterOrDigit, func(c byte) bool { return letterOrDigit(c) || c == '.' || c == '_' || c == '-' }):
		return fmt.Errorf("workflow id %s is not valid: use letters, digits, '.', '-' and '_', starting with a letter or digit", Quote(id))
	case strings.Contains(id, ".."), strings.HasSuffix(id, "."):
		return fmt.Errorf("workflow id %s is not valid: no \"..\" and no trailing '.'", Quote(id))
	}
	base, _, _ := strings.Cut(strings.ToLower(id), ".")
	if slices.Contains(windowsDevices, base) {
		return fmt.Errorf("workflow id %s is a reserved device name on Windows", Quote(id))
	}
	return nil
}

// NewID makes a workflow id from the type, the UTC time to the second and 2 random bytes:
// "apex-20261122T173000Z-3f9a". rnd is crypto/rand.Reader when nil.
func NewID(typ string, now time.Time, rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [2]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("making a workflow id: %w", err)
	}
	suffix := "-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
	// A type name may be 64 characters: its id starts with as much of it as fits.
	typ = NormalizeName(typ)
	return typ[:min(len(typ), maxIDLen-len(suffix))] + suffix, nil
}

// Start begins a workflow of def's type in its start phase. current is the active slot's
// record, or nil. An active current workflow is refused with *ActiveError unless req.Replace,
// in which case the result's Archive is the old record marked archived; a finished current
// record is returned in Archive too, so that nothing is lost.
func Start(def *Definition, current *Record, req StartRequest, now time.Time, by Actor) (Result, error) {
	if def == nil {
		return Result{}, errors.New("starting a workflow: no definition given")
	}
	if t := NormalizeName(req.Type); t != "" && t != def.Name {
		return Result{}, fmt.Errorf("starting a workflow: type %q does not match definition %q", t, def.Name)
	}
	ctx := textsafe.OneLine(req.Context)
	if ctx == "" {
		return Result{}, errors.New("starting a workflow: context is empty: give a one-line summary of the work")
	}
	scope := textsafe.OneLine(req.Scope)
	for _, f := range []struct {
		what, text string
		max        int
	}{{"the context", ctx, MaxContextRunes}, {"the scope", scope, MaxScopeRunes}} {
		if err := textFits(f.what, f.text, f.max); err != nil {
			return Result{}, fmt.Errorf("starting a workflow: %w", err)
		}
	}
	now = now.UTC()
	id := strings.TrimSpace(req.ID)
	if id == "" {
		var err error
		if id, err = NewID(def.Name, now, nil); err != nil {
			return Result{}, err
		}
	}
	if err := ValidID(id); err != nil {
		return Result{}, fmt.Errorf("starting a workflow: %w", err)
	}
	ttl := cmp.Or(strings.TrimSpace(req.TTL), def.TTL)
	if _, err := ParseTTL(ttl); err != nil {
		return Result{}, fmt.Errorf("starting a workflow: %w", err)
	}
	var archive *Record
	if current != nil {
		archive = current.Clone()
		// A status not known to be finished is taken as active: only a replace archives it.
		if current.Status == StatusActive || !current.Status.Valid() {
			if !req.Replace {
				return Result{}, &ActiveError{WorkflowID: current.WorkflowID, Type: current.Type, Phase: current.State}
			}
			if current.WorkflowID == id {
				return Result{}, fmt.Errorf("starting a workflow: id %s is the active workflow's own id; %s", id, GiveAnID)
			}
			archive.Status = StatusArchived
			archive.History = append(archive.History, HistoryEntry{From: archive.State, To: archive.State, At: now,
				SessionID: by.SessionID, Note: "archived: replaced by " + id})
		}
	}
	start := def.Start()
	r := &Record{
		Version:          SchemaVersion,
		WorkflowID:       id,
		Type:             def.Name,
		Context:          ctx,
		Scope:            scope,
		State:            start,
		PhaseStatus:      PhaseInProgress,
		Status:           StatusActive,
		Phases:           map[string]Phase{start: {}},
		History:          []HistoryEntry{},
		TTL:              ttl,
		CreatedAt:        now,
		UpdatedAt:        now,
		Owner:            &Owner{SessionID: by.SessionID, PID: by.PID, Host: by.Host, ClientStart: by.ClientStart, Heartbeat: now},
		InterruptionSafe: new(true),
	}
	if def.IsGate(start) {
		r.Approvals = append(r.Approvals, Approval{Phase: start, RequestedAt: now})
	}
	return Result{Record: r, Changed: true, Event: EventStart, To: start, Archive: archive}, nil
}

// TransitionRequest asks to move the workflow to another phase.
type TransitionRequest struct {
	To string
	// From, when set, makes the move a compare-and-swap: it fails with *ConflictError unless
	// the workflow is in this phase.
	From string
	// Checkpoint names a checkpoint saved with the move (the engine writes it in the same
	// atomic change); it is recorded in the history entry.
	Checkpoint string
	// CheckpointJSON, when set, is kept as metadata.checkpoint of the phase being left.
	CheckpointJSON json.RawMessage
	// Outputs produced by the phase being left: recorded on it and in the artifacts.
	Outputs []string
	Note    string
	// Outcome is recorded when the move enters a terminal phase (its note, or "reached
	// <phase>", if empty).
	Outcome string
	// Approval, when set, is a person's yes to leaving the approval phase, recorded with its
	// source and note. Whether a move needs one is the caller's policy (NeedsApproval).
	Approval *Approval
}

// touch stamps the change: updated_at, owner (session, pid, heartbeat), and returns the
// ownership warning, if any, computed against the previous owner.
func touch(r *Record, by Actor, now time.Time) []string {
	var warnings []string
	if w := OwnershipWarning(r, by, now, DefaultLiveWindow); w != "" {
		warnings = append(warnings, w)
	}
	r.UpdatedAt = now
	r.ChangedAt = now
	if by.SessionID != "" || by.PID != 0 {
		setOwner(r, by, now)
	}
	r.InterruptionSafe = new(true)
	return warnings
}

// setOwner makes by the owner of r, the operation's own copy, seen alive at now.
func setOwner(r *Record, by Actor, now time.Time) {
	o := &Owner{SessionID: by.SessionID, PID: by.PID, Host: by.Host, ClientStart: by.ClientStart, Heartbeat: now}
	if r.Owner != nil {
		o.Extra = r.Owner.Extra
	}
	r.Owner = o
}

// unchanged is the result of an operation that has nothing to change.
func unchanged(r *Record) Result {
	return Result{Record: r.Clone(), Event: EventNone, From: r.State, To: r.State}
}

// change is the result of edit applied to a copy of r, stamped by touch: an operation that
// changes the workflow without moving it.
func change(r *Record, ev Event, now time.Time, by Actor, edit func(n *Record)) Result {
	n := r.Clone()
	warnings := touch(n, by, now)
	edit(n)
	return Result{Record: n, Changed: true, Event: ev, From: r.State, To: r.State, Warnings: warnings}
}

func requireActive(r *Record) error {
	if r == nil {
		return ErrNoWorkflow
	}
	if r.Status != StatusActive {
		return &NotActiveError{WorkflowID: r.WorkflowID, Status: r.Status}
	}
	return nil
}

func checkDef(def *Definition, r *Record) error {
	if def == nil {
		return fmt.Errorf("workflow %s: no definition given for type %q", r.WorkflowID, r.Type)
	}
	if def.Name != NormalizeName(r.Type) {
		return fmt.Errorf("workflow %s is of type %q, not %q", r.WorkflowID, r.Type, def.Name)
	}
	return nil
}

// lastMove reports whether r's last move was from -> to, made by session by, and left it there.
func lastMove(r *Record, from, to string, by Actor) bool {
	n := len(r.History)
	if n == 0 || by.SessionID == "" || r.State != to {
		return false
	}
	h := r.History[n-1]
	return h.From == from && h.To == to && h.SessionID == by.SessionID
}

// conflictFrom is the conflict of a caller that expected phase and found r.
func conflictFrom(r *Record, phase string, by Actor) *ConflictError {
	e := &ConflictError{WorkflowID: r.WorkflowID, ExpectedPhase: phase, FoundPhase: r.State, FoundStatus: r.Status}
	if n := len(r.History); n > 0 {
		e.ChangedBy, e.ChangedAt = r.History[n-1].SessionID, r.History[n-1].At
	}
	// A later change without a move (a task, a variable) is told by updated_at and the owner.
	if r.Owner != nil && r.Owner.SessionID != "" && r.UpdatedAt.After(e.ChangedAt) {
		e.ChangedBy, e.ChangedAt = r.Owner.SessionID, r.UpdatedAt
	}
	e.Own = by.SessionID != "" && e.ChangedBy == by.SessionID
	return e
}

// Transition moves the workflow to req.To if def allows it. A move to the current phase is
// idempotent: success with Changed false, nothing to write (unless a compare-and-swap
// expectation fails first; the last move, retried by the session that made it, is made). Entering a gate phase requests its approval; leaving one forward
// records it as approved. Entering a terminal phase completes the workflow.
func Transition(def *Definition, r *Record, req TransitionRequest, now time.Time, by Actor) (Result, error) {
	if r == nil {
		return Result{}, ErrNoWorkflow
	}
	// The compare-and-swap comes first: a racing process that completed the workflow must
	// show up as a conflict, not as "not active".
	if from := NormalizeName(req.From); from != "" && from != r.State {
		if r.Status == StatusActive && lastMove(r, from, NormalizeName(req.To), by) {
			// The move retried by the session that made it (after a timeout, a compaction):
			// already made. Another session expecting from learns of the move it did not make.
			return unchanged(r), nil
		}
		return Result{}, conflictFrom(r, from, by)
	}
	if err := cmp.Or(requireActive(r), checkDef(def, r)); err != nil {
		return Result{}, err
	}
	now = now.UTC()
	to := NormalizeName(req.To)
	if to == r.State {
		// Another live session may have made this move: the caller's is then no move of its own.
		res := Result{Record: r.Clone(), Event: EventNone, From: to, To: to}
		if w := OwnershipWarning(r, by, now, DefaultLiveWindow); w != "" {
			res.Warnings = []string{w}
		}
		return res, nil
	}
	if !def.CanMove(r.State, to) {
		e := &TransitionError{Type: r.Type, From: r.State, Allowed: def.Allowed(r.State), To: to, NoSuchPhase: !def.HasPhase(to)}
		if !def.HasPhase(r.State) {
			e.Phases = slices.Clone(def.Phases)
		}
		return Result{}, e
	}
	for _, o := range req.Outputs {
		if strings.TrimSpace(o) == "" {
			return Result{}, fmt.Errorf("move to %s not made, nothing was changed: an output path is empty; name the file the phase wrote, or leave the output out", to)
		}
		if n := utf8.RuneCountInString(o); n > maxOutputLen {
			return Result{}, fmt.Errorf("move to %s not made, nothing was changed: an output path is %d characters, the most is %d; name a shorter path, or the directory that holds it", to, n, maxOutputLen)
		}
	}
	note := textsafe.OneLine(req.Note)
	if err := textFits("the move's note", note, maxNoteRunes); err != nil {
		return Result{}, fmt.Errorf("move to %s not made: %w", to, err)
	}
	if def.IsTerminal(to) {
		if err := textFits("the outcome", textsafe.OneLine(req.Outcome), maxNoteRunes); err != nil {
			return Result{}, fmt.Errorf("move to %s not made: %w", to, err)
		}
	}
	from := r.State
	n := r.Clone()
	warnings := touch(n, by, now)

	markPhase(n, from, true, now, req.Outputs...)
	if req.CheckpointJSON != nil {
		p := n.Phases[from]
		if p.Metadata == nil {
			p.Metadata = map[string]json.RawMessage{}
		}
		p.Metadata["checkpoint"] = req.CheckpointJSON
		n.Phases[from] = p
	}
	markPhase(n, to, false, now) // re-entering a phase (a back-edge) reopens it
	n.Artifacts = appendNew(n.Artifacts, req.Outputs...)
	if err := cmp.Or(outputsFit(r, n, "move to "+to+" not made"), phaseCheckpointsFit(r, n, to)); err != nil {
		return Result{}, err
	}

	if def.IsGate(from) && def.forward(from, to) {
		var a Approval
		if req.Approval != nil {
			a = *req.Approval
		}
		approve(n, from, now, a.Source, a.Note)
	}
	if def.IsGate(to) {
		request(n, to, now)
	}
	n.History = append(n.History, HistoryEntry{From: from, To: to, At: now, SessionID: by.SessionID,
		Note: note, Checkpoint: strings.TrimSpace(req.Checkpoint)})
	n.State = to
	n.PhaseStatus = PhaseInProgress

	if w := leftOpen(r, from, def.IsTerminal(to)); w != "" {
		warnings = append(warnings, w)
	}
	res := Result{Record: n, Changed: true, Event: EventTransition, From: from, To: to, Warnings: warnings}
	if def.IsTerminal(to) {
		// The move's note is the model's word on the end when no outcome is given (the
		// transition tool takes none): "reached <phase>" would drop it from the completion line.
		finish(n, to, cmp.Or(req.Outcome, note), now)
		res.Completed = true
		res.L2 = CompletionLine(n)
		return res, nil
	}
	if def.IsMajor(from, to) {
		res.L2 = PositionLine(def, n, from)
	}
	return res, nil
}

// maxLeftNamed bounds the open tasks leftOpen names; the rest are counted.
const maxLeftNamed = 5

// leftOpen is the warning for a move out of phase, which leaves r's open tasks of that phase
// open (the move is not refused: the definition decides which moves are allowed, and tasks
// stay updatable in any phase); empty when there are none. ended says the move completes the
// workflow, whose tasks can no longer change: then the open tasks of every phase are named,
// those an earlier phase left open with their phase.
func leftOpen(r *Record, phase string, ended bool) string {
	var names []string
	n, pending, others := 0, false, false
	for _, t := range r.Tasks {
		if (t.Phase != phase && !ended) || (t.Status != TaskPending && t.Status != TaskRunning) {
			continue
		}
		pending = pending || t.Status == TaskPending
		other := ""
		if others = others || t.Phase != phase; t.Phase != phase && t.Phase != "" { // "": an older Cairn's
			other = ", phase " + t.Phase
		}
		if n++; n <= maxLeftNamed {
			names = append(names, secrets.Line(TaskID(t.ID), 64)+" ("+string(t.Status)+other+")")
		}
	}
	if n == 0 {
		return ""
	}
	list := strings.Join(names, ", ")
	if n > maxLeftNamed {
		list += fmt.Sprintf(" and %d more", n-maxLeftNamed)
	}
	head := "phase " + phase + " was left with"
	then := "they stay open: mark each done or failed with update_task once its work is settled"
	switch {
	case others && n == 1: // ended, the one task another phase's
		head, then = "the workflow was completed with", "it is kept as it is"
	case others:
		head, then = "the workflow was completed with", "they are kept as they are"
	case ended && n == 1:
		then = "the workflow is complete, so it is kept as it is"
	case ended:
		then = "the workflow is complete, so they are kept as they are"
	case n == 1:
		then = "it stays open: mark it done or failed with update_task once its work is settled"
	}
	if pending && !ended {
		// A pending task cannot go straight to done or failed (taskMoves).
		then += " (a pending task is set running first)"
	}
	return fmt.Sprintf("%s %d open task%s: %s; %s", head, n, Plural(n), list, then)
}

// approve records the approval of gate phase p: the latest open request, else a new entry.
// An approval given before (cairn approve) is kept as it was.
func approve(r *Record, p string, now time.Time, source, note string) {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		if r.Approvals[i].Phase == p {
			if r.Approvals[i].Open() {
				r.Approvals[i].ApprovedAt = now
				r.Approvals[i].Source, r.Approvals[i].Note = source, textsafe.OneLine(note)
				return
			}
			if source == "" {
				return
			}
			break
		}
	}
	r.Approvals = append(r.Approvals, Approval{Phase: p, RequestedAt: now, ApprovedAt: now, Source: source, Note: textsafe.OneLine(note)})
}

// Approval sources.
const (
	ApprovalElicitation = "elicitation" // the person answered the client's prompt
	ApprovalCLI         = "cli"         // cairn approve
	ApprovalSetting     = "setting"     // a person turned approvals off for the project
)

// ApprovedBy says who gave an approval of source src, in words for people and models.
func ApprovedBy(src string) string {
	switch src {
	case ApprovalElicitation:
		return "a person, asked in Claude Code"
	case ApprovalCLI:
		return "a person, with cairn approve"
	case ApprovalSetting:
		return "the project setting (approvals off)"
	}
	// No source: a seed's user_checkpoints (the user's) or an earlier Cairn's approval (the
	// agent's), which the record does not tell apart.
	return "an approver the older state did not record"
}

// NeedsApproval reports the approval phase a move from r's phase to `to` leaves without a
// person's yes on record: a forward move out of a gate whose latest request is still open (or
// was never made).
func NeedsApproval(def *Definition, r *Record, to string) (string, bool) {
	if def == nil || r == nil || r.Status != StatusActive {
		return "", false
	}
	from, to := r.State, NormalizeName(to)
	if !def.IsGate(from) || !def.CanMove(from, to) || !def.forward(from, to) {
		return "", false
	}
	return from, !approved(r, from)
}

// Awaiting reports the approval phase r waits in for a person's yes, as NeedsApproval counts
// it: with def (nil when unknown), a gate phase whose latest entry holds no yes or that has
// none (a phase that became a gate while the workflow was in it, a record from before its
// requests were kept); a request left open in a phase the definition no longer gates awaits
// nothing. Without def, or in a phase def does not have (renamed or dropped since: nothing
// says the gate went), an open request on record (PendingApproval).
func Awaiting(def *Definition, r *Record) (string, bool) {
	if def == nil || r == nil || r.Status != StatusActive || !def.HasPhase(r.State) {
		return PendingApproval(r)
	}
	if def.IsGate(r.State) && !approved(r, r.State) {
		return r.State, true
	}
	return "", false
}

// GateUnpassed names the approval gate r cannot complete past without a person's yes: the
// gate ahead of its phase (Definition.GateAhead). Where its phase is not in def (renamed or
// dropped since) where it stands is unknown, so it is the first gate of def with no yes on
// record, unless the phase it stands in holds one (a lost gate approved: that yes is the way
// out). "" for none, or a nil def.
func GateUnpassed(def *Definition, r *Record) string {
	if def == nil || def.HasPhase(r.State) {
		return def.GateAhead(r.State)
	}
	if approved(r, r.State) {
		return ""
	}
	for _, g := range def.Approvals {
		if !approved(r, g) {
			return g
		}
	}
	return ""
}

// request asks for phase p's approval at now: the latest entry of p, when it is a request
// still open, is asked again (a request added at each entry would grow the record without
// bound when the work goes back and forth), else a request is added.
func request(r *Record, p string, now time.Time) {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		if r.Approvals[i].Phase == p {
			if r.Approvals[i].Open() {
				r.Approvals[i].RequestedAt = now
				return
			}
			break
		}
	}
	r.Approvals = append(r.Approvals, Approval{Phase: p, RequestedAt: now})
}

// approved reports whether the latest approval entry of phase p holds a yes.
func approved(r *Record, p string) bool {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		if r.Approvals[i].Phase == p {
			return !r.Approvals[i].ApprovedAt.IsZero()
		}
	}
	return false
}

// ApprovalError refuses leaving an approval phase without a person's yes.
type ApprovalError struct {
	WorkflowID string
	Phase      string // the approval phase being left
	To         string
}

func (e *ApprovalError) Error() string {
	return fmt.Sprintf("leaving phase %s needs a person's approval: %s", e.Phase, ApproveThenMove)
}

// ApproveThenMove ends ApprovalError: who approves, where, and then the move. The command
// line gives a person in a terminal of their own their step in its place.
const ApproveThenMove = "a person runs `cairn approve [NOTE]` in the project, " + OwnTerminal + ", then the move can be made again"

// OwnTerminal is where a person runs cairn approve: it is refused in every shell Claude Code
// starts (the agent's Bash tool, the hooks), where the agent could run it too.
const OwnTerminal = "in a terminal of their own (not through Claude Code, where it is refused)"

// ErrNothingWaits is why Approve refuses a phase that waits for no approval. It names no
// step: the caller that asked a person adds it.
var ErrNothingWaits = errors.New("waits for no approval")

// Approve records a person's yes to the approval the current phase waits for (Awaiting). A
// phase approved already is no change; it is refused when the phase waits for none
// (ErrNothingWaits).
func Approve(def *Definition, r *Record, source, note string, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	p, ok := Awaiting(def, r)
	if !ok {
		if approved(r, r.State) && (def == nil || !def.HasPhase(r.State) || def.IsGate(r.State)) {
			return unchanged(r), nil // approved already: a repeat changes nothing
		}
		return Result{}, fmt.Errorf("workflow %s is in phase %s, which %w; nothing was changed", r.WorkflowID, said(r.State), ErrNothingWaits)
	}
	if err := textFits("the approval's note", textsafe.OneLine(note), maxNoteRunes); err != nil {
		return Result{}, fmt.Errorf("phase %s not approved: %w", p, err)
	}
	now = now.UTC()
	res := change(r, EventApprove, now, by, func(n *Record) { approve(n, p, now, source, note) })
	// The live session that owns the workflow is the one waiting for this yes: approving
	// cannot cross its work, so there is no ownership warning to give.
	res.Warnings = nil
	return res, nil
}

// markPhase marks phase name of r completed at now, or open again, and adds outputs to it.
func markPhase(r *Record, name string, completed bool, now time.Time, outputs ...string) {
	if r.Phases == nil {
		r.Phases = map[string]Phase{}
	}
	p := r.Phases[name]
	p.Completed, p.CompletedAt = completed, time.Time{}
	if completed {
		p.CompletedAt = now
	}
	p.Outputs = appendNew(p.Outputs, outputs...)
	r.Phases[name] = p
}

func finish(r *Record, phase, outcome string, now time.Time) {
	markPhase(r, phase, true, now)
	r.PhaseStatus = PhaseComplete
	r.Status = StatusCompleted
	r.CompletedAt = now
	r.Outcome = cmp.Or(textsafe.OneLine(outcome), reachedOutcome(phase))
}

// reachedOutcome is the outcome Cairn records itself for a workflow completed without one: in
// its own words, from a phase name (ValidName's), never quoted as a tool's (CompletionLine).
func reachedOutcome(phase string) string { return "reached " + phase }

// Complete ends the workflow where it stands with an outcome (status completed, completed_at,
// the current phase marked completed) and owes the completion line.
func Complete(r *Record, outcome string, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	if err := textFits("the outcome", textsafe.OneLine(outcome), maxNoteRunes); err != nil {
		return Result{}, fmt.Errorf("workflow %s not completed: %w", r.WorkflowID, err)
	}
	now = now.UTC()
	res := change(r, EventComplete, now, by, func(n *Record) { finish(n, n.State, outcome, now) })
	if w := leftOpen(r, r.State, true); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.Completed, res.L2 = true, CompletionLine(res.Record)
	return res, nil
}

// echoable reports whether a caller's value may be repeated in an error: a phase-shaped
// word (lower case, digits, '_' and '-', at most 64) that has no secret's shape. Anything
// else may be whatever the caller pasted, and is not repeated.
func echoable(s string) bool {
	return len(s) <= 64 && shaped(s, nameByte, nameByte) && secrets.ScanString(s) == nil
}

// unclearID reports whether a task or milestone id holds invalid UTF-8 or a character that
// makes it read as another id ("t1" and "t1" with a zero-width space) or breaks the line it is
// shown on (controls, invisible characters, line and paragraph separators); a space is fine.
func unclearID(id string) bool {
	return !utf8.ValidString(id) || strings.ContainsFunc(id, unclearRune)
}

// unclearRune reports whether r is one of the characters unclearID looks for.
func unclearRune(r rune) bool {
	return r != ' ' && textsafe.Dropped(r) || r == '\u2028' || r == '\u2029'
}

// Quote is a caller's value as an error may repeat it: quoted and cut at maxQuoted runes, or,
// when it has a secret's shape, a phrase saying it is not repeated (the caller pasted it; it
// is never stored, and an error must not say it back).
func Quote(s string) string {
	if secrets.ScanString(s) != nil {
		return NotRepeated
	}
	return strconv.Quote(secrets.Clip(s, maxQuoted))
}

// maxQuoted caps a value Quote repeats: as long as any name or id taken (a milestone's is the
// longest), so a valid one is never cut, and a 100 KB argument does not come back whole in
// its refusal.
const maxQuoted = maxMilestoneID

// said is s, or the phrase Quote uses when s has a secret's shape.
func said(s string) string {
	if secrets.ScanString(s) != nil {
		return NotRepeated
	}
	return s
}

// NotRepeated stands for a caller's value, or a field of a hook's event, of a secret's shape.
const NotRepeated = "(not repeated: it has a secret's shape)"

// TaskID is a task id as a message shows it (said): quoted when it holds a space, so that
// "task write the tests is done" reads as one id and the words after it as the message's.
func TaskID(id string) string {
	if s := said(id); s != id {
		return s
	}
	return spaced(id)
}

// spaced is id, quoted when it holds a space; for ids a message shows without said's scan.
// An id unclearID refuses (an older Cairn stored it, or it is refused now) is quoted with each
// such character written as its code, so that "t1" and a mark after it do not read as "t1".
func spaced(id string) string {
	if unclearID(id) {
		var b strings.Builder
		for len(id) > 0 {
			r, n := utf8.DecodeRuneInString(id)
			if q := strconv.Quote(id[:n]); unclearRune(r) && r != utf8.RuneError {
				if r > 0xffff {
					fmt.Fprintf(&b, `\U%08x`, r)
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			} else {
				b.WriteString(q[1 : len(q)-1])
			}
			id = id[n:]
		}
		return `"` + b.String() + `"`
	}
	if strings.IndexByte(id, ' ') >= 0 {
		return strconv.Quote(id)
	}
	return id
}

func validVarKey(k string) error {
	if len(k) > 128 || !shaped(k, func(c byte) bool { return letter(c) || c == '_' }, func(c byte) bool { return letterOrDigit(c) || c == '_' }) {
		return errors.New("the variable name is not valid: use letters, digits and '_', not starting with a digit (like PLAN_PATH)")
	}
	return nil
}

// SetVar sets a workflow variable (seed 003's append_workflow_state). Setting the value it
// already has changes nothing.
func SetVar(r *Record, key, value string, now time.Time, by Actor) (Result, error) {
	if err := cmp.Or(requireActive(r), validVarKey(key)); err != nil {
		return Result{}, err
	}
	if old, ok := r.Vars[key]; ok && old == value {
		return unchanged(r), nil
	}
	res := change(r, EventVar, now.UTC(), by, func(n *Record) {
		if n.Vars == nil {
			n.Vars = map[string]string{}
		}
		n.Vars[key] = value
	})
	res.Subject = "variable " + said(key)
	return res, nil
}

// UnsetVar removes a workflow variable; one that is not set changes nothing.
func UnsetVar(r *Record, key string, now time.Time, by Actor) (Result, error) {
	if err := cmp.Or(requireActive(r), validVarKey(key)); err != nil {
		return Result{}, err
	}
	if _, ok := r.Vars[key]; !ok {
		return unchanged(r), nil
	}
	res := change(r, EventVar, now.UTC(), by, func(n *Record) { delete(n.Vars, key) })
	res.Subject = "unset " + said(key)
	return res, nil
}

// AddArtifacts records artifact paths (deduplicated); already known paths change nothing.
func AddArtifacts(r *Record, paths []string, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	var add []string
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			return Result{}, errors.New("adding artifacts: a path is empty")
		}
		if !slices.Contains(r.Artifacts, p) && !slices.Contains(add, p) {
			add = append(add, p)
		}
	}
	if len(add) == 0 {
		return unchanged(r), nil
	}
	res := change(r, EventArtifact, now.UTC(), by, func(n *Record) { n.Artifacts = append(n.Artifacts, add...) })
	if err := outputsFit(r, res.Record, "artifacts not added"); err != nil {
		return Result{}, err
	}
	return res, nil
}

// DropOutputs takes off the record the outputs (of phases, of done tasks) and artifacts that
// exists says the project does not hold: those in paths, or every one when paths is empty. It
// is the answer "go on without them" to FindingOutputMissing, which otherwise every session
// start asks again. No file is touched; the journal keeps what was dropped (the Subject). A
// path given that is not such an output refuses the call, nothing dropped.
func DropOutputs(r *Record, paths []string, exists func(string) bool, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	missing := slices.DeleteFunc(recordedOutputs(r), exists)
	drop := missing
	if len(paths) > 0 {
		drop = nil
		for _, p := range paths {
			if !slices.Contains(missing, p) {
				return Result{}, fmt.Errorf("%s is not a recorded output missing on disk, so nothing was dropped: cairn status names those that are", Quote(p))
			}
			if !slices.Contains(drop, p) {
				drop = append(drop, p)
			}
		}
	}
	if len(drop) == 0 {
		return unchanged(r), nil
	}
	gone := func(p string) bool { return slices.Contains(drop, p) }
	res := change(r, EventDrop, now.UTC(), by, func(n *Record) {
		for name, ph := range n.Phases {
			if slices.ContainsFunc(ph.Outputs, gone) {
				ph.Outputs = slices.DeleteFunc(ph.Outputs, gone)
				n.Phases[name] = ph
			}
		}
		for i, t := range n.Tasks {
			if t.Status == TaskDone && gone(t.Output) {
				n.Tasks[i].Output = ""
			}
		}
		n.Artifacts = slices.DeleteFunc(n.Artifacts, gone)
	})
	shown := make([]string, len(drop))
	for i, p := range drop {
		shown[i] = secrets.Clip(p, maxShownPath)
	}
	res.Subject = "dropped " + listCapped(shown, 5)
	return res, nil
}

// recordedOutputs lists, once each, the outputs of r's phases and done tasks and its artifacts.
func recordedOutputs(r *Record) []string {
	var out []string
	note := func(p string) {
		if strings.TrimSpace(p) != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Phases)) {
		for _, o := range r.Phases[name].Outputs {
			note(o)
		}
	}
	for _, t := range r.Tasks {
		if t.Status == TaskDone {
			note(t.Output)
		}
	}
	for _, a := range r.Artifacts {
		note(a)
	}
	return out
}

// maxNoteRunes is transition's, complete_workflow's, update_task's and an approval's own limit
// on a note or an outcome, which the record keeps wherever it comes from: the history keeps 50
// notes, and no operation shortens them. (A context and a scope are set once, at the start.)
const maxNoteRunes = 500

// A workflow's context and scope are set once, at the start, and kept for its life: in
// every report, MEMORY.md line, listing and archive index line. These are the start_workflow
// tool's limits on them, and cairn start's.
const (
	MaxContextRunes = 300
	MaxScopeRunes   = 200
)

// NoteFits refuses a note past the 500 characters any note or outcome may have, once made
// one line; what names it.
func NoteFits(what, note string) error {
	return textFits(what, textsafe.OneLine(note), maxNoteRunes)
}

// textFits refuses s, cleaned text, past max characters; what names it.
func textFits(what, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Errorf("%s is %d characters, the most is %d; nothing was changed: keep it to a line and put the rest in a file", what, n, max)
	}
	return nil
}

// Outputs and the checkpoints kept with phases are bounded where a move adds them, as tasks
// are (tasks.go), well inside the 1 MiB a record may hold: a record stored over these bounds
// still moves, as long as the move does not add to what is over.
const (
	// maxOutputs is the most outputs a workflow's phases keep, counted over all of them.
	maxOutputs = 500
	// maxOutputsBytes bounds the phases' outputs and the artifacts as JSON writes them.
	maxOutputsBytes = 128 << 10
	// maxOutputLen is one output path's, in characters: transition's own limit, as its schema
	// counts it.
	maxOutputLen = 1024
	// maxPhaseCheckpointsBytes bounds the checkpoints moves keep with the phases they leave.
	maxPhaseCheckpointsBytes = 512 << 10
)

// outputsFit refuses n, what a change made of was, when it takes the outputs its phases
// keep, or their bytes with the artifacts, past their limits; refused says what was not done.
func outputsFit(was, n *Record, refused string) error {
	count := func(r *Record) int {
		c := 0
		for _, p := range r.Phases {
			c += len(p.Outputs)
		}
		return max(c, len(r.Artifacts))
	}
	const step = "; name the directory that holds them instead of each file, or move with no outputs (the files stay where they are)"
	if c := count(n); c > maxOutputs && c > count(was) {
		return fmt.Errorf("%s, nothing was changed: the workflow would keep %d outputs, over the %d outputs it may keep%s", refused, c, maxOutputs, step)
	}
	if s := OutputsSize(n); s > maxOutputsBytes && s > OutputsSize(was) {
		return fmt.Errorf("%s, nothing was changed: the workflow's outputs would take %d KiB, over the %d KiB they may take%s", refused, (s+1023)>>10, maxOutputsBytes>>10, step)
	}
	return nil
}

// OutputsSize is what r's phase outputs and artifacts take as JSON.
func OutputsSize(r *Record) int {
	size := func(v []string) int {
		if len(v) == 0 {
			return 0 // not written
		}
		b, _ := json.Marshal(v)
		return len(b)
	}
	s := size(r.Artifacts)
	for _, p := range r.Phases {
		s += size(p.Outputs)
	}
	return s
}

// SplitCheckpoint is the step, in the agent's tools, for data too large for the record.
const SplitCheckpoint = "save_checkpoint, split to fit"

// phaseCheckpointsFit refuses n, what a move to to made of was, when it takes the checkpoints
// kept with the phases past maxPhaseCheckpointsBytes.
func phaseCheckpointsFit(was, n *Record, to string) error {
	s := PhaseCheckpointsSize(n)
	if s <= maxPhaseCheckpointsBytes || s <= PhaseCheckpointsSize(was) {
		return nil
	}
	return fmt.Errorf("move to %s not made, nothing was changed: the checkpoints kept with the phases would take %d KiB, over the %d KiB they may take; keep the data in named checkpoints ("+SplitCheckpoint+") and move with a small checkpoint naming them, or none", to, (s+1023)>>10, maxPhaseCheckpointsBytes>>10)
}

// PhaseCheckpointsSize is what the checkpoints kept with r's phases take.
func PhaseCheckpointsSize(r *Record) int {
	s := 0
	for _, p := range r.Phases {
		s += len(p.Metadata["checkpoint"])
	}
	return s
}

// SetEnforcement replaces the record's violations (an empty list clears them), deriving
// blocking and the summary. The list already on record changes nothing.
func SetEnforcement(r *Record, vs []Violation, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	e, err := NewEnforcement(vs)
	if err != nil {
		return Result{}, fmt.Errorf("setting enforcement: %w", err)
	}
	if old := r.Enforcement; old != nil && old.Blocking == e.Blocking && old.Summary == e.Summary &&
		slices.EqualFunc(old.Violations, e.Violations, sameViolation) {
		return unchanged(r), nil
	}
	return change(r, EventEnforce, now.UTC(), by, func(n *Record) {
		if n.Enforcement != nil {
			e.Extra = n.Enforcement.Extra // n is a copy: its map is its own
		}
		n.Enforcement = &e
	}), nil
}

func sameViolation(a, b Violation) bool {
	return a.Code == b.Code && a.Severity == b.Severity && a.Details == b.Details &&
		maps.EqualFunc(a.Extra, b.Extra, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// SetPhaseStatus sets the current phase's status (pending, in_progress, complete, failed,
// blocked) without moving.
func SetPhaseStatus(r *Record, s PhaseStatus, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	if !s.Valid() {
		return Result{}, fmt.Errorf("phase status %s is not valid: use pending, in_progress, complete, failed or blocked", Quote(string(s)))
	}
	if r.PhaseStatus == s {
		return unchanged(r), nil
	}
	return change(r, EventPhase, now.UTC(), by, func(n *Record) { n.PhaseStatus = s }), nil
}

// PhasesWithCheckpoint are r's phases that keep a checkpoint (transition's, kept with the
// phase it left), in name order.
func PhasesWithCheckpoint(r *Record) []string {
	var out []string
	for name, p := range r.Phases {
		if _, ok := p.Metadata["checkpoint"]; ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
