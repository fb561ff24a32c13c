package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"

	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// StartRequest is start_workflow's input.
type StartRequest struct {
	Type       string `json:"type"`
	Context    string `json:"context"`
	WorkflowID string `json:"workflow_id,omitempty"`
	Scope      string `json:"scope,omitempty"`
	TTL        string `json:"ttl,omitempty"`
	Replace    bool   `json:"replace,omitempty"`
}

// TransitionRequest is transition's input. Checkpoint, when present, is a JSON object kept as
// metadata.checkpoint of the phase being left, in the same atomic write as the move.
type TransitionRequest struct {
	To         string          `json:"to"`
	From       string          `json:"from,omitempty"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	Outputs    []string        `json:"outputs,omitempty"`
	Note       string          `json:"note,omitempty"`
	// Approval is a person's yes to leaving an approval phase (the MCP server sets it when
	// the person accepted its elicitation). No tool argument can set it.
	Approval *workflow.Approval `json:"-"`
	// WorkflowID, when set, is the workflow the move is for (the one the person approved):
	// the move is refused if another is active. No tool argument can set it.
	WorkflowID string `json:"-"`
}

// TaskRequest is update_task's input.
type TaskRequest struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Output string `json:"output,omitempty"`
	Note   string `json:"note,omitempty"`
	// Rerun starts a new run of a task already running (workflow.TaskUpdate.Rerun): set by
	// the claims rules on a takeover, never by a caller's arguments.
	Rerun bool `json:"-"`
}

// Violation is one enforcement finding (seed 001), as set_enforcement takes it and the resume
// report shows it.
type Violation = report.Violation

// LearningRequest is record_learning's input.
type LearningRequest struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Type  string `json:"type,omitempty"`
}

// Result is what every state-changing operation returns: what happened in words, the
// workflow as it now stands, and warnings (L2 unavailable, another live session owns the
// workflow, ...). Changed is false for an idempotent no-op.
//
// WorkflowID, Phase and Allowed say where the workflow stands after the change: what the
// MCP tools return. Workflow is the whole record (or the initiative), for callers that ask
// for it; the tools leave it out, as echoing it on every call costs the model's context.
type Result struct {
	Message    string          `json:"message"`
	Changed    bool            `json:"changed"`
	WorkflowID string          `json:"workflow_id,omitempty"`
	Phase      string          `json:"phase,omitempty"`
	Allowed    []string        `json:"allowed,omitempty"`
	Workflow   json.RawMessage `json:"workflow,omitempty"`
	Revision   int64           `json:"revision,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
	// AwaitingApproval names the phase a move (start, transition) left the workflow in when
	// it is an approval phase that waits for a person's yes, and Next then says that leaving
	// it needs that yes: a caller would otherwise learn it only when the move out is refused.
	AwaitingApproval string `json:"awaiting_approval,omitempty"`
	Next             string `json:"next,omitempty"`
}

// warned is ws with each of more that says something.
func warned(ws []string, more ...string) []string {
	for _, w := range more {
		if w != "" {
			ws = append(ws, w)
		}
	}
	return ws
}

// messages are the notices' messages.
func messages(ns []store.Notice) (out []string) {
	for _, n := range ns {
		out = append(out, n.Message)
	}
	return out
}

// op computes a change of the active workflow (cur is nil when there is none).
type op func(cur *workflow.Record) (workflow.Result, error)

// eventDetail is what the journal records about who made a change, as a compact JSON string.
type eventDetail struct {
	Actor   string `json:"actor,omitempty"`
	Session string `json:"session_id,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Note    string `json:"note,omitempty"`
	// Subject names the task or variable a change within a phase changed (workflow.Result's).
	Subject string `json:"subject,omitempty"`
}

// change runs f on the active workflow under the workflow lock and commits what it returns:
// the journal first, then the snapshot (L1). It then writes the L2 line the change owes.
// Nothing is written when f reports no change.
func (e *Engine) change(f op, note string) (*Result, workflow.Result, error) {
	var wres workflow.Result
	var was *workflow.Record // the record f changed, for a refusal to weigh what f added
	sres, err := e.st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
		was = r
		restore := e.hideEndedOwner(r)
		// An owner in a long turn is live past its heartbeat's window: the change warns of it.
		if r != nil && r.Owner != nil {
			r.Owner.ClientRuns = e.liveWindow(r, e.now()) > workflow.DefaultLiveWindow
		}
		var err error
		if wres, err = f(r); err != nil {
			return nil, store.Event{}, err
		}
		restore(wres.Record)
		if wres.Record != nil && wres.Record.Owner != nil {
			wres.Record.Owner.ClientRuns = false
		}
		if !wres.Changed || wres.Record == nil {
			return nil, store.Event{}, nil
		}
		workflow.TrimHistory(wres.Record) // the journal keeps the full history
		if workflow.MayTakeEndingRoom(wres.Record, wres.Event) {
			// An ending, a heartbeat or a recovery, which must land though each may grow the
			// record (a completed_at, an owner's host): a record an older Cairn filled to the cap
			// gives what is kept elsewhere (only these writes take that long a look at its size).
			if b, err := json.Marshal(wres.Record); err == nil && len(b) > strictjson.MaxSize {
				var moves, outputs, artifacts, checkpoints int
				switch {
				case wres.Record.Status != workflow.StatusActive:
					moves, outputs, artifacts, checkpoints = workflow.FitEnding(wres.Record, r, len(b), strictjson.MaxSize)
				case wres.Event == workflow.EventHeartbeat && r != nil:
					outputs, artifacts, _ = workflow.FitHeartbeat(wres.Record, r.Owner, len(b), strictjson.MaxSize)
				default:
					outputs, artifacts, _ = workflow.FitKept(wres.Record, len(b), strictjson.MaxSize)
				}
				wres.Warnings = warned(wres.Warnings, leftOut(wres.Record.WorkflowID, moves, outputs, artifacts, checkpoints))
			}
		}
		return wres.Record, e.event(string(wres.Event), eventDetail{From: wres.From, To: wres.To, Subject: wres.Subject}, note), nil
	})
	if je := tooLarge(err); je != nil {
		return nil, wres, fmt.Errorf("workflow not saved: it would not fit in the 1 MiB a workflow record may hold (%s); nothing was changed. %s", je.Reason, fullBy(wres, was, e.sharedOn(wres.Record)))
	}
	if err != nil {
		return nil, wres, stateErr(err)
	}
	res := &Result{Changed: sres.Changed, Workflow: sres.Data, Revision: sres.Revision, Warnings: wres.Warnings}
	e.where(res, wres.Record)
	res.Warnings = append(res.Warnings, messages(sres.Notices)...)
	if sres.Changed && wres.L2 != "" {
		res.Warnings = warned(res.Warnings, e.writeL2(sres.ID, sres.Revision, wres.L2))
	}
	return res, wres, nil
}

// leftOut says what workflow.FitEnding left out of the record of workflow id to fit a write
// that must land, and where it is kept: "" when nothing.
func leftOut(id string, moves, outputs, artifacts, checkpoints int) string {
	// counted says n things, one as one: "its oldest move", "its 3 oldest moves".
	counted := func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return fmt.Sprintf(many, n)
	}
	var parts []string
	if moves > 0 {
		parts = append(parts, counted(moves, "its oldest move", "its %d oldest moves")+fmt.Sprintf(", which its journal keeps (`cairn history %s` lists them all)", id))
	}
	if outputs > 0 {
		parts = append(parts, counted(outputs, "1 output", "%d outputs")+" from its phases, which its artifacts list")
	}
	if artifacts > 0 {
		parts = append(parts, counted(artifacts, "its oldest artifact", "its %d oldest artifacts")+", which its journal keeps")
	}
	if checkpoints > 0 {
		parts = append(parts, counted(checkpoints, "the checkpoint kept with a phase", "the checkpoints kept with %d phases")+", which its journal keeps")
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("to fit in the 1 MiB a workflow record may hold, the record of %s leaves out %s", id, strings.Join(parts, ", and "))
}

// tooLarge returns err's refusal of a document over the 1 MiB it may hold, or nil. The
// checker words it "invalid JSON at byte 1048576", which says neither that nor what to do.
func tooLarge(err error) *strictjson.Error {
	if je, ok := errors.AsType[*strictjson.Error](err); ok && je.Kind == strictjson.TooLarge {
		return je
	}
	return nil
}

// The steps a refusal over the 1 MiB cap names for what fills the record, in the agent's
// tools; the CLI puts the person's commands in their place.
const (
	ShortenTasks      = "update_task with the task's status and a shorter note"
	SplitCheckpoint   = workflow.SplitCheckpoint
	ShortenViolations = "set_enforcement with shorter details replaces them"
	// KeepData is the step for a move's checkpoint that was not recorded.
	KeepData = "save_checkpoint keeps the data"
	// ArchiveToGoOn is the step for what no operation shortens: the agent archives the
	// workflow by replacing it, which only the user decides.
	ArchiveToGoOn = "ask the user first, then start_workflow with replace archives it whole (kept, not lost) and the new workflow takes over the work"
	// ShowWhatFills is where the whole record is seen: no tool shows all of it, and the
	// plugin's bin/ is on the agent's PATH.
	ShowWhatFills = "run `cairn show` in your Bash tool, which shows what fills it"
)

// The steps at the limits of variables and named checkpoints. The agent has no tool that
// unsets or deletes, and is not steered to a step that loses data: it asks the user; the CLI
// puts the person's commands in their place.
const (
	AskWhichVars        = "ask the user which ones are no longer needed, for the user to unset"
	AskWhichCheckpoints = "ask the user which ones are no longer needed: save over one of those (the same name replaces it), or the user removes them"
)

// fullBy names what takes the most of res.Record, a record refused as over 1 MiB by a change
// of was out of phase res.From (the phase it was in), and the step that makes room without
// losing the workflow: a write that shrinks a record is never refused. A move that fits with a
// small checkpoint in place of the one it leaves with that phase (its own, or one kept
// before), or without the outputs it adds, is told that step alone; a change that grew the
// variables, the tasks or the violations by what must go, that part's step.
// Archiving is named only after `cairn show`, for what no operation can shorten, with the
// remote r is shared through (sharedOn), where it would end too.
func fullBy(res workflow.Result, was *workflow.Record, sharedOn string) string {
	r, from := res.Record, res.From
	if r == nil {
		return "What fills it is not known here: " + ShowWhatFills + "."
	}
	archive := ArchiveToGoOn
	if sharedOn != "" {
		archive += "; " + workflow.EndsElsewhere(sharedOn)
	}
	size := func(v any) int {
		b, _ := json.Marshal(v)
		return len(b)
	}
	type part struct {
		size int
		step string
		grew int // what the change added to it, whose step loses nothing (0: weighed above)
	}
	left := len(r.Phases[from].Metadata["checkpoint"])
	leftStep := "The checkpoint kept with phase " + strings.ReplaceAll(from, "%", "%%") + " takes %d KiB of it: keep large data in named checkpoints (" + SplitCheckpoint + ") and leave that phase with a small checkpoint in its place."
	// What must go for the record to fit, with a KiB to spare: a step of the change's own
	// that frees that much loses nothing, and is the step, however much more anything else
	// takes.
	over := strictjson.MaxSize
	if b, err := json.Marshal(r); err == nil {
		limit := strictjson.MaxSize
		if !workflow.MayTakeEndingRoom(r, res.Event) {
			limit -= workflow.EndingRoom
		}
		over = len(b) + 1<<10 - limit
	}
	if res.Event == workflow.EventTransition && was != nil {
		if left > 0 && left >= over {
			if h := r.History; len(h) > 0 && h[len(h)-1].Checkpoint != "" {
				leftStep = "This move's checkpoint takes %d KiB of it: move with a smaller checkpoint (keep large data with " + SplitCheckpoint + ")."
			}
			return fmt.Sprintf(leftStep, (left+1023)>>10)
		}
		if added := workflow.OutputsSize(r) - workflow.OutputsSize(was); added > 0 && added >= over {
			return fmt.Sprintf("This move's outputs take %d KiB of it: move with fewer, naming the directory that holds them instead of each file.", (added+1023)>>10)
		}
	}
	if was == nil {
		was = &workflow.Record{}
	}
	parts := []part{
		{size(r.Vars), "Its variables take %d KiB of it: " + AskWhichVars + ", or keep a large value in a file and set its path.", size(r.Vars) - size(was.Vars)},
		{size(r.Tasks), "Its tasks take %d KiB of it: shorten long task notes and outputs (" + ShortenTasks + ").", size(r.Tasks) - size(was.Tasks)},
		// Only a move out of a phase replaces the checkpoint kept with it: the one of the phase
		// the change left (from) gives way to a small one, the others to nothing.
		{size: left, step: leftStep},
		{size: workflow.PhaseCheckpointsSize(r) - left, step: "The checkpoints kept with its other phases take %d KiB of it, and no operation shortens them: " + archive + "."},
		{size(r.Enforcement), "Its violations take %d KiB of it: " + ShortenViolations + ".", size(r.Enforcement) - size(was.Enforcement)},
		// No operation shortens these: they are named, with the step that keeps the work.
		{size: workflow.OutputsSize(r), step: "Its outputs and artifacts take %d KiB of it, and no operation shortens them: " + archive + "."},
		{size: size(r.History), step: "Its history of moves takes %d KiB of it, and no operation shortens it: " + archive + "."},
	}
	// The part the change grew by what must go (variables it set, a task's note, violations).
	if i := slices.IndexFunc(parts, func(p part) bool { return p.grew > 0 && p.grew >= over }); i >= 0 {
		return fmt.Sprintf(parts[i].step, (parts[i].size+1023)>>10)
	}
	most := slices.MaxFunc(parts, func(a, b part) int { return cmp.Compare(a.size, b.size) })
	if most.size < 256<<10 { // something no operation shortens fills it
		return "No one part a change shortens fills it: " + ShowWhatFills + "; if none of it can be shortened, " + archive + "."
	}
	return fmt.Sprintf(most.step, (most.size+1023)>>10)
}

// where fills in the workflow's id, phase and next phases after a change.
func (e *Engine) where(res *Result, r *workflow.Record) {
	if r == nil {
		return
	}
	res.WorkflowID = r.WorkflowID
	if r.Status != workflow.StatusActive {
		return // ended: no phase to be at
	}
	res.Phase = r.State
	if def, err := e.definitionFor(r); err == nil {
		res.Allowed = def.Allowed(r.State)
	}
}

// event is the journal's event of a change, by this engine's actor and session: d says what
// changed (its phases, its subject); a note its detail cannot hold whole keeps its start, cut
// with "…".
func (e *Engine) event(kind string, d eventDetail, note string) store.Event {
	b, ok := e.detail(d, note)
	if !ok {
		r := []rune(textsafe.OneLine(note))
		b, _ = e.detail(d, string(r[:e.noteRoom(d, r, textsafe.Ellipsis)])+textsafe.Ellipsis)
	}
	return store.Event{Kind: kind, Detail: string(b)}
}

// noteRoom is the most runes of r that an event's detail d holds as its note, followed by end.
func (e *Engine) noteRoom(d eventDetail, r []rune, end string) int {
	lo, hi := 0, len(r)
	for lo < hi {
		if m := (lo + hi + 1) / 2; func() bool { _, ok := e.detail(d, string(r[:m])+end); return ok }() {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// detail is an event's detail, d with this engine's actor and session and note, and whether
// it fits the journal's store.MaxEventDetail.
func (e *Engine) detail(d eventDetail, note string) ([]byte, bool) {
	d.Actor, d.Session, d.Note = e.cfg.Actor, e.cfg.SessionID, textsafe.OneLine(note)
	b, _ := json.Marshal(d)
	return b, len(b) <= store.MaxEventDetail
}

// noteKept refuses a note that an event of a move from, to could not keep whole, where the
// journal is the only place that keeps it: past the 500 characters a note may have, or past
// the room the event's detail has (a wide character takes up to 4 bytes, < > & 6 each).
func (e *Engine) noteKept(what, from, to, note string) error {
	if err := workflow.NoteFits(what, note); err != nil {
		return err
	}
	d := eventDetail{From: from, To: to}
	if _, ok := e.detail(d, note); ok {
		return nil
	}
	r := []rune(textsafe.OneLine(note))
	return fmt.Errorf("%s is %d characters, the most the journal keeps of these is %d; nothing was changed: keep it to a line and put the rest in a file", what, len(r), e.noteRoom(d, r, ""))
}

// needActive adapts an operation that needs an active workflow.
func needActive(f op) op {
	return func(r *workflow.Record) (workflow.Result, error) {
		if r == nil {
			return workflow.Result{}, errNoActive{}
		}
		return f(r)
	}
}

// onActive adapts an operation that needs an active workflow and its definition.
func (e *Engine) onActive(f func(def *workflow.Definition, r *workflow.Record) (workflow.Result, error)) op {
	return needActive(func(r *workflow.Record) (workflow.Result, error) {
		def, err := e.definitionFor(r)
		if err != nil {
			return workflow.Result{}, e.definitionLost(r)
		}
		return f(def, r)
	})
}

// definitionLost says why an active workflow has no definition. Its type is on record, so
// "unknown workflow type" would mislead: the definition file stopped loading (or is gone), and
// the fix is that file, not a new workflow started over this one.
func (e *Engine) definitionLost(r *workflow.Record) error {
	msg := fmt.Sprintf("workflow %s: no definition of its type %s loads", r.WorkflowID, workflow.Quote(r.Type))
	if broken := e.definitionErrors(); len(broken) > 0 {
		msg += ": " + strings.Join(broken, "; ")
	} else {
		msg += fmt.Sprintf(" (none in %s; loaded: %s)", e.workflow, strings.Join(e.definitions().Names(), ", "))
	}
	return errors.New(msg + "; the workflow was kept as it is: " + DefinitionAsk + ", then try again")
}

// errNoActive names one next step for a model that called a write tool with nothing active:
// resume_check says what is on record and the step from there (resume, or start_workflow).
type errNoActive struct{}

func (errNoActive) Error() string {
	return ErrNoActiveWorkflow.Error() + "; call resume_check, which says what is on record and the one step from there"
}

func (errNoActive) Unwrap() error { return ErrNoActiveWorkflow }

// Start begins a workflow in its definition's first phase. An active workflow is refused
// unless r.Replace, in which case it is archived as "replaced" first (kept, not lost); the
// same start retried after it landed changes nothing (startedAlready).
func (e *Engine) Start(r StartRequest) (*Result, error) { return e.start(r, false) }

// CheckStart is Start's refusal of r (its type, context, id, scope, TTL, the record's size
// and secrets) against the state as it is, and changes nothing: nil when Start would go
// ahead. A caller that would make the state directory for the start (the CLI in a project
// Cairn never ran in) asks first, on the state read without making it, so that a refused
// start leaves no directory behind.
func (e *Engine) CheckStart(r StartRequest) error {
	_, err := e.start(r, true)
	return err
}

func (e *Engine) start(r StartRequest, check bool) (*Result, error) {
	def, err := e.TypeDefinition(r.Type)
	if err != nil {
		return nil, e.WithDefinitionErrors(err)
	}
	req := workflow.StartRequest{Type: r.Type, Context: r.Context, ID: r.WorkflowID, Scope: r.Scope, TTL: r.TTL, Replace: r.Replace}
	// What the store did on its own while reading (a damaged snapshot set aside, so that the
	// slot looks free) is told with the start, else it would start over it without a word.
	var told []string
	for attempt := 0; ; attempt++ {
		cur, notices, err := e.active()
		if err != nil {
			return nil, err
		}
		told = append(told, messages(notices)...)
		if cur != nil && startedAlready(def, cur, r) {
			if check {
				return nil, nil
			}
			res := &Result{Message: fmt.Sprintf("%s workflow %s was already started with this context, in phase %s; nothing changed", def.Name, cur.WorkflowID, cur.State),
				Revision: cur.Revision, Warnings: told}
			// Started in another live session: the work is that session's, not this one's.
			res.Warnings = warned(res.Warnings, e.liveOwnerWarning(cur))
			// A crash between the start and the replaced workflow's line left it unwritten.
			if old, by := e.replacedLast(r.Replace); old != nil && by == cur.WorkflowID {
				if w, wrote := e.abandonLeft(old); wrote {
					res.Changed = true
					res.Message = fmt.Sprintf("%s workflow %s was already started with this context, in phase %s; the earlier call had not recorded the end of the workflow it replaced, %s, so it is recorded now", def.Name, cur.WorkflowID, cur.State, old.WorkflowID)
					res.Warnings = warned(res.Warnings, w)
				}
			}
			res.Workflow, _ = json.Marshal(cur)
			e.where(res, cur)
			e.awaiting(res, def, cur)
			return res, nil
		}
		// A crash between archiving the replaced workflow (its record marked, or moved to the
		// archive) and starting this one: the retry starts the workflow the record says
		// replaced it, and writes its line.
		var left *workflow.Record
		if r.Replace && (cur == nil || cur.Status == workflow.StatusArchived) {
			old, by := e.replacedLast(cur == nil)
			if cur != nil && !e.takenBySync(cur) {
				old, by = cur, ReplacedBy(cur)
			}
			if old != nil && by != "" && e.idTaken(by) == nil &&
				(r.WorkflowID == "" && strings.HasPrefix(by, def.Name+"-") || strings.TrimSpace(r.WorkflowID) == by) {
				left, req.ID = old, by
			}
		}
		if r.WorkflowID == "" && left == nil {
			// The id is made here, once per attempt, so that the probe and the commit agree on it.
			if req.ID, err = freshID(def.Name, e.now(), idRand, func(id string) bool {
				return cur != nil && cur.WorkflowID == id || e.idTaken(id) != nil
			}); err != nil {
				return nil, err
			}
		}
		// Validate first, so a refused start archives nothing.
		probe, err := workflow.Start(def, cur, req, e.now(), e.actor())
		if err != nil {
			return nil, e.whoseActive(err, cur)
		}
		if r.WorkflowID != "" {
			if err := e.idTaken(probe.Record.WorkflowID); err != nil {
				return nil, err
			}
		}
		// The new record must pass the store's checks (size, secrets, its journal's place)
		// before anything is archived: a refused start must leave the active workflow where it was.
		if err := cmp.Or(store.CheckRecord(probe.Record), e.st.JournalInTheWay(probe.Record.WorkflowID)); err != nil {
			return nil, fmt.Errorf("workflow not started, nothing was changed: %w", err)
		}
		if check {
			return nil, nil
		}
		var abandoned *workflow.Record
		var archived store.ArchiveInfo
		var ending []string // what committing the replaced workflow's end warned of
		var sharedOn string // read before the archive: the replaced workflow is shared there
		if probe.Archive != nil && cur != nil {
			sharedOn = e.sharedOn(cur)
			if archived, ending, err = e.archiveActive(cur, probe.Archive, e.archiveReason(cur)); err != nil {
				if errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
					// Another process archived it meanwhile, and may have started another.
					if attempt < 2 {
						continue
					}
					return nil, fmt.Errorf("workflow not started: other processes changed the active workflow meanwhile (%w); %s and start again", err, CheckOnRecord)
				}
				return nil, err
			}
			if cur.Status == workflow.StatusActive || !cur.Status.Valid() {
				abandoned = cur
			}
		}
		res, wres, err := e.change(func(cur *workflow.Record) (workflow.Result, error) {
			if cur != nil {
				// Someone started or restored a workflow between the archive and now.
				return workflow.Result{}, e.whoseActive(&workflow.ActiveError{WorkflowID: cur.WorkflowID, Type: cur.Type, Phase: cur.State}, cur)
			}
			return workflow.Start(def, nil, req, e.now(), e.actor())
		}, "")
		if _, ok := errors.AsType[*workflow.ActiveError](err); ok && req.Replace && attempt < 2 {
			continue
		}
		if err != nil && archived.Dir != "" {
			// The old workflow has left the active slot: the refusal's "nothing was changed"
			// is of the file it names. The same start again takes up from here (left above).
			none := ", so no workflow is active now" // unless another process started one meanwhile
			if _, ok := errors.AsType[*workflow.ActiveError](err); ok {
				none = ""
			}
			return nil, fmt.Errorf("the previous workflow %[1]s was archived in archive/%[2]s (`cairn show %[1]s` shows it), but the new one was not started%[3]s: %[4]w", cur.WorkflowID, archived.Dir, none, err)
		}
		if err != nil {
			return nil, err
		}
		res.Message = fmt.Sprintf("started %s workflow %s in phase %s", def.Name, wres.Record.WorkflowID, wres.To)
		if probe.Archive != nil && cur != nil {
			res.Message += fmt.Sprintf("; the previous workflow %s was archived", cur.WorkflowID)
			res.retention(archived)
			res.Warnings = append(res.Warnings, ending...)
			res.Warnings = append(res.Warnings, e.archivedUnderLiveOwner(cur)...)
			if sharedOn != "" {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s is shared through %s: the next sync ends it on the other machines sharing it too; tell the user.", cur.WorkflowID, sharedOn))
			}
		}
		if left != nil {
			if cur == nil {
				res.Message += fmt.Sprintf("; the previous workflow %s was archived by the earlier call", left.WorkflowID)
			}
			w, _ := e.abandonLeft(left)
			res.Warnings = warned(res.Warnings, w)
		}
		if abandoned != nil {
			// Memory must not go on calling the replaced workflow active.
			res.Warnings = warned(res.Warnings, e.writeL2(abandoned.WorkflowID, abandoned.Revision+1, workflow.AbandonLine(abandoned)))
		}
		res.Warnings = append(told, res.Warnings...)
		e.awaiting(res, def, wres.Record)
		return res, nil
	}
}

// whoseActive is err, when it refuses a start over the active workflow cur, with the other
// live session working in cur named (workflow.ActiveError's LiveOwner), and the remote it is
// shared through (SharedOn: it has been synced there, so a replace's end reaches the others).
func (e *Engine) whoseActive(err error, cur *workflow.Record) error {
	ae, ok := errors.AsType[*workflow.ActiveError](err)
	if !ok || cur == nil {
		return err
	}
	if e.liveOwnerWarning(cur) != "" {
		ae.LiveOwner = workflow.Ago(e.now().Sub(cur.Owner.Heartbeat))
	}
	ae.SharedOn = e.sharedOn(cur)
	return err
}

// sharedOn names the remote r is shared through (it has been synced there, so its end
// reaches the other machines sharing it), or "" when it is not.
func (e *Engine) sharedOn(r *workflow.Record) string {
	if s, err := mirror.Load(e.st); err == nil && r != nil && s.Enabled && s.Workflow == r.WorkflowID && s.Mirrored > 0 {
		return secrets.Line(s.Remote, 40)
	}
	return ""
}

// startedAlready reports whether the active workflow cur is the start r asks for, retried
// after it landed: same type, context, scope and (when given) TTL and id. A request that
// names no TTL asked for the definition's as it was when the start landed: the file may have
// been edited since. A replace retried
// finds it unchanged since its start (updated_at is its created_at; the heartbeat a turn's
// end writes is no change of it), so replacing it would only archive it for an identical one.
func startedAlready(def *workflow.Definition, cur *workflow.Record, r StartRequest) bool {
	if cur.Status != workflow.StatusActive || workflow.NormalizeName(cur.Type) != def.Name ||
		cur.Context != textsafe.OneLine(r.Context) || cur.Scope != textsafe.OneLine(r.Scope) ||
		cur.TTL != cmp.Or(strings.TrimSpace(r.TTL), cur.TTL) {
		return false
	}
	if id := strings.TrimSpace(r.WorkflowID); id != "" && id != cur.WorkflowID {
		return false
	}
	return !r.Replace || !cur.CreatedAt.IsZero() && cur.UpdatedAt.Equal(cur.CreatedAt)
}

// replacedLast returns the workflow a replacing start archived, and the id of the workflow
// its record says replaced it, when that is the newest archive and was made in the last ten
// minutes: what a replace retried after a crash cut it short finds. nil otherwise, and
// without a read unless look.
func (e *Engine) replacedLast(look bool) (*workflow.Record, string) {
	if !look {
		return nil, ""
	}
	a, ok := e.recentArchive("replaced")
	if !ok {
		return nil, ""
	}
	data, err := e.st.ReadArchiveRecord(a.Dir)
	if err != nil {
		return nil, ""
	}
	var tail []store.Record // the journal's last line only: a long one's cost is a retry's
	if last, err := e.st.ReadArchiveLast(a.Dir); err == nil && last != nil {
		tail = append(tail, *last)
	}
	r, err := store.ParseRecord(data)
	if err != nil || r.WorkflowID != a.WorkflowID || bySync(tail, r.Revision) {
		return nil, "" // one a sync took was replaced on another machine: no crash of this one's
	}
	by := ReplacedBy(r)
	if by == "" {
		return nil, ""
	}
	return r, by
}

// takenBySync reports whether r, the active slot's record, is a revision a sync took from
// another machine (bySync): a replace there marked it, not one of this machine's that a crash
// cut short, and the workflow that replaced it is that machine's.
func (e *Engine) takenBySync(r *workflow.Record) bool {
	recs, err := e.st.ReadEventsSince(r.WorkflowID, r.Revision-1)
	return err == nil && bySync(recs, r.Revision)
}

// SyncEvent is the kind of the journal event remotesync records for each revision a sync takes
// from another machine. The engine tells those revisions apart by it (bySync), so it is
// defined once, here, for both.
const SyncEvent = "sync"

// bySync reports whether revision rev of a workflow's journal (recs) is one a sync wrote, taken
// from another machine (an event of kind SyncEvent).
func bySync(recs []store.Record, rev int64) bool {
	return slices.ContainsFunc(recs, func(j store.Record) bool { return j.Revision == rev && j.Event.Kind == SyncEvent })
}

// ReplacedBy is the id of the workflow a replacing start marked r replaced by, or "".
func ReplacedBy(r *workflow.Record) string {
	if r.Status != workflow.StatusArchived || len(r.History) == 0 {
		return ""
	}
	by, ok := strings.CutPrefix(r.History[len(r.History)-1].Note, "archived: replaced by ")
	if !ok || workflow.ValidID(by) != nil {
		return ""
	}
	return by
}

// abandonLeft writes the "Abandoned" line of old, archived by a replacing start (its record
// at the revision the start gave that line), unless l2-state notes that revision of it
// already, as the last noted, the line shown or an owed line (a settle since notes the new
// workflow as the last). It returns writeL2's warning and whether it wrote.
func (e *Engine) abandonLeft(old *workflow.Record) (warning string, wrote bool) {
	data, _ := e.st.Read(l2StateDoc)
	s := decodeLenient[l2State](data)
	noted := func(of lineOf) bool { return of.WorkflowID == old.WorkflowID && of.Revision >= old.Revision }
	if noted(lineOf{WorkflowID: s.WorkflowID, Revision: s.Revision}) || noted(s.Shown) || slices.ContainsFunc(s.OwedOf, noted) {
		return "", false
	}
	return e.writeL2(old.WorkflowID, old.Revision, workflow.AbandonLine(old)), true
}

// idTaken refuses an id given for a new workflow that an archived workflow has (workflow.Start
// refuses the active one's): its journal, `cairn show ID` and, with sharing on, the remote's
// line for that id (refs/cairn/wf/<id>) belong to that workflow. The archive's directory
// decides, whether or not archive/index.jsonl lists it (an index lost, cut short or too large
// to read); an index line whose directory is gone still does. An archive/ that cannot be
// listed does not stop a start.
func (e *Engine) idTaken(id string) error {
	dir, _ := e.st.ArchiveDirOf(id)
	if dir == "" {
		archives, _ := e.st.ListArchives()
		if i := slices.IndexFunc(archives, func(a store.ArchiveInfo) bool { return a.WorkflowID == id }); i >= 0 {
			dir = archives[i].Dir
		}
	}
	if dir != "" {
		return fmt.Errorf("starting a workflow: id %s is an archived workflow's (archive/%s); %s", id, dir, GiveAnID)
	}
	return nil
}

// idRand is where generated ids take their random bytes: nil is crypto/rand. Tests set it.
var idRand io.Reader

// freshID makes the id of a start that named none. NewID's two random bytes meet an id of the
// same type and second once in 65,536 starts: such an id is drawn again, not refused (the
// caller chose nothing) nor given to a second workflow (an archived workflow's journal, `cairn
// show ID` and remote line are its own).
func freshID(typ string, now time.Time, rnd io.Reader, taken func(string) bool) (string, error) {
	const tries = 16
	for range tries {
		id, err := workflow.NewID(typ, now, rnd)
		if err != nil {
			return "", err
		}
		if !taken(id) {
			return id, nil
		}
	}
	return "", fmt.Errorf("starting a workflow: %d ids drawn for this second were all taken; %s", tries, GiveAnID)
}

// archiveReason is why a workflow in the active slot is archived when a new one starts, or
// when the read protocol finds it ended.
func (e *Engine) archiveReason(cur *workflow.Record) string {
	switch cur.Status {
	case workflow.StatusExpired:
		return "expired"
	case workflow.StatusCompleted:
		return "completed"
	case workflow.StatusArchived: // marked, and a crash (or another process) kept it in the slot
		if ReplacedBy(cur) == "" {
			// cairn archive's, here or on a machine a sync took it from: the reason its
			// archive event notes, when that is the record's last change, else "archived".
			status, _ := archiveStatus(e.lastEventNote(cur, "archive"))
			return status
		}
		return "replaced"
	default: // active, or a status not known to be finished
		return "replaced"
	}
}

// errArchiveRaced is archiveActive's refusal of a workflow another process changed meanwhile.
var errArchiveRaced = errors.New("changed while it was being archived; nothing was archived")

// archiveActive commits the record's final state (when it differs) and moves it to the
// archive. A workflow that another process changed meanwhile is not archived
// (errArchiveRaced). The caller says what the archive did besides (Result.retention,
// pruneWarning), and the warnings of committing the final state.
func (e *Engine) archiveActive(cur, final *workflow.Record, reason string) (store.ArchiveInfo, []string, error) {
	if final != nil && (final.Status != cur.Status || len(final.History) != len(cur.History)) {
		res, _, err := e.change(func(now *workflow.Record) (workflow.Result, error) {
			if now == nil || now.WorkflowID != cur.WorkflowID || now.Revision != cur.Revision {
				return workflow.Result{}, fmt.Errorf("workflow %s %w: %s", cur.WorkflowID, errArchiveRaced, CheckOnRecord)
			}
			return workflow.Result{Record: final, Changed: true, Event: workflow.Event("archive"), From: cur.State, To: cur.State}, nil
		}, reason)
		if err != nil {
			return store.ArchiveInfo{}, nil, err
		}
		info, err := e.st.ArchiveIf(reason, cur.WorkflowID)
		if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
			// The end is committed: the lock error's "nothing changed" would deny it.
			return info, res.Warnings, &endedLockedError{id: cur.WorkflowID, status: final.Status, te: te}
		}
		return info, res.Warnings, err
	}
	info, err := e.st.ArchiveIf(reason, cur.WorkflowID)
	return info, nil, err
}

// endedLockedError is archiveActive's error when the workflow's end was committed but its move
// to the archive found the lock held: what was kept, who holds the lock, and that the same
// call again, once it is free, finishes (the read protocol archives an ended workflow it finds).
type endedLockedError struct {
	id     string
	status workflow.Status
	te     *durable.LockTimeoutError
}

func (e *endedLockedError) Error() string {
	after := "after " + e.te.WaitedSaid()
	if e.te.Stopped {
		after = "at once" // a stopped holder is not waited for
	}
	return fmt.Sprintf("workflow %s was marked %s, but moving it to the archive gave up %s: %s is locked %s; %s",
		e.id, e.status, after, e.te.Path, e.te.Who(), e.te.Step())
}

func (e *endedLockedError) Unwrap() error { return e.te }

// phaseCheckpointLevel is how deep in the workflow record a checkpoint kept with a move sits
// (phases.<phase>.metadata.checkpoint); the record may nest strictjson.MaxDepth levels.
const phaseCheckpointLevel = 4

var phaseCheckpointLimits = strictjson.Limits{MaxSize: strictjson.MaxSize, MaxDepth: strictjson.MaxDepth - phaseCheckpointLevel}

// Transition moves the active workflow to r.To. With r.From it is a compare-and-swap; with
// r.Checkpoint (a JSON object) the checkpoint is kept in the metadata of the phase being
// left, in the same atomic write. Entering a terminal phase completes and archives it.
func (e *Engine) Transition(r TransitionRequest) (*Result, error) {
	req := workflow.TransitionRequest{To: r.To, From: r.From, Outputs: r.Outputs, Note: r.Note, Approval: r.Approval}
	if cp := bytes.TrimSpace(r.Checkpoint); len(cp) > 0 && string(cp) != "null" {
		if je, ok := errors.AsType[*strictjson.Error](phaseCheckpointLimits.Check(cp)); ok && je.Kind == strictjson.TooDeep {
			return nil, fmt.Errorf("transition checkpoint: it nests deeper than the %d levels a checkpoint kept with a move may (the workflow record holds it %d levels down); nothing was changed. Keep the data in named checkpoints (%s; they may nest %d levels) and move with a small checkpoint or none",
				phaseCheckpointLimits.MaxDepth, phaseCheckpointLevel, SplitCheckpoint, strictjson.MaxDepth)
		}
		if err := store.CheckDocument(r.Checkpoint); err != nil {
			if je := tooLarge(err); je != nil {
				return nil, fmt.Errorf("transition checkpoint: it is over the 1 MiB a checkpoint may hold (%s); nothing was changed. Keep the data in named checkpoints (%s) and move with a small checkpoint or none", je.Reason, SplitCheckpoint)
			}
			return nil, fmt.Errorf("transition checkpoint: %w", err)
		}
		if _, err := strictjson.Object(r.Checkpoint); err != nil {
			return nil, fmt.Errorf("transition checkpoint must be a JSON object: %w", err)
		}
		req.Checkpoint, req.CheckpointJSON = "phase-metadata", compactJSON(r.Checkpoint)
	}
	res, wres, err := e.change(e.onActive(func(def *workflow.Definition, cur *workflow.Record) (workflow.Result, error) {
		req := req
		if err := forWorkflow(r.WorkflowID, cur); err != nil {
			return workflow.Result{}, err
		}
		if e.movedBeforeClear(cur, req) {
			return workflow.Result{Record: cur.Clone(), Event: workflow.EventNone, From: cur.State, To: cur.State}, nil
		}
		if err := e.approvalPolicy(def, cur, &req); err != nil {
			return workflow.Result{}, err
		}
		return workflow.Transition(def, cur, req, e.now(), e.actor())
	}), r.Note)
	if done, inSlot := e.completedAlready(err, func(d *workflow.Record) bool {
		h, ok := completingMove(d)
		to, from := workflow.NormalizeName(r.To), workflow.NormalizeName(r.From)
		return ok && h.To == to && (from == "" || h.From == from)
	}); done != nil {
		h, _ := completingMove(done)
		res := &Result{Message: fmt.Sprintf("workflow %s was already completed by the move %s -> %s", done.WorkflowID, h.From, h.To)}
		e.finishCompleted(res, done, inSlot)
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !wres.Changed:
		res.Message = fmt.Sprintf("already in phase %s; nothing changed", wres.To)
		// Warned of another live session: it made the move, and what this call carried is not
		// on record.
		if len(wres.Warnings) > 0 && (req.CheckpointJSON != nil || len(req.Outputs) > 0) {
			res.Warnings = append(res.Warnings, "the checkpoint and outputs this call carried were not recorded, as another session made the move: "+KeepData)
		}
	case wres.Completed:
		res.Message = fmt.Sprintf("moved %s -> %s; the workflow is complete", wres.From, wres.To)
		e.archiveCompleted(res, wres)
	default:
		res.Message = fmt.Sprintf("moved %s -> %s", wres.From, wres.To)
		e.unwritten(res, req.Outputs...)
	}
	if def, err := e.definitionFor(wres.Record); err == nil {
		e.awaiting(res, def, wres.Record)
	}
	return res, nil
}

// movedBeforeClear reports whether req, a compare-and-swap move that no longer matches cur, is
// the move this Claude Code client made under its previous session id, retried: after /clear
// the client runs a new session and cairn-mcp acts for it, so the session check the workflow
// domain makes for a retried move (workflow.Transition) does not see it as the same caller.
// It is that move only when all of these hold, each of which another session's decision to
// make the same move would break:
//   - cur's last move is req's (from, to and note) and left cur there;
//   - its session owns cur in this client (same pid, on this machine): a client runs one session at a time, so
//     that session is this one's predecessor, not a live session elsewhere (a session of
//     another client, or a caller without a pid, gets the conflict);
//   - nothing has changed cur since (updated_at is the move's time), or nothing but the
//     housekeeping of this client's sessions (housekeptSince): a retry comes before any work
//     built on the move, and a change by any other caller would show there;
//   - the move is recent (workflow.DefaultLiveWindow), which also keeps a pid reused by a
//     later client from passing for this one.
func (e *Engine) movedBeforeClear(cur *workflow.Record, req workflow.TransitionRequest) bool {
	from, to := workflow.NormalizeName(req.From), workflow.NormalizeName(req.To)
	n := len(cur.History)
	if from == "" || from == cur.State || to != cur.State || n == 0 || cur.Status != workflow.StatusActive ||
		e.cfg.PID <= 0 || cur.Owner == nil || !e.inThisClient(cur.Owner) {
		return false
	}
	h := cur.History[n-1]
	age := e.now().Sub(h.At)
	if h.From != from || h.To != to || h.Note != textsafe.OneLine(req.Note) || h.SessionID == "" ||
		age < 0 || age > workflow.DefaultLiveWindow {
		return false
	}
	if h.SessionID == cur.Owner.SessionID && cur.UpdatedAt.Equal(h.At) {
		return true
	}
	return e.housekeptSince(cur, h)
}

// housekeepingLines bounds how far back housekeptSince reads the journal: a recovery per new
// session and a heartbeat every heartbeatEvery fit many times in workflow.DefaultLiveWindow.
const housekeepingLines = 16

// housekeptSince reports whether cur's journal, read back from cur to its last move h, holds
// only the housekeeping this client's sessions do on their own (the new session's resume
// report recovering the tasks the earlier session left running, which makes it the owner,
// and the Stop hook's heartbeats), and h's own line, written by h's session in this client.
// Such lines decide nothing about the work, so the move retried is still the move made.
func (e *Engine) housekeptSince(cur *workflow.Record, h workflow.HistoryEntry) bool {
	recs, err := e.st.ReadJournalSince(cur.WorkflowID, max(cur.Revision-housekeepingLines, 0))
	if err != nil || len(recs) == 0 || recs[len(recs)-1].Revision != cur.Revision {
		return false
	}
	for _, line := range slices.Backward(recs) {
		r, err := store.ParseRecord(line.Snapshot)
		if err != nil || r.Owner == nil || !e.inThisClient(r.Owner) {
			return false
		}
		switch workflow.Event(line.Event.Kind) {
		case workflow.EventRecover, workflow.EventHeartbeat:
			continue
		case workflow.EventTransition:
			n := len(r.History)
			return n > 0 && r.History[n-1].At.Equal(h.At) && r.History[n-1].To == h.To &&
				r.Owner.SessionID == h.SessionID && r.UpdatedAt.Equal(h.At)
		}
		return false
	}
	return false
}

// awaiting sets res.AwaitingApproval and res.Next when r, the record a move left, waits in
// the approval phase it is in for a person's yes (a repeated move into it says so again):
// its request is open on record, and the project has not turned approvals off. Active in a
// terminal phase (a definition that starts in one; a gate never is one), res.Next says that
// only a completion ends it.
func (e *Engine) awaiting(res *Result, def *workflow.Definition, r *workflow.Record) {
	if def != nil && r.Status == workflow.StatusActive && def.IsTerminal(r.State) {
		res.Next = fmt.Sprintf("Phase %s is a terminal phase, so no move leads out of it: once its work is done, %s.", textsafe.Line(r.State, 64), workflow.CompleteStep)
		return
	}
	ahead := ""
	if def != nil && r.Status == workflow.StatusActive {
		ahead = def.TerminalAhead(def.Allowed(r.State))
	}
	p := textsafe.Line(r.State, 64)
	if ahead != "" {
		// The moves are in the result (allowed); entering git-commit completes the workflow
		// before the commit it is named for, unless the step says so. (ahead starts with
		// "entering": ASCII.)
		res.Next = strings.ToUpper(ahead[:1]) + ahead[1:] + "."
	}
	if q, open := workflow.PendingApproval(r); !open || q != r.State {
		return
	}
	if q, open := workflow.Awaiting(def, e.planView(def, r, e.now())); !open || q != r.State {
		return
	}
	res.AwaitingApproval = r.State
	res.Next = fmt.Sprintf("Phase %s is an approval phase: finish it and ask the user to approve its result; leaving %s needs their yes.", p, p)
	if ahead != "" {
		res.Next = strings.TrimSuffix(res.Next, ".") + "; " + ahead + "."
	}
}

// approvalPolicy applies the project's rule to a move out of an approval phase: without a
// person's yes on record it is refused, unless a person turned approvals off for the project.
func (e *Engine) approvalPolicy(def *workflow.Definition, cur *workflow.Record, req *workflow.TransitionRequest) error {
	if p, need := workflow.NeedsApproval(def, cur, req.To); need && req.Approval == nil &&
		(req.From == "" || workflow.NormalizeName(req.From) == cur.State) {
		if !e.approvalsOff() {
			return &workflow.ApprovalError{WorkflowID: cur.WorkflowID, Phase: p, To: workflow.NormalizeName(req.To)}
		}
		req.Approval = &workflow.Approval{Source: workflow.ApprovalSetting}
	}
	return nil
}

// UserApproves is the agent's step where a person's yes is needed and was not asked for in the
// session: cairn approve is refused in every shell Claude Code starts (CLAUDECODE set: the
// agent's Bash), so the user runs it in a terminal of their own.
const UserApproves = "ask the user to run `cairn approve [NOTE]` in the project, " + workflow.OwnTerminal

// CompleteAgain ends the refusal of complete_workflow in an approval phase; the CLI puts its
// complete command in its place.
const CompleteAgain = "then call complete_workflow again"

// GateError refuses the agent's completion of a workflow that waits in an approval phase for
// a person's yes (completeGate). It unwraps to the ApprovalError of that phase, with no To,
// so that the MCP server asks the person as it does for a move out of the phase.
type GateError struct{ Approval *workflow.ApprovalError }

func (e *GateError) Error() string {
	return fmt.Sprintf("workflow %s is in approval phase %s, which waits for a person's yes, and completing it needs that yes too; nothing was changed: %s, %s",
		e.Approval.WorkflowID, textsafe.Line(e.Approval.Phase, 64), UserApproves, CompleteAgain)
}

func (e *GateError) Unwrap() error { return e.Approval }

// EarlyEndError refuses the agent's completion of a workflow in a phase before an approval
// gate that every way on to the end enters: ending there would end the work the gate holds
// back without the person's yes. The person ends it with cairn complete in their own terminal.
// Lost says the phase is not in the definition now (GateUnpassed): the gate may be ahead.
type EarlyEndError struct {
	WorkflowID, Phase, Gate string
	Lost                    bool
}

func (e *EarlyEndError) Error() string {
	where := "before approval phase " + textsafe.Line(e.Gate, 64)
	if e.Lost {
		where = "which is not a phase of its definition now, and may be before approval phase " + textsafe.Line(e.Gate, 64)
	}
	return fmt.Sprintf("workflow %s is in phase %s, %s, which waits for a person's yes: completing it here would end it without that yes; nothing was changed: ask the user to run `cairn complete OUTCOME` in the project, %s",
		e.WorkflowID, textsafe.Line(e.Phase, 64), where, workflow.OwnTerminal)
}

// completeGate refuses the agent's completion of r while r waits in an approval phase for a
// person's yes (as the resume plan counts it: with approvals off for the project, none is
// awaited): completing there would end the workflow past the gate without one; so is its
// completion in a phase before a gate it cannot end without entering (EarlyEndError). With ap, a
// person's yes to leaving that phase, its Record is r with the yes recorded instead; a yes to
// another phase (the workflow moved on while the person was asked) is refused the same way.
func (e *Engine) completeGate(r *workflow.Record, ap *workflow.Approval) (workflow.Result, error) {
	def, _ := e.definitionFor(r) // without it, a request open on record still waits
	p, open := workflow.Awaiting(def, e.planView(def, r, e.now()))
	if !open {
		if g := workflow.GateUnpassed(def, r); g != "" && !e.approvalsOff() && r.Status == workflow.StatusActive {
			return workflow.Result{}, &EarlyEndError{WorkflowID: r.WorkflowID, Phase: r.State, Gate: g, Lost: !def.HasPhase(r.State)}
		}
		return workflow.Result{Record: r}, nil
	}
	if ap == nil || ap.Phase != p {
		return workflow.Result{}, &GateError{&workflow.ApprovalError{WorkflowID: r.WorkflowID, Phase: p}}
	}
	return workflow.Approve(def, r, ap.Source, ap.Note, e.now(), e.actor())
}

// notArchived is the warning of a completed workflow that could not be archived: the read
// protocol archives a finished workflow it finds still active, so nothing is lost and nothing
// is the reader's to do but the fix err names.
func notArchived(err error) string {
	return "the workflow is completed and kept, but archiving it failed: " + archiveLeft(err)
}

// archiveLeft says why the archive of an ended workflow, its end committed, failed (err), and
// that the next session start archives it. A lock another process held is no failure to fix
// nor to retry by hand, and its error's "nothing changed" would deny the end just committed:
// it says who held it.
func archiveLeft(err error) string { return leftToNextStart(err, "archives it") }

// leftToNextStart says why an archive failed (err) and that the next session start does what
// next says, once what err names is fixed (archiveLeft).
func leftToNextStart(err error, next string) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		if r := te.Resume(); r != "" { // a stopped holder keeps the lock until resumed
			return te.Path + " is locked " + te.Who() + "; " + r + ": the next session start then " + next
		}
		return te.Path + " is locked " + te.Who() + "; the next session start " + next
	}
	return store.ArchiveCause(err).Error() + "; the next session start " + next + " once that is fixed" + store.NoRoomTold(err)
}

// archiveCompleted files a just-completed workflow in the archive and records its ending.
// Failing to archive loses nothing (the completed record stays in the active slot, and the
// next start or read archives it), so it is a warning. However it was completed
// (complete_workflow, a move into a terminal phase, a replay), the result names the blocking
// violations still open: nothing asks about them after completion, as the Stop hook did before.
func (e *Engine) archiveCompleted(res *Result, done workflow.Result) {
	id := ""
	if done.Record != nil {
		id = done.Record.WorkflowID
		if vs := done.Record.BlockingViolations(); len(vs) > 0 {
			codes := make([]string, 0, 5)
			for _, v := range vs[:min(len(vs), 5)] {
				codes = append(codes, string(v.Severity)+" "+textsafe.OneLine(v.Code))
			}
			if len(vs) > 5 {
				codes = append(codes, fmt.Sprintf("%d more", len(vs)-5))
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("completed with blocking violations still open (%s): they are kept with the workflow in its archive", strings.Join(codes, ", ")))
		}
	}
	if info, err := e.st.ArchiveIf("completed", id); errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
		res.Message += "; another process has since moved it out of the active slot"
	} else if err != nil {
		res.Warnings = append(res.Warnings, notArchived(err))
	} else {
		res.Message += " and archived"
		res.retention(info)
	}
	if done.Record != nil {
		e.noteEnding(done.Record.WorkflowID, done.L2)
	}
}

// retention adds what retention did when an archive was made: which older archives it
// removed to make room, or, when it failed, that they stay until the next archive; and what
// finishing the archive kept aside, and where.
func (res *Result) retention(info store.ArchiveInfo) {
	notices, warning := ArchiveReport(info)
	if p := PrunedLine(info); p != "" {
		res.Message += "; " + p
	}
	res.Warnings = warned(append(res.Warnings, notices...), warning)
}

// ArchiveReport says what making an archive did besides the archive itself: what finishing it
// kept aside, and where (notices), and why retention could not remove older archives this time
// (warning, "" when it could). Every caller that makes an archive reports it through this.
func ArchiveReport(info store.ArchiveInfo) (notices []string, warning string) {
	notices = messages(info.Notices)
	if info.PruneErr != nil {
		warning = pruneFailed + info.PruneErr.Error()
	}
	return notices, warning
}

// PrunedLine names the older archives retention removed to make room for info's, "" when none.
func PrunedLine(info store.ArchiveInfo) string {
	if len(info.Pruned) == 0 {
		return ""
	}
	return fmt.Sprintf("retention removed %d older archive%s: %s", len(info.Pruned), workflow.Plural(len(info.Pruned)), strings.Join(info.Pruned, ", "))
}

const pruneFailed = "older archives were not removed this time (retention tries again at the next archive): "

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

// Complete ends the active workflow with an outcome, writes the completion line and archives
// it: the agent's complete_workflow. In an approval phase that waits for a person's yes it is
// refused (completeGate), as leaving the phase is.
func (e *Engine) Complete(outcome string) (*Result, error) {
	return e.complete(outcome, false, nil, "")
}

// forWorkflow refuses a change made for workflow id (when set) to cur, another workflow that
// another process put in its place.
func forWorkflow(id string, cur *workflow.Record) error {
	if id == "" || cur.WorkflowID == id {
		return nil
	}
	return fmt.Errorf("this call was for workflow %s, and the active workflow is now %s, which another process put in its place; nothing was changed: call %sresume_check and decide there whether to go on in it",
		textsafe.Line(id, 120), textsafe.Line(cur.WorkflowID, 120), ToolPrefix)
}

// CompleteApproved is Complete with ap, a person's yes to leaving approval phase ap.Phase of
// workflow workflowID (the MCP server asks for it when Complete is refused there): the yes is
// recorded with the completion, which is made only while that workflow is the active one and
// waits in that phase or in none.
func (e *Engine) CompleteApproved(outcome string, ap workflow.Approval, workflowID string) (*Result, error) {
	return e.complete(outcome, false, &ap, workflowID)
}

// CompleteByPerson is Complete for a person (cairn complete outside the shells Claude Code
// starts): the person is the approver, so a workflow that waits in an approval phase for
// their yes may be ended there.
func (e *Engine) CompleteByPerson(outcome string) (*Result, error) {
	return e.complete(outcome, true, nil, "")
}

func (e *Engine) complete(outcome string, person bool, ap *workflow.Approval, forID string) (*Result, error) {
	if strings.TrimSpace(outcome) == "" {
		return nil, errors.New("complete_workflow needs an outcome: one line saying what was achieved")
	}
	res, wres, err := e.change(needActive(func(r *workflow.Record) (workflow.Result, error) {
		if err := forWorkflow(forID, r); err != nil {
			return workflow.Result{}, err
		}
		var approved []string // warnings of recording ap (another session's workflow)
		if !person {
			g, err := e.completeGate(r, ap)
			if err != nil {
				return workflow.Result{}, err
			}
			r, approved = g.Record, g.Warnings
		}
		res, err := workflow.Complete(r, outcome, e.now(), e.actor())
		res.Warnings = append(approved, res.Warnings...)
		return res, err
	}), outcome)
	// A move into a terminal phase completes the workflow on entry: complete_workflow right
	// after it finds that completion, whatever outcome it carries.
	if r, inSlot := e.completedAlready(err, func(r *workflow.Record) bool {
		_, moved := completingMove(r)
		return moved || r.Outcome == textsafe.OneLine(outcome)
	}); r != nil {
		res := &Result{Message: fmt.Sprintf("workflow %s was already completed: %s", r.WorkflowID, r.Outcome)}
		if h, ok := completingMove(r); ok {
			res.Message = fmt.Sprintf("workflow %s was already completed by the move %s -> %s: %s", r.WorkflowID, h.From, h.To, r.Outcome)
		}
		e.finishCompleted(res, r, inSlot)
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res.Message = "completed"
	e.archiveCompleted(res, wres)
	return res, nil
}

// Approve records a person's yes to the approval the current phase waits for (`cairn
// approve [NOTE]`); the agent may then leave the phase. Approving it again changes nothing
// and says when and by whom it was approved.
func (e *Engine) Approve(note string) (*Result, error) {
	var left *workflow.Approval  // the approval this repeats, of a phase the workflow has left since
	var defErr error             // why the type has no definition: the workflow cannot move yet
	var def *workflow.Definition // without it, only a request on record can be approved
	res, wres, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		def, defErr = e.definitionFor(cur)
		res, err := workflow.Approve(def, cur, workflow.ApprovalCLI, note, e.now(), e.actor())
		if err != nil {
			if left = e.approvedThenLeft(cur, note); left != nil {
				return workflow.Result{Record: cur.Clone(), Event: workflow.EventNone, From: cur.State, To: cur.State}, nil
			}
		}
		return res, err
	}), note)
	if errors.Is(err, workflow.ErrNothingWaits) {
		// The person's step: approving again is refused again until a phase waits.
		if def != nil && len(def.Approvals) == 0 {
			return nil, fmt.Errorf("%w: type %s has no approval phases, so nothing in it waits for one", err, def.Name)
		}
		return nil, fmt.Errorf("%w: run cairn approve once `cairn status` says a phase waits for a person's approval", err)
	}
	if err != nil {
		return nil, err
	}
	if left != nil {
		res.Message = fmt.Sprintf("phase %s of workflow %s is already approved (%s by %s); the workflow has since moved on to %s; nothing changed",
			left.Phase, wres.Record.WorkflowID, left.ApprovedAt.UTC().Format(minuteUTC), workflow.ApprovedBy(left.Source), wres.Record.State)
		return res, nil
	}
	step := approvedStep(wres.From, def, defErr)
	if !res.Changed {
		for _, ap := range slices.Backward(wres.Record.Approvals) {
			if ap.Phase == wres.From {
				// Run again by a person unsure the first took: the agent may not be told yet.
				res.Message = fmt.Sprintf("phase %s of workflow %s is already approved (%s by %s); nothing changed; %s",
					wres.From, wres.Record.WorkflowID, ap.ApprovedAt.UTC().Format(minuteUTC), workflow.ApprovedBy(ap.Source), step)
				break
			}
		}
		return res, nil
	}
	res.Message = fmt.Sprintf("approved phase %s of workflow %s; %s", wres.From, wres.Record.WorkflowID, step)
	return res, nil
}

// approvedStep is the person's step once phase is approved: nothing tells the agent, which
// waits for the person's next word, so that word is the step, unless the workflow cannot
// leave the phase (def did not load: defErr, or no longer has the phase).
func approvedStep(phase string, def *workflow.Definition, defErr error) string {
	switch {
	case defErr != nil:
		return "the agent cannot leave it until the definition of its type loads again: `cairn doctor` says which file to fix"
	case def != nil && !def.HasPhase(phase):
		// Renamed or dropped from the definition since: no move leads out of it.
		s := fmt.Sprintf("%s is not a phase of the %s definition now (%s), so the agent can complete the workflow there but not move on from it",
			phase, def.Name, strings.Join(def.Phases, ", "))
		if !strings.HasPrefix(def.Source, "builtin:") {
			s += ": to go on, put the phase back in " + def.Source
		}
		return s
	}
	return "tell the agent to go on: it may leave " + phase + " now"
}

// approvedThenLeft returns the approval `cairn approve [note]`, refused on cur, repeats: the
// latest yes on record, given with cairn approve and the same note in the last ten minutes
// (workflow.DefaultLiveWindow), to a phase cur has left since (the agent moved on as soon as
// it had the yes). nil otherwise: an approval meant for a phase that waits for none is refused.
func (e *Engine) approvedThenLeft(cur *workflow.Record, note string) *workflow.Approval {
	if cur.Status != workflow.StatusActive {
		return nil
	}
	for i := len(cur.Approvals) - 1; i >= 0; i-- {
		ap := cur.Approvals[i]
		if ap.ApprovedAt.IsZero() {
			continue
		}
		age := e.now().Sub(ap.ApprovedAt)
		if ap.Source != workflow.ApprovalCLI || ap.Note != textsafe.OneLine(note) || ap.Phase == cur.State ||
			age < 0 || age > workflow.DefaultLiveWindow {
			return nil
		}
		return &ap
	}
	return nil
}

// UpdateTask adds or moves a task of the current phase.
func (e *Engine) UpdateTask(r TaskRequest) (*Result, error) {
	u := workflow.TaskUpdate{ID: r.ID, Status: workflow.TaskStatus(strings.ToLower(strings.TrimSpace(r.Status))), Output: r.Output, Note: r.Note, Rerun: r.Rerun}
	res, wres, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		return workflow.UpdateTask(cur, u, e.now(), e.actor())
	}), r.Note)
	if err != nil {
		return nil, err
	}
	id := workflow.TaskID(strings.TrimSpace(r.ID))
	switch {
	case wres.Changed && u.Status == workflow.TaskFailed:
		res.Message = fmt.Sprintf("task %s failed; to retry it, set it to running", id)
	case wres.Changed:
		res.Message = fmt.Sprintf("task %s is %s", id, u.Status)
		if u.Status == workflow.TaskDone {
			e.unwritten(res, r.Output)
		}
	case u.Status == workflow.TaskFailed:
		res.Message = fmt.Sprintf("task %s already failed; nothing changed", id)
	default:
		res.Message = fmt.Sprintf("task %s is already %s; nothing changed", id, u.Status)
	}
	return res, nil
}

// DropOutputs takes off the active workflow's record the outputs it names that the project does
// not hold (every one when paths is empty): a person's "go on without them", after which no
// session start asks about them again. No file is touched; the history keeps what was dropped.
func (e *Engine) DropOutputs(paths []string) (*Result, error) {
	res, wres, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		return workflow.DropOutputs(cur, paths, e.exists, e.now(), e.actor())
	}), "")
	if err != nil {
		return nil, err
	}
	res.Message = "no recorded output is missing on disk; nothing changed"
	if wres.Changed {
		res.Message = wres.Subject + " from the record (cairn history keeps which); no file was touched"
	}
	return res, nil
}

// unwritten warns in res of the outputs just recorded that the project does not hold.
func (e *Engine) unwritten(res *Result, paths ...string) {
	if w := workflow.UnwrittenOutputs(paths, e.exists); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
}

// SetEnforcement replaces the active workflow's violations; an empty list clears them.
func (e *Engine) SetEnforcement(vs []Violation) (*Result, error) {
	wv := make([]workflow.Violation, len(vs))
	for i, v := range vs { // severities are read, and refused, by workflow.NewEnforcement
		wv[i] = workflow.Violation{Code: v.Code, Severity: workflow.Severity(v.Severity), Details: v.Details}
	}
	if err := workflow.RepeatedFinding(wv); err != nil {
		return nil, err
	}
	res, wres, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		return workflow.SetEnforcement(cur, wv, e.now(), e.actor())
	}), "")
	if err != nil {
		return nil, err
	}
	if wres.Record != nil && wres.Record.Enforcement != nil {
		res.Message = wres.Record.Enforcement.Summary
		if n := len(wres.Record.BlockingViolations()); n > 0 {
			res.Next = workflow.BlockingStep(n, "set_enforcement") // as resume says it: the Stop hook holds for them
		}
	}
	res.Message = cmp.Or(res.Message, "no violations")
	if !res.Changed {
		res.Message += "; already on record, nothing changed"
	}
	return res, nil
}

// SetVars sets workflow variables (the seeds' append_workflow_state), all in one write.
func (e *Engine) SetVars(kv map[string]string) (*Result, error) {
	if len(kv) == 0 {
		return nil, errors.New("set_vars needs at least one variable, like {\"PLAN_PATH\": \"plans/001.md\"}")
	}
	if err := vars.Check(kv); err != nil {
		return nil, err
	}
	doc, _ := json.Marshal(kv)
	if err := store.CheckDocument(doc); err != nil {
		return nil, fmt.Errorf("variables not saved: %w", err)
	}
	keys := slices.Sorted(maps.Keys(kv))
	res, _, err := e.changeVars(keys, func(r *workflow.Record, k string) (workflow.Result, error) {
		if _, ok := r.Vars[k]; !ok && len(r.Vars) >= vars.MaxVars {
			return workflow.Result{}, tooManyVars(r.Vars, kv)
		}
		return workflow.SetVar(r, k, kv[k], e.now(), e.actor())
	})
	if err != nil {
		return nil, err
	}
	if res.Changed {
		res.Message = "set " + strings.Join(keys, ", ")
	} else {
		res.Message = "already set; nothing changed"
	}
	return res, nil
}

// tooManyVars refuses a set that would take the workflow's variables, as merged, over
// vars.MaxVars: vars.Check sees only the incoming set, and one variable at a time would
// otherwise grow the record until its 1 MiB cap stops every write.
func tooManyVars(have, set map[string]string) error {
	merged := len(have)
	for k := range set {
		if _, ok := have[k]; !ok {
			merged++
		}
	}
	return fmt.Errorf("variables not saved, nothing was changed: the workflow would hold %d variables, over the %d it may hold; "+AskWhichVars+", then set these again",
		merged, vars.MaxVars)
}

// GetVars returns the active workflow's variables, all of them or the keys asked for (a
// missing key is simply absent).
func (e *Engine) GetVars(keys []string) (map[string]string, error) {
	r, err := e.ReadVars(keys)
	return r.Vars, err
}

// VarsRead is what ReadVars found.
type VarsRead struct {
	Vars map[string]string
	// Withheld has a line for each variable left out of all of them (keys empty) because
	// its value or its name has a secret's shape: one asked for by name is refused.
	Withheld []string
	// Notices say what the store did on its own while reading (a damaged snapshot set
	// aside and the values rebuilt from the journal), for the person.
	Notices []string
}

// ReadVars is GetVars with what was left out and what the store did on its own.
func (e *Engine) ReadVars(keys []string) (VarsRead, error) {
	kv, withheld, told, err := e.getVars(keys)
	return VarsRead{Vars: kv, Withheld: withheld, Notices: told}, err
}

func (e *Engine) getVars(keys []string) (kv map[string]string, withheld, told []string, err error) {
	r, notices, err := e.active()
	if err != nil {
		return nil, nil, nil, err
	}
	if r == nil {
		return nil, nil, nil, errNoActive{}
	}
	told = append(told, messages(notices)...)
	all := len(keys) == 0
	if all {
		keys = slices.Sorted(maps.Keys(r.Vars))
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := r.Vars[k]; ok {
			out[k] = v
		}
	}
	// A save refuses a secret, but the record may be older than the rule that finds it, or
	// written by hand: such a variable is not given back. One asked for by name refuses the
	// answer; of all of them, it is left out and the others are given (their names are not
	// known to the caller, who could not ask for them).
	doc, _ := json.Marshal(out)
	f := secrets.ScanJSON(doc)
	var clean []string // asked for by name and readable alone
	if f != nil {
		for _, k := range slices.Sorted(maps.Keys(out)) {
			one, _ := json.Marshal(map[string]string{k: out[k]})
			switch g := secrets.ScanJSON(one); {
			case g == nil:
				clean = append(clean, k)
			case all:
				delete(out, k)
				which, why := storedVarSecret(g)
				withheld = append(withheld, which+" not shown: "+why)
			}
		}
		if all {
			doc, _ = json.Marshal(out)
			f = secrets.ScanJSON(doc) // two variables may make one together
		}
	}
	if f != nil {
		which, why := storedVarSecret(f)
		// The others asked for are named (names the caller gave, each scanned clean with its
		// value): the answer is refused for one, not for them.
		if !all && len(clean) > 0 && len(clean) < len(out) {
			why += "; asked for without it, " + strings.Join(clean, ", ") + " can be read"
		}
		return nil, nil, nil, fmt.Errorf("variables not shown: %s: %s", which, why)
	}
	return out, withheld, told, nil
}

// storedVarSecret names the stored variable whose value or name has a secret's shape, and
// says why it is not shown and what to do, never the secret.
func storedVarSecret(f *secrets.Finding) (which, why string) {
	which, holder := "variable "+strings.TrimPrefix(f.Path, "$."), "it"
	if f.InKey {
		which, holder = "a variable", "its name"
	}
	return which, fmt.Sprintf("%s holds text of a secret's shape (%s), set before Cairn refused such text or written by hand, and left as it is: set it again without that text",
		holder, f.Rule)
}

// SaveCheckpoint saves a named JSON checkpoint. The same bytes saved again are saved, and
// reported unchanged: changed would say that the earlier save had not landed. Other bytes
// over one of that name are said to replace it, with its age.
func (e *Engine) SaveCheckpoint(name string, data json.RawMessage) (*Result, error) {
	if err := e.checkpointRoom(name); err != nil {
		return nil, err
	}
	before := e.st.CheckpointSaved(name) // zero when there is none to replace
	changed, note, err := e.st.SaveCheckpointChanged(name, data)
	if tooLarge(err) != nil {
		// Its size is not told: the CLI reads stdin only to just past the limit.
		return nil, fmt.Errorf("checkpoint %q not saved: it is over the 1 MiB (%d bytes) a checkpoint may hold; split it into several checkpoints, or keep the data in a file and save its path", name, strictjson.MaxSize)
	}
	if err != nil {
		return nil, err
	}
	size := fmt.Sprintf("%d byte%s", len(data), workflow.Plural(len(data)))
	if note != nil {
		return &Result{Changed: true, Message: "saved checkpoint " + name + " (" + size + ")", Warnings: []string{note.Message}}, nil
	}
	if !changed {
		these := "these "
		if len(data) == 1 {
			these = "this "
		}
		return &Result{Message: "checkpoint " + name + " already held " + these + size + "; nothing changed"}, nil
	}
	msg := "saved checkpoint " + name + " (" + size + ")"
	if !before.IsZero() {
		msg += ", replacing the one saved " + workflow.Ago(e.now().Sub(before))
	}
	return &Result{Changed: true, Message: msg}, nil
}

// MaxCheckpoints bounds the named checkpoints: files of the project's, up to 1 MiB each, that
// no workflow's end removes.
const MaxCheckpoints = 500

// checkpointRoom refuses a checkpoint of a new name when the project has MaxCheckpoints. Two
// processes saving new names at once may both pass it: a bound, not an exact count.
func (e *Engine) checkpointRoom(name string) error {
	if store.ValidName(name) != nil {
		return nil // the save says what is wrong with it
	}
	names, err := e.st.ListCheckpoints("")
	if err != nil || len(names) < MaxCheckpoints || slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("checkpoint %q not saved, nothing was saved: the project keeps at most %d checkpoints and has %d; "+AskWhichCheckpoints,
		name, MaxCheckpoints, len(names))
}

// LoadCheckpoint loads a named checkpoint; a missing one is a store.ErrNotFound error.
func (e *Engine) LoadCheckpoint(name string) (json.RawMessage, error) {
	return e.shownCheckpoint(name)(e.st.LoadCheckpoint(name))
}

// LoadPhaseCheckpoint loads the checkpoint the active workflow keeps with phase: the one a
// transition out of it was given. A phase without one is refused, naming those with one.
func (e *Engine) LoadPhaseCheckpoint(phase string) (json.RawMessage, error) {
	r, _, err := e.active()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errNoActive{}
	}
	data, ok := r.Phases[phase].Metadata["checkpoint"]
	if !ok {
		with := "no phase keeps one"
		if names := workflow.PhasesWithCheckpoint(r); names != nil {
			with = "the phases that keep one are " + secrets.JoinNames(names, ", ")
		}
		return nil, fmt.Errorf("phase %s of workflow %s keeps no checkpoint (a transition out of it keeps one when given a checkpoint); %s", secrets.Shown(secrets.Line(phase, 64)), r.WorkflowID, with)
	}
	if f := secrets.ScanJSON(data); f != nil {
		// No call writes a phase's checkpoint again: what it was for is kept under a name.
		return nil, storedCheckpointSecret("the checkpoint of phase "+phase, f, "save what the next step needs as a named checkpoint, without that text")
	}
	return data, nil
}

// PhaseCheckpoints are the active workflow's phases that keep a transition's checkpoint
// (LoadPhaseCheckpoint reads one), in name order, one of a secret's shape hidden as resume
// hides it; nil when there is none, no workflow is active or its record cannot be read.
func (e *Engine) PhaseCheckpoints() []string {
	r, _, err := e.active()
	if err != nil || r == nil {
		return nil
	}
	return allShown(workflow.PhasesWithCheckpoint(r))
}

// LoadCheckpointOrEmpty is the seeds' graceful load: {} when the checkpoint does not exist.
func (e *Engine) LoadCheckpointOrEmpty(name string) (json.RawMessage, error) {
	return e.shownCheckpoint(name)(e.st.LoadCheckpointOrEmpty(name))
}

// shownCheckpoint passes on a load of checkpoint name, refusing one that holds text of a
// secret's shape: a save refuses it, but the file may be older than the rule that finds it,
// or written by hand. The refusal names the rule and where, never the text. A file the load
// could not read (UnreadableCheckpoint) is scanned as text, since that refusal names the file;
// one too large to scan, or whose scan fails, is refused naming no file (uncheckedCheckpoint).
func (e *Engine) shownCheckpoint(name string) func(json.RawMessage, error) (json.RawMessage, error) {
	return func(data json.RawMessage, err error) (json.RawMessage, error) {
		var f *secrets.Finding
		switch {
		case err == nil:
			f = secrets.ScanJSON(data)
		case unreadableCheckpoint(err):
			var serr error
			if f, serr = e.st.ScanCheckpointFile(name); f == nil && serr != nil {
				return nil, uncheckedCheckpoint(name, serr)
			}
		}
		if f != nil {
			return nil, storedCheckpointSecret(fmt.Sprintf("checkpoint %q", name), f, "save the checkpoint again without that text")
		}
		return data, err
	}
}

// storedCheckpointSecret refuses the checkpoint what ("checkpoint \"plan\"", "the checkpoint
// of phase analyze"), which holds text of a secret's shape (f): kept before a save refused it,
// or written by hand. It names the rule and where, never the text, and ends with step.
func storedCheckpointSecret(what string, f *secrets.Finding, step string) error {
	return fmt.Errorf("%s is not shown: it holds text of a secret's shape (%s at %s), kept before Cairn refused such text or written by hand, and left as it is: %s",
		what, f.Rule, f.Path, step)
}

// uncheckedCheckpoint refuses checkpoint name, whose file the load could not read and the
// scan for a secret could not read to its end (err): too large to scan, or a read failed. The
// file is not named, since what it holds is not known; err's path is left out with it.
func uncheckedCheckpoint(name string, err error) error {
	if errors.Is(err, durable.ErrTooLarge) {
		return fmt.Errorf("checkpoint %q is not shown: its file is over the %d bytes a load reads and over the %d MiB checked for text of a secret's shape, so it is not named either; it was left as it is: save what the next step needs as a checkpoint under another name, within %d bytes",
			name, strictjson.MaxSize, store.ScanLimit>>20, strictjson.MaxSize)
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err
	}
	return fmt.Errorf("checkpoint %q is not shown: its file could not be read to check it for text of a secret's shape (%v), so it is not named either; it was left as it is: try again", name, err)
}

// unreadableCheckpoint reports whether err, a load's, is for a file over the size a load
// reads or not JSON: UnreadableCheckpoint's cases, whose refusal names the file.
func unreadableCheckpoint(err error) bool {
	_, damaged := errors.AsType[*strictjson.Error](err)
	return damaged || errors.Is(err, durable.ErrTooLarge)
}

// UnreadableCheckpoint is the refusal of a load of checkpoint name that failed with err
// because its file is over the size a load reads (saved by hand or by another version) or is
// not JSON (cut short): it says the file was left as it is and ends with whole, which names
// the file and the step that reads it for the one told (the model, a person). Any other err
// is returned as it is.
func UnreadableCheckpoint(name string, err error, whole string) error {
	if errors.Is(err, durable.ErrTooLarge) {
		// No load returns it: its file is all there is.
		return fmt.Errorf("checkpoint %s is over the %d bytes a load reads, and was left as it is; %s", name, strictjson.MaxSize, whole)
	}
	if _, damaged := errors.AsType[*strictjson.Error](err); damaged {
		return fmt.Errorf("%w; %s", err, whole)
	}
	return err
}

// CheckpointBefore says in one sentence, for checkpoint name saved before the active workflow
// started, when it was saved and when the workflow started: the project keeps checkpoints
// across workflows, so it may hold an earlier one's results. "" when it was saved since, when
// no workflow is active, or when either time is not known. One read of the workflow and one
// Lstat.
func (e *Engine) CheckpointBefore(name string) string {
	r, _, err := e.active()
	if err != nil || r == nil {
		return ""
	}
	saved := e.st.CheckpointSaved(name)
	if !savedBefore(saved, r) {
		return ""
	}
	layout := minuteUTC
	if saved.UTC().Format(layout) == r.CreatedAt.UTC().Format(layout) {
		layout = secondUTC // one minute said twice would not read as before
	}
	return fmt.Sprintf("Saved %s, before this workflow started (%s): it may be another workflow's result.",
		saved.UTC().Format(layout), r.CreatedAt.UTC().Format(layout))
}

// noSpace says what a write in dir that failed with ENOSPC (err) lacked: "the disk is full";
// or, where the file system has room for data but no free inode (a store's WriteError says
// so, or dir's file system does), that it has no free inodes, and inodes is true.
func noSpace(err error, dir string) (what string, inodes bool) {
	_, stored := errors.AsType[*store.WriteError](err)
	if store.NoInodes(err) || !stored && durable.NoFreeInodes(dir) {
		return "the file system has no free inodes, though it may have room for data", true
	}
	return "the disk is full", false
}

// minuteUTC is how a time is said to the model or a person: 2026-11-29 10:04 UTC.
const minuteUTC = "2006-01-02 15:04 UTC"

// secondUTC is minuteUTC with the seconds, for two times within one minute.
const secondUTC = "2006-01-02 15:04:05 UTC"

// savedSlack is how much earlier than a workflow's start a checkpoint's file time must be for
// the checkpoint to count as saved before it. A file's time comes from a coarser clock than
// the workflow's (Linux stamps it with the time of the last clock tick, FAT to 2 seconds), so
// a save made just after the start may bear a time a little before it.
const savedSlack = 2 * time.Second

// savedBefore says whether a checkpoint whose file was last written at saved (zero: not known)
// was saved before workflow r started.
func savedBefore(saved time.Time, r *workflow.Record) bool {
	return !saved.IsZero() && !r.CreatedAt.IsZero() && saved.Before(r.CreatedAt.Add(-savedSlack))
}

// checkpointsBefore is those of names (sorted) saved before workflow r started: one Lstat
// each, none when r's start is not known.
func (e *Engine) checkpointsBefore(r *workflow.Record, names []string) []string {
	if r.CreatedAt.IsZero() {
		return nil
	}
	var out []string
	for _, n := range names {
		if savedBefore(e.st.CheckpointSaved(n), r) {
			out = append(out, n)
		}
	}
	return out
}

// ListCheckpoints lists checkpoint names matching a glob pattern ("" for all), sorted.
func (e *Engine) ListCheckpoints(pattern string) ([]string, error) {
	return e.st.ListCheckpoints(pattern)
}

// CheckpointsBefore is those of names (sorted) saved before the active workflow started, as
// Resume tells them apart (Resume.CheckpointsBefore): none when no workflow is active or its
// start is not known. One read of the workflow and one Lstat a name.
func (e *Engine) CheckpointsBefore(names []string) []string {
	r, _, err := e.active()
	if err != nil || r == nil {
		return nil
	}
	return e.checkpointsBefore(r, names)
}

// AppendLog appends one JSON value as a line to logs/<name>.jsonl.
func (e *Engine) AppendLog(name string, entry json.RawMessage) (*Result, error) {
	err := e.st.AppendLog(name, entry)
	// An unfinished last line set aside, said once here: the append that moved it is what
	// the caller reads, whether or not it then failed.
	told := messages(e.st.TakeNotices())
	if err != nil {
		if f := secrets.InRefusal(entry, err); f != nil {
			return nil, fmt.Errorf("log %q entry not appended: %w", name, f)
		}
		if len(told) > 0 {
			return nil, fmt.Errorf("%w (%s)", err, strings.Join(told, "; "))
		}
		return nil, err
	}
	return &Result{Changed: true, Message: "appended to log " + name, Warnings: told}, nil
}

// worded is err said in other words; errors.Is and errors.As still find err.
type worded struct {
	msg string
	err error
}

func (e *worded) Error() string { return e.msg }
func (e *worded) Unwrap() error { return e.err }

// RecordLearning writes a learning into auto-memory (its own file and index line).
func (e *Engine) RecordLearning(r LearningRequest) (*Result, error) {
	if e.memWarn != "" {
		return nil, errors.New(e.memWarn + "; the learning was not recorded")
	}
	rec, err := e.mem.RecordLearning(memory.Learning{Title: r.Title, Body: r.Body, Type: r.Type})
	if errors.Is(err, syscall.ENOSPC) {
		// Not for good, as "learnings will not persist" reads: the same call records it later.
		// Said as a store write the full disk refused is, with the person's step last, which
		// the tools put the model's step in place of (one step, not two).
		what, inodes := noSpace(err, e.mem.Location().Dir)
		step, cause := store.FreeSpaceStep, err.Error()
		if inodes {
			step = store.FreeInodesStep
		}
		if u, ok := errors.AsType[*memory.UnavailableError](err); ok {
			cause = u.Cause()
		}
		return nil, &worded{fmt.Sprintf("the learning was not recorded: %s (%s); %s", what, cause, step), err}
	}
	if err != nil {
		// A file where the memory directory belongs: no call records it until the user acts.
		if why, step := e.memoryNotDir(); why != "" {
			return nil, &worded{fmt.Sprintf("the learning was not recorded: %s: ask the user to %s, then call %srecord_learning again", why, step, ToolPrefix), err}
		}
	}
	if full, ok := errors.AsType[*memory.LearningsFullError](err); ok {
		// A step that loses no learning: the model joins this one to a related one, or the
		// user says which may go.
		which := "which learnings may go"
		if full.Crowded {
			which = "which lines of " + memory.IndexFile + " may go"
		}
		return nil, fmt.Errorf("%w: add it to a related learning instead (call %srecord_learning with that learning's title and both bodies: both are kept), or ask the user %s", err, ToolPrefix, which)
	}
	if memory.LeftAlone(err) {
		// No call records it until the person changes the file.
		return nil, fmt.Errorf("%w: ask the user to %s, then call %srecord_learning again", err, memory.LeftAloneStep(err), ToolPrefix)
	}
	if err != nil {
		return nil, err
	}
	if !rec.Changed {
		return &Result{Message: "learning already recorded in " + rec.Name + "; nothing changed"}, nil
	}
	res := &Result{Changed: true, Message: "recorded learning in " + rec.Name}
	if rec.Replaced {
		// The learning it held is gone: one of the same title, or another project's in a
		// memory directory projects share. Its words let the model keep it if it still holds.
		// Words of a secret's shape are neither said nor to be recorded again: no step.
		was := textsafe.Quote(rec.Was, maxReplacedRunes)
		if secrets.ScanString(was) != nil {
			res.Warnings = append(res.Warnings, "this replaced the learning "+rec.Name+" held; its words are not shown, since they had a secret's shape, which no learning keeps")
		} else {
			res.Warnings = append(res.Warnings, "this replaced the learning "+rec.Name+" held, which said: "+
				was+"; if that still holds, call "+ToolPrefix+"record_learning with it under another title")
		}
	}
	return res, nil
}

// maxReplacedRunes caps the words of a replaced learning quoted back: record_learning's body
// limit, with room for the quotes and an ellipsis.
const maxReplacedRunes = 4003

// Archive moves the active workflow to the archive with a reason (the CLI's `cairn archive`).
func (e *Engine) Archive(reason string) (*Result, error) {
	status, note := archiveStatus(reason)
	if f := secrets.ScanString(note); f != nil {
		return nil, f
	}
	// The end is a revision of its own, the record marked archived (as a replacing start marks
	// the one it replaces): a sync pushes it, so the machines that share the workflow learn it
	// was abandoned rather than go on with it alone. Free text is kept as the note of its
	// archive event, where cairn history shows it; the archive's status (cairn list) stays a name.
	// A one-word reason is noted too: an archive cut short before its move is finished by
	// whoever comes next (the next session start, a replacing start) under the status it reads
	// there (archiveReason).
	kept := note
	if kept == "" && status != "archived" {
		kept = status
	}
	evNote := kept
	if kept != "" {
		// Noted already: an archive cut short after its note (a crash, a failed archive; by
		// an earlier Cairn, the record still active), run again. The note stays once.
		if cur, _, _ := e.active(); cur != nil && e.lastEventNote(cur, "archive") == kept {
			evNote = ""
		}
	}
	_, wres, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		if note != "" {
			if err := e.noteKept("the reason", cur.State, cur.State, note); err != nil {
				return workflow.Result{}, err
			}
		}
		end := cur.Clone()
		if end.Status == workflow.StatusActive { // one finished already says so itself
			end.Status = workflow.StatusArchived
		}
		// Marked already, as cut short above: the end stays once in the journal.
		if end.Status == cur.Status && (evNote == "" || e.lastEventNote(cur, "archive") == kept) {
			return workflow.Result{Record: cur, Event: workflow.Event("archive"), From: cur.State, To: cur.State}, nil
		}
		return workflow.Result{Record: end, Changed: true, Event: workflow.Event("archive"), From: cur.State, To: cur.State}, nil
	}), evNote)
	if res := e.archivedAlready(err, status, note); res != nil {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	// The workflow marked is the one to archive: another session may have replaced it since,
	// and its new workflow is not archived under this note.
	cur := wres.Record
	id := cur.WorkflowID
	info, err := e.st.ArchiveIf(status, id)
	if err != nil {
		if errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
			// Marked archived, it is a finished workflow: another process may archive it first.
			what := "marked archived"
			if kept != "" { // a one-word reason too: whoever archives it files it so
				what += ": " + kept
			}
			return &Result{Changed: true, Message: fmt.Sprintf("workflow %s was %s; another process has since moved it out of the active slot, so it was not archived here", id, what)}, nil
		}
		if res := e.archivedAlready(err, status, note); res != nil {
			return res, nil
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, errNoActive{}
		}
		if wres.Changed {
			// Its end is on record (a revision a sync shares): only the move failed, which
			// the read protocol makes for a finished workflow it finds in the slot.
			msg := fmt.Sprintf("workflow %s was marked archived", id)
			if kept != "" { // a one-word reason too: the next session start files it so
				msg += ": " + kept
			}
			return &Result{Changed: true, Message: msg, Warnings: []string{"moving it to the archive failed: " + archiveLeft(err)}}, nil
		}
		return nil, stateErr(err)
	}
	msg := fmt.Sprintf("archived workflow %s in archive/%s", info.WorkflowID, info.Dir)
	if note != "" {
		msg += ": " + note
	}
	res := &Result{Changed: true, Message: msg, Warnings: wres.Warnings}
	res.retention(info)
	if cur.WorkflowID == info.WorkflowID {
		res.Warnings = warned(res.Warnings, e.ended(cur.WorkflowID, cur.Revision+1, endingLine(cur, status)))
	}
	return res, nil
}

// archivedAlready answers an archive retried after it landed (cairn archive run again, the
// person unsure the first took): when err says there is no active workflow and the newest
// archive was made in the last ten minutes with the same status (and, with a note, its
// journal ends in that note), it is the archive already made; nil otherwise. "No active
// workflow; start one" would read as if the first had not counted. Long after, nothing
// active is what there is to say.
func (e *Engine) archivedAlready(err error, status, note string) *Result {
	if !errors.Is(err, ErrNoActiveWorkflow) && !errors.Is(err, store.ErrNotFound) {
		return nil
	}
	a, ok := e.recentArchive(status)
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("workflow %s was already archived in archive/%s", a.WorkflowID, a.Dir)
	if note != "" {
		last, err := e.st.ReadArchiveLast(a.Dir)
		if err != nil || last == nil {
			return nil
		}
		ev := last.Event
		var d eventDetail
		if ev.Kind != "archive" || json.Unmarshal([]byte(ev.Detail), &d) != nil || d.Note != note {
			return nil
		}
		msg += ": " + note
	}
	res := &Result{Message: msg, WorkflowID: a.WorkflowID}
	e.endingLeft(res, a)
	return res
}

// recentArchive returns the newest archive when it was made in the last ten minutes
// (workflow.DefaultLiveWindow) with status: what an archive retried soon after it landed finds.
func (e *Engine) recentArchive(status string) (store.ArchiveInfo, bool) {
	archives, _, err := e.st.RecentArchives(1)
	if err != nil || len(archives) == 0 {
		return store.ArchiveInfo{}, false
	}
	a := archives[0]
	if age := e.now().Sub(a.At); a.Reason != status || age < 0 || age > workflow.DefaultLiveWindow {
		return store.ArchiveInfo{}, false
	}
	return a, true
}

// lastEventNote is the note of cur's last journal line when that line is a kind event of
// cur's revision; "" otherwise.
func (e *Engine) lastEventNote(cur *workflow.Record, kind string) string {
	recs, err := e.st.ReadJournalSince(cur.WorkflowID, cur.Revision-1)
	if err != nil || len(recs) == 0 {
		return ""
	}
	last := recs[len(recs)-1]
	var d eventDetail
	if last.Revision != cur.Revision || last.Event.Kind != kind || json.Unmarshal([]byte(last.Event.Detail), &d) != nil {
		return ""
	}
	return d.Note
}

// ownEndings are the statuses Cairn files workflows under itself (and the record's active):
// a one-word archive reason is never one of them.
var ownEndings = []string{string(workflow.StatusActive), string(workflow.StatusCompleted), string(workflow.StatusExpired), "replaced"}

// archiveStatus splits an archive reason: one word that is a valid name (abandoned,
// superseded) is the archive's status as before, unless it is one of ownEndings; anything else
// is free text, kept as a note, with the status "archived".
func archiveStatus(reason string) (status, note string) {
	reason = textsafe.OneLine(reason)
	switch {
	case reason == "":
		return "archived", ""
	case slices.Contains(ownEndings, reason):
		// Filed under it, abandoned work would read as completed (past an approval phase
		// waiting for a yes, too), expired or replaced: it is kept as the note instead.
		return "archived", reason
	case store.ValidName(reason) == nil:
		return reason, ""
	}
	return "archived", reason
}
