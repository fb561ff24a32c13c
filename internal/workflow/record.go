package workflow

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// SchemaVersion is the version every record this package creates carries.
const SchemaVersion = "2.0"

// Status is the life-cycle state of a whole workflow.
type Status string

// Workflow statuses.
const (
	StatusActive    Status = "active"
	StatusCompleted Status = "completed"
	StatusExpired   Status = "expired"
	StatusArchived  Status = "archived"
)

// PhaseStatus is the state of the current phase.
type PhaseStatus string

// Phase statuses.
const (
	PhasePending    PhaseStatus = "pending"
	PhaseInProgress PhaseStatus = "in_progress"
	PhaseComplete   PhaseStatus = "complete"
	PhaseFailed     PhaseStatus = "failed"
	PhaseBlocked    PhaseStatus = "blocked"
)

// Valid reports whether s is one of the known phase statuses.
func (s PhaseStatus) Valid() bool {
	return slices.Contains([]PhaseStatus{PhasePending, PhaseInProgress, PhaseComplete, PhaseFailed, PhaseBlocked}, s)
}

// Record is the schema-2.0 workflow record (L1), one JSON document per workflow. Its JSON names
// are a shared contract; members it has no field for are kept in Extra and written back.
type Record struct {
	Version     string            `json:"version"`
	WorkflowID  string            `json:"workflow_id"`
	Type        string            `json:"type"`
	Context     string            `json:"context"`
	Scope       string            `json:"scope,omitempty"`
	State       string            `json:"state"`
	PhaseStatus PhaseStatus       `json:"phase_status"`
	Status      Status            `json:"status"`
	Phases      map[string]Phase  `json:"phases,omitempty"`
	History     []HistoryEntry    `json:"history,omitempty"`
	Tasks       []Task            `json:"tasks,omitempty"`
	Approvals   []Approval        `json:"approvals,omitempty"`
	Artifacts   []string          `json:"artifacts,omitempty"`
	Vars        map[string]string `json:"vars,omitempty"`
	Enforcement *Enforcement      `json:"enforcement,omitempty"`
	TTL         string            `json:"ttl,omitempty"`
	CreatedAt   time.Time         `json:"created_at,omitzero"`
	UpdatedAt   time.Time         `json:"updated_at,omitzero"`
	// ChangedAt is the last change made by an agent or a person. Housekeeping writes
	// (recovery after a crash) move updated_at only, so ages and the TTL count from this.
	ChangedAt        time.Time `json:"changed_at,omitzero"`
	CompletedAt      time.Time `json:"completed_at,omitzero"`
	Outcome          string    `json:"outcome,omitempty"`
	Owner            *Owner    `json:"owner,omitempty"`
	InterruptionSafe *bool     `json:"interruption_safe,omitempty"`
	// Revision is owned by the store: it increments on every write. Operations here copy it
	// unchanged.
	Revision int64 `json:"revision"`

	// Extra holds the JSON members this version does not know, written back unchanged.
	Extra map[string]json.RawMessage `json:"-"`
}

// Phase is the per-phase part of a record (record.phases[name]).
type Phase struct {
	Completed   bool                       `json:"completed"`
	CompletedAt time.Time                  `json:"completed_at,omitzero"`
	Outputs     []string                   `json:"outputs,omitempty"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// HistoryEntry is one move between phases.
type HistoryEntry struct {
	From       string                     `json:"from"`
	To         string                     `json:"to"`
	At         time.Time                  `json:"at,omitzero"`
	SessionID  string                     `json:"session_id,omitempty"`
	Note       string                     `json:"note,omitempty"`
	Checkpoint string                     `json:"checkpoint,omitempty"`
	Extra      map[string]json.RawMessage `json:"-"`
}

// TaskStatus is the state of one task inside a phase.
type TaskStatus string

// Task statuses.
const (
	TaskPending TaskStatus = "pending"
	TaskRunning TaskStatus = "running"
	TaskDone    TaskStatus = "done"
	TaskFailed  TaskStatus = "failed"
)

// TaskStatuses are the task statuses, in the order a message names them.
var TaskStatuses = []TaskStatus{TaskPending, TaskRunning, TaskDone, TaskFailed}

// ErrTaskStatus is the refusal of a status that is none of TaskStatuses.
var ErrTaskStatus = errors.New("use pending, running, done or failed")

// Valid reports whether s is one of the known task statuses.
func (s TaskStatus) Valid() bool {
	return slices.Contains(TaskStatuses, s)
}

// Task is one unit of work inside a phase (seed 002's execution progress). Attempts counts the
// runs that ended without success: a run that failed or was interrupted.
type Task struct {
	ID          string                     `json:"id"`
	Phase       string                     `json:"phase,omitempty"`
	Status      TaskStatus                 `json:"status"`
	Attempts    int                        `json:"attempts"`
	Output      string                     `json:"output,omitempty"`
	Note        string                     `json:"note"`
	StartedAt   time.Time                  `json:"started_at,omitzero"`
	CompletedAt time.Time                  `json:"completed_at,omitzero"`
	UpdatedAt   time.Time                  `json:"updated_at,omitzero"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// Approval records a gate: requested when its phase is entered, approved when it is left
// forward.
type Approval struct {
	Phase       string    `json:"phase"`
	RequestedAt time.Time `json:"requested_at,omitzero"`
	ApprovedAt  time.Time `json:"approved_at,omitzero"`
	// Source says who approved: "elicitation" (the person answered the client's prompt),
	// "cli" (`cairn approve`) or "setting" (a person turned approvals off for the project).
	Source string                     `json:"source,omitempty"`
	Note   string                     `json:"note,omitempty"`
	Extra  map[string]json.RawMessage `json:"-"`
}

// Open reports whether the approval was requested and not yet given.
func (a Approval) Open() bool { return !a.RequestedAt.IsZero() && a.ApprovedAt.IsZero() }

// Owner is the session that last changed the workflow, and when it was last seen alive.
type Owner struct {
	SessionID string `json:"session_id"`
	PID       int    `json:"pid,omitempty"`
	// Host is the machine PID is on (absent in what an older Cairn wrote): on another
	// machine sharing the workflow through a remote, PID names no process of the session's.
	Host string `json:"host,omitempty"`
	// ClientStart is when the client of PID started (absent where the platform does not tell,
	// and in what an older Cairn wrote): a process of that pid that started at another time
	// took the pid after the owner's client exited.
	ClientStart uint64                     `json:"client_start,omitempty"`
	Heartbeat   time.Time                  `json:"heartbeat,omitzero"`
	Extra       map[string]json.RawMessage `json:"-"`
	// ClientRuns, never stored, says the caller knows the owner's client runs in its session
	// still: the owner is live however old its heartbeat (one long turn refreshes none).
	ClientRuns bool `json:"-"`
}

// Each type below marshals through a method-less twin with EncodeKnown and DecodeKnown
// (unknown.go), which keep the members it has no field for in Extra.

type (
	recordJSON   Record
	phaseJSON    Phase
	entryJSON    HistoryEntry
	taskJSON     Task
	approvalJSON Approval
	ownerJSON    Owner
)

func (r Record) MarshalJSON() ([]byte, error)       { return EncodeKnown(recordJSON(r), r.Extra) }
func (r *Record) UnmarshalJSON(b []byte) error      { return DecodeKnown(b, (*recordJSON)(r), &r.Extra) }
func (p Phase) MarshalJSON() ([]byte, error)        { return EncodeKnown(phaseJSON(p), p.Extra) }
func (p *Phase) UnmarshalJSON(b []byte) error       { return DecodeKnown(b, (*phaseJSON)(p), &p.Extra) }
func (h HistoryEntry) MarshalJSON() ([]byte, error) { return EncodeKnown(entryJSON(h), h.Extra) }

func (h *HistoryEntry) UnmarshalJSON(b []byte) error {
	return DecodeKnown(b, (*entryJSON)(h), &h.Extra)
}

func (t Task) MarshalJSON() ([]byte, error)      { return EncodeKnown(taskJSON(t), t.Extra) }
func (t *Task) UnmarshalJSON(b []byte) error     { return DecodeKnown(b, (*taskJSON)(t), &t.Extra) }
func (a Approval) MarshalJSON() ([]byte, error)  { return EncodeKnown(approvalJSON(a), a.Extra) }
func (a *Approval) UnmarshalJSON(b []byte) error { return DecodeKnown(b, (*approvalJSON)(a), &a.Extra) }
func (o Owner) MarshalJSON() ([]byte, error)     { return EncodeKnown(ownerJSON(o), o.Extra) }
func (o *Owner) UnmarshalJSON(b []byte) error    { return DecodeKnown(b, (*ownerJSON)(o), &o.Extra) }

// Clone returns a deep copy of r, so that an operation can change the copy while the caller
// keeps the original (for the journal, or to compare).
func (r *Record) Clone() *Record { return deepCopy(r) }

// CompletedPhases lists the phases marked completed: in the order of def's phases when def is
// given, else by completion time. A phase def does not have (renamed or removed since) goes
// by its completion time among them, before the first listed phase completed after it, so a
// renamed first phase is not listed after the phases that followed it; one with no time last.
func (r *Record) CompletedPhases(def *Definition) []string {
	var known, others []string
	for name, p := range r.Phases {
		switch {
		case !p.Completed:
		case def != nil && slices.Contains(def.Phases, name):
			known = append(known, name)
		default:
			others = append(others, name)
		}
	}
	if def != nil {
		slices.SortFunc(known, func(a, b string) int { return slices.Index(def.Phases, a) - slices.Index(def.Phases, b) })
	}
	at := func(name string) time.Time { return r.Phases[name].CompletedAt }
	slices.SortFunc(others, func(a, b string) int {
		if za, zb := at(a).IsZero(), at(b).IsZero(); za && !zb {
			return 1
		} else if zb && !za {
			return -1
		}
		return cmp.Or(at(a).Compare(at(b)), strings.Compare(a, b))
	})
	done := make([]string, 0, len(known)+len(others))
	for _, k := range known {
		for len(others) > 0 && !at(others[0]).IsZero() && at(others[0]).Before(at(k)) {
			done, others = append(done, others[0]), others[1:]
		}
		done = append(done, k)
	}
	return append(done, others...)
}

// LastActivity is when an agent or a person last changed the record: changed_at, else
// updated_at (records written before changed_at existed), else created_at.
func (r *Record) LastActivity() time.Time {
	if !r.ChangedAt.IsZero() {
		return r.ChangedAt
	}
	if !r.UpdatedAt.IsZero() {
		return r.UpdatedAt
	}
	return r.CreatedAt
}
