// Package engine is Cairn's one core: it joins the L1 store, the workflow domain and the L2
// memory into the operations every binary offers. The MCP server, the hooks and the CLI are thin
// adapters over it; none of them reads or writes state any other way.
//
// Every operation that changes state follows the write protocol: L1 first (durable, under the
// lock, journaled), then the L2 lines the change owes. L1 failing fails the operation; L2
// failing only adds a warning.
package engine

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// ResumeOptions steers the read protocol.
type ResumeOptions struct {
	Apply  bool   // expire, archive, recover and write L2 (SessionStart, resume_check)
	DryRun bool   // with Apply: say what expiry would do, change nothing
	Source string // SessionStart source (startup, resume, clear, compact, fork), if any
	// ReportOnly leaves Resume.Workflow empty: the SessionStart hook prints the report and
	// the summary fields, never the whole record.
	ReportOnly bool
}

// Resume is the read protocol's answer.
type Resume struct {
	Tier        string   `json:"tier"` // Full, Minimal, L2-only, None
	WorkflowID  string   `json:"workflow_id,omitempty"`
	Type        string   `json:"type,omitempty"`
	Context     string   `json:"context,omitempty"`
	Phase       string   `json:"phase,omitempty"`
	PhaseStatus string   `json:"phase_status,omitempty"`
	AgeSeconds  int64    `json:"age_seconds,omitempty"`
	Completed   []string `json:"completed,omitempty"`
	Allowed     []string `json:"allowed,omitempty"` // allowed next phases
	Next        string   `json:"next,omitempty"`
	// AwaitingApproval names the approval phase waiting for a person's yes, if any.
	AwaitingApproval string      `json:"awaiting_approval,omitempty"`
	Warnings         []string    `json:"warnings,omitempty"`
	Blocking         []Violation `json:"blocking,omitempty"`
	Notices          []string    `json:"notices,omitempty"` // what the protocol did: expired, quarantined, recovered
	L2Line           string      `json:"l2_line,omitempty"`
	// Ended is the L2 line of the workflow that ended last, when none is active: there is
	// nothing to resume.
	Ended string `json:"last_ended,omitempty"`
	// Details (resume_check and cairn status only): task counts, failed task ids and
	// checkpoint names.
	Tasks         string          `json:"tasks,omitempty"`
	FailedTasks   []string        `json:"failed_tasks,omitempty"`
	Checkpoints   []string        `json:"checkpoints,omitempty"`
	Approvals     []string        `json:"approvals,omitempty"`  // who approved which phase, when
	OpenTasks     []string        `json:"open_tasks,omitempty"` // pending or running tasks, oldest first (claudetasks.go)
	Workflow      json.RawMessage `json:"workflow,omitempty"`
	Report        string          `json:"-"` // the fenced resume report; "" when nothing to say
	SystemMessage string          `json:"-"` // one line for the user when something needs their eye

	// Shared says how this clone's mirror of the remote stands, when it shares its workflow
	// through one: "shared via origin: synced 4m ago, 2 changes not pushed".
	Shared string `json:"shared,omitempty"`
}

// Session is what the SessionStart hook records about a running Claude Code client.
type Session struct {
	SessionID string    `json:"session_id"`
	Source    string    `json:"source,omitempty"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat"`
}

// StopInput is what the Stop hook knows.
type StopInput struct {
	SessionID      string
	StopHookActive bool
}

// StopOutcome says what the Stop hook should print.
type StopOutcome struct {
	Block         bool   // ask the agent to continue and deal with Reason
	Reason        string // names the blocking violations
	SystemMessage string // one line for the user, or ""
	Wrote         []string
}

// Snapshot is the cheap view of the active workflow watchers compare.
type Snapshot struct {
	WorkflowID string    `json:"workflow_id,omitempty"`
	Revision   int64     `json:"revision"`
	Phase      string    `json:"phase,omitempty"`
	SessionID  string    `json:"session_id,omitempty"` // who last changed it
	UpdatedAt  time.Time `json:"updated_at"`
}

// Summary is one line of `cairn list`.
type Summary struct {
	WorkflowID string    `json:"workflow_id"`
	Type       string    `json:"type"`
	Phase      string    `json:"phase"`
	Status     string    `json:"status"` // active, completed, expired, replaced, conflict, ...
	Context    string    `json:"context"`
	UpdatedAt  time.Time `json:"updated_at"`
	Archived   string    `json:"archived,omitempty"` // archive dir name
}

// Event is one journal record, for `cairn history`.
type Event struct {
	Seq      int64           `json:"seq"`
	Revision int64           `json:"revision"`
	At       time.Time       `json:"at"`
	Kind     string          `json:"kind"`
	Actor    string          `json:"actor,omitempty"`
	Session  string          `json:"session_id,omitempty"`
	Detail   json.RawMessage `json:"detail,omitempty"`
}

// Check is one line of `cairn doctor`.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // what to do, when not OK
}

// Config says where and as whom the engine runs. Zero fields take the process's own values.
type Config struct {
	Getenv    func(string) string // default os.Getenv
	WorkDir   string              // default os.Getwd
	Now       func() time.Time    // default time.Now
	SessionID string              // the Claude Code session making the call, if known
	PID       int                 // Claude Code's pid (hooks: $CLAUDE_PID; MCP server: its parent)
	Actor     string              // "mcp", "session-start", "stop", "cli": recorded in the journal
	LockWait  time.Duration       // bound on waiting for a lock; default 3s
	// YAML reads and writes the YAML Cairn deals in: the user's workflow definitions, seed
	// 001's milestone front matter and WORKFLOW-STATUS.yaml (yamldoc.Codec). Every
	// binary passes one; nil (some tests) leaves those files unread, each one reported.
	YAML YAML
	// NoCreate is for commands that only read, and for hooks run without a usable
	// CLAUDE_PROJECT_DIR: a missing state directory is not created and reads as empty
	// (store.WithNoCreate).
	NoCreate bool
}

// YAML is what the engine needs from a YAML library; see Config.YAML.
type YAML interface {
	ParseDefinition(file string, data []byte) (*workflow.Definition, error)
	ParseStatusDoc(data []byte) (*workflow.StatusDoc, error)
	MarshalStatusDoc(d workflow.StatusDoc) ([]byte, error)
	MilestoneFrontMatter(data []byte) (title, name, status string, err error)
}

// errNoYAML says why a YAML file was left alone by a process without a YAML reader.
var errNoYAML = errors.New("this binary reads no YAML (the hooks hand such projects to the cairn binary; run `cairn doctor`)")

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
}

// TaskRequest is update_task's input.
type TaskRequest struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Output string `json:"output,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Violation is one enforcement finding (seed 001).
type Violation struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Details  string `json:"details"`
}

// LearningRequest is record_learning's input.
type LearningRequest struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Type  string `json:"type,omitempty"`
}

// InitiativeRequest is the initiative tool's input. Action is one of get, create, set_status,
// add_milestone, update_milestone.
type InitiativeRequest struct {
	Action    string `json:"action"`
	Title     string `json:"title,omitempty"`
	Status    string `json:"status,omitempty"`
	Milestone string `json:"milestone,omitempty"`
	Note      string `json:"note,omitempty"`
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
}

// The operations are the Engine's methods (go doc ./internal/engine): Open and the lookups in
// engine.go, the state-changing operations in ops.go, initiative.go and cliops.go (the CLI's own verbs) (each returns a *Result,
// Changed false for an idempotent no-op), the read protocol in resume.go, the views (list,
// show, history, doctor) in views.go, sessions and the Stop hook's work in session.go. Their
// errors say what was wrong and what would be right; Classify (errors.go) sorts them for the
// adapters, and those callers branch on are typed (*workflow.TransitionError,
// *workflow.ConflictError, ErrNoActiveWorkflow, *secrets.Finding, *strictjson.Error).
