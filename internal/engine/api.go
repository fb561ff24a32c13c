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
	Tier          string          `json:"tier"` // Full, Minimal, L2-only, None
	WorkflowID    string          `json:"workflow_id,omitempty"`
	Type          string          `json:"type,omitempty"`
	Context       string          `json:"context,omitempty"`
	Phase         string          `json:"phase,omitempty"`
	PhaseStatus   string          `json:"phase_status,omitempty"`
	AgeSeconds    int64           `json:"age_seconds,omitempty"`
	Completed     []string        `json:"completed,omitempty"`
	Allowed       []string        `json:"allowed,omitempty"` // allowed next phases
	Next          string          `json:"next,omitempty"`
	Warnings      []string        `json:"warnings,omitempty"`
	Blocking      []Violation     `json:"blocking,omitempty"`
	Notices       []string        `json:"notices,omitempty"` // what the protocol did: expired, quarantined, recovered
	L2Line        string          `json:"l2_line,omitempty"`
	OpenTasks     []string        `json:"open_tasks,omitempty"` // pending or running tasks, oldest first (claudetasks.go)
	Workflow      json.RawMessage `json:"workflow,omitempty"`
	Report        string          `json:"-"` // the fenced resume report; "" when nothing to say
	SystemMessage string          `json:"-"` // one line for the user when something needs their eye
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
	// 001's milestone front matter and WORKFLOW-STATUS.yaml (yamldoc.Codec). The hook
	// binaries leave it nil, as they link no YAML library; internal/hook hands a project that
	// needs one to the cairn binary before it opens the engine.
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
type Result struct {
	Message  string          `json:"message"`
	Changed  bool            `json:"changed"`
	Workflow json.RawMessage `json:"workflow,omitempty"`
	Revision int64           `json:"revision,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
}

// The operations. Implemented in engine.go; this list is the contract the adapters code to.
//
//	func Open(cfg Config) (*Engine, error)
//	    Finds the project root and state dir (internal/project), opens the store, loads the
//	    built-in and user workflow definitions (broken ones become Warnings, never errors),
//	    finds the L2 memory dir. Fails only when the state dir cannot be used at all.
//	func (e *Engine) Close() error
//	func (e *Engine) StateDir() string
//	func (e *Engine) Warnings() []string        // L2 off or unavailable; definition errors once loaded
//
//	// The read protocol (SessionStart, resume_check, cairn status). Apply=true also expires
//	// TTLs, archives, recovers interrupted tasks and writes the L2 lines that follow; Apply=false
//	// only reports (cairn status). DryRun previews expiry.
//	func (e *Engine) Resume(ctx context.Context, opt ResumeOptions) (*Resume, error)
//
//	// The write operations; each returns a *Result (Changed=false for an idempotent no-op) or
//	// an error whose text says what was wrong and what would be right. Errors callers branch on
//	// are typed: *workflow.TransitionError, *workflow.ConflictError, ErrNoActiveWorkflow,
//	// ErrActiveWorkflow (start without replace), store.ErrNotFound, *secrets.Finding,
//	// *jsonx.Error, *store.NameError, *store.LockTimeoutError.
//	func (e *Engine) Start(ctx context.Context, r StartRequest) (*Result, error)
//	func (e *Engine) Transition(ctx context.Context, r TransitionRequest) (*Result, error)
//	func (e *Engine) Complete(ctx context.Context, outcome string) (*Result, error)
//	func (e *Engine) UpdateTask(ctx context.Context, r TaskRequest) (*Result, error)
//	func (e *Engine) SetEnforcement(ctx context.Context, v []Violation) (*Result, error)
//	func (e *Engine) ExpireTTL(ctx context.Context, dryRun bool) (*Result, error)
//	func (e *Engine) Archive(ctx context.Context, reason string) (*Result, error)
//	func (e *Engine) SaveCheckpoint(ctx context.Context, name string, data json.RawMessage) (*Result, error)
//	func (e *Engine) LoadCheckpoint(ctx context.Context, name string) (json.RawMessage, error)
//	func (e *Engine) ListCheckpoints(ctx context.Context, pattern string) ([]string, error)
//	func (e *Engine) SetVars(ctx context.Context, vars map[string]string) (*Result, error)
//	func (e *Engine) GetVars(ctx context.Context, keys []string) (map[string]string, error)
//	func (e *Engine) ExportVars(ctx context.Context) (string, error) // `export K='v'` lines
//	func (e *Engine) AppendLog(ctx context.Context, name string, entry json.RawMessage) (*Result, error)
//	func (e *Engine) RecordLearning(ctx context.Context, r LearningRequest) (*Result, error)
//	func (e *Engine) Initiative(ctx context.Context, r InitiativeRequest) (*Result, error)
//	// The CLI's own verbs (cliops.go): cairn vars unset, checkpoint delete, log show.
//	func (e *Engine) UnsetVars(ctx context.Context, keys []string) (*Result, error)
//	func (e *Engine) DeleteCheckpoint(ctx context.Context, name string) (*Result, error)
//	func (e *Engine) ReadLog(ctx context.Context, name string) (store.Lines, error)
//
//	// Sessions and hooks.
//	func (e *Engine) RecordSession(s Session) error        // sessions/<pid>.json
//	func (e *Engine) CurrentSession(pid int) (Session, bool) // what SessionStart recorded for pid
//	func (e *Engine) Stop(ctx context.Context, in StopInput) (*StopOutcome, error)
//
//	// Watching (MCP server, cairn watch).
//	func (e *Engine) Snapshot() (Snapshot, error) // revision, workflow id, last actor/session; cheap
//	func (e *Engine) List(ctx context.Context) ([]Summary, error)        // active + archived
//	func (e *Engine) Show(ctx context.Context, id string) (json.RawMessage, error)
//	func (e *Engine) History(ctx context.Context, id string) ([]Event, error)
//	func (e *Engine) Doctor(ctx context.Context, opt DoctorOptions) []Check
//	func (e *Engine) SetSession(id string)   // not safe concurrently with other calls
//	func (e *Engine) ReloadDefinitions()     // likewise; the MCP server serialises both
