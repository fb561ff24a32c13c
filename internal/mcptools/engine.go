package mcptools

import (
	"encoding/json"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Engine is the part of *engine.Engine the server calls. It is an interface so that protocol
// tests can run against a fake; the binary always uses the real engine.
type Engine interface {
	Resume(opt engine.ResumeOptions) *engine.Resume
	Start(r engine.StartRequest) (*engine.Result, error)
	Transition(r engine.TransitionRequest) (*engine.Result, error)
	Complete(outcome string) (*engine.Result, error)
	CompleteApproved(outcome string, ap workflow.Approval, workflowID string) (*engine.Result, error)
	UpdateTask(r engine.TaskRequest) (*engine.Result, error)
	SetEnforcement(v []engine.Violation) (*engine.Result, error)
	ExpireTTL(dryRun bool) (*engine.Result, error)
	SaveCheckpoint(name string, data json.RawMessage) (*engine.Result, error)
	LoadCheckpoint(name string) (json.RawMessage, error)
	LoadPhaseCheckpoint(phase string) (json.RawMessage, error)
	PhaseCheckpoints() []string
	CheckpointDeletedNote(name string) string
	CheckpointBefore(name string) string
	ListCheckpoints(pattern string) ([]string, error)
	CheckpointsBefore(names []string) []string
	SetVars(vars map[string]string) (*engine.Result, error)
	ReadVars(keys []string) (engine.VarsRead, error)
	AppendLog(name string, entry json.RawMessage) (*engine.Result, error)
	RecordLearning(r engine.LearningRequest) (*engine.Result, error)
	Initiative(r engine.InitiativeRequest) (*engine.Result, error)

	CurrentSession(pid int) (engine.Session, bool)
	SetSession(id string)
	ReloadDefinitions()
	Snapshot() (engine.Snapshot, error)
	SnapshotNotices() (engine.Snapshot, []string, error)
	HistorySince(id string, after int64) ([]engine.Event, error)
	StateDir() string
	DefinitionsDir() string
	Warnings() []string
	Close() error
}

// Opener opens an engine for a configuration.
type Opener func(engine.Config) (Engine, error)

// OpenEngine opens the real engine.
func OpenEngine(cfg engine.Config) (Engine, error) {
	e, err := engine.Open(cfg)
	if err != nil {
		return nil, err // not a nil *engine.Engine in a non-nil Engine
	}
	return e, nil
}
