package mcptools

import (
	"context"
	"encoding/json"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Engine is the part of *engine.Engine the server calls. It is an interface so that protocol
// tests can run against a fake; the binary always uses the real engine.
type Engine interface {
	Resume(ctx context.Context, opt engine.ResumeOptions) (*engine.Resume, error)
	Start(ctx context.Context, r engine.StartRequest) (*engine.Result, error)
	Transition(ctx context.Context, r engine.TransitionRequest) (*engine.Result, error)
	Complete(ctx context.Context, outcome string) (*engine.Result, error)
	UpdateTask(ctx context.Context, r engine.TaskRequest) (*engine.Result, error)
	SetEnforcement(ctx context.Context, v []engine.Violation) (*engine.Result, error)
	ExpireTTL(ctx context.Context, dryRun bool) (*engine.Result, error)
	SaveCheckpoint(ctx context.Context, name string, data json.RawMessage) (*engine.Result, error)
	LoadCheckpoint(ctx context.Context, name string) (json.RawMessage, error)
	ListCheckpoints(ctx context.Context, pattern string) ([]string, error)
	SetVars(ctx context.Context, vars map[string]string) (*engine.Result, error)
	GetVars(ctx context.Context, keys []string) (map[string]string, error)
	AppendLog(ctx context.Context, name string, entry json.RawMessage) (*engine.Result, error)
	RecordLearning(ctx context.Context, r engine.LearningRequest) (*engine.Result, error)

	CurrentSession(pid int) (engine.Session, bool)
	SetSession(id string)
	ReloadDefinitions()
	Snapshot() (engine.Snapshot, error)
	StateDir() string
	DefinitionsDir() string
	Warnings() []string
	Close() error
}

// initiativeEngine is the initiative operation, asked for separately so the server works with
// an engine that does not offer it yet.
type initiativeEngine interface {
	Initiative(ctx context.Context, r engine.InitiativeRequest) (*engine.Result, error)
}

// Opener opens an engine for a configuration.
type Opener func(engine.Config) (Engine, error)
