package mcptools_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// fakeState is an in-memory stand-in for the state directory, shared by every fake engine
// opened on it, the way real engines share files. It knows just enough of the domain (apex's
// phases and moves) for the adapter's tests; the real engine has its own.
type fakeState struct {
	mu          sync.Mutex
	dir         string
	wf          *fakeWorkflow
	checkpoints map[string]json.RawMessage
	vars        map[string]string
	logs        map[string][]json.RawMessage
	learnings   []engine.LearningRequest
	opens       []engine.Config
	closes      int
	sessionSets []string
	reloads     int
	calls       []string
	failOpen    error
	block       chan struct{} // when set, write calls wait on it
	panicVars   bool          // when set, ReadVars panics, as a bug in the engine would
	failLearn   error         // when set, RecordLearning returns it
	failSave    error         // when set, SaveCheckpoint returns it
}

type fakeWorkflow struct {
	ID, Type, Context, Phase, Session string
	Revision                          int64
	Completed                         []string
	Violations                        []engine.Violation
	Tasks                             map[string]string
	Outcome                           string
}

var apexMoves = map[string][]string{
	"analyze": {"plan"}, "plan": {"implement", "analyze"}, "implement": {"review"},
	"review": {"implement", "git-commit"},
}

func newFakeState(dir string) *fakeState {
	return &fakeState{
		dir:         dir,
		checkpoints: map[string]json.RawMessage{},
		vars:        map[string]string{},
		logs:        map[string][]json.RawMessage{},
	}
}

func (st *fakeState) opener() mcptools.Opener {
	return func(cfg engine.Config) (mcptools.Engine, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.failOpen != nil {
			return nil, st.failOpen
		}
		st.opens = append(st.opens, cfg)
		return &fakeEngine{st: st, cfg: cfg}, nil
	}
}

// onlySnapshots marks the calls made so far; the check it returns fails t for any call made
// since that was more than a snapshot: a refused request must not reach the engine.
func (st *fakeState) onlySnapshots() (check func(t *testing.T)) {
	st.mu.Lock()
	before := len(st.calls)
	st.mu.Unlock()
	return func(t *testing.T) {
		t.Helper()
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, op := range st.calls[before:] {
			if op != "snapshot" {
				t.Errorf("engine was called (%s) despite bad arguments", op)
			}
		}
	}
}

// fakeEngine is one opened engine: the shared state plus the session it acts for.
type fakeEngine struct {
	st     *fakeState
	cfg    engine.Config
	closed bool
}

var errClosed = errors.New("engine used after Close")

func (e *fakeEngine) lock(op string) (func(), error) {
	e.st.mu.Lock()
	if e.closed {
		e.st.mu.Unlock()
		return nil, errClosed
	}
	e.st.calls = append(e.st.calls, op)
	block := e.st.block
	if block != nil && op != "snapshot" {
		e.st.mu.Unlock()
		<-block
		e.st.mu.Lock()
	}
	return e.st.mu.Unlock, nil
}

// lockWorkflow is lock for an operation on the active workflow: workflow.ErrNoWorkflow
// when there is none.
func (e *fakeEngine) lockWorkflow(op string) (func(), error) {
	unlock, err := e.lock(op)
	if err != nil {
		return nil, err
	}
	if e.st.wf == nil {
		unlock()
		return nil, workflow.ErrNoWorkflow
	}
	return unlock, nil
}

func (e *fakeEngine) result(msg string) *engine.Result {
	r := &engine.Result{Message: msg, Changed: true}
	if wf := e.st.wf; wf != nil {
		wf.Revision++
		wf.Session = e.cfg.SessionID
		r.Revision = wf.Revision
		r.Workflow = wf.json()
		r.WorkflowID, r.Phase = wf.ID, wf.Phase
	}
	return r
}

func (wf *fakeWorkflow) json() json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"workflow_id": wf.ID, "type": wf.Type, "context": wf.Context, "state": wf.Phase,
		"revision": wf.Revision, "status": "active",
	})
	return b
}

func (e *fakeEngine) Resume(opt engine.ResumeOptions) *engine.Resume {
	unlock, err := e.lock("resume")
	if err != nil {
		panic(err) // the real Resume cannot fail: a call after Close is the server's bug
	}
	defer unlock()
	wf := e.st.wf
	if wf == nil {
		return &engine.Resume{Tier: "None", Next: "start_workflow when you begin a multi-phase task"}
	}
	return &engine.Resume{
		Tier: "Full", WorkflowID: wf.ID, Type: wf.Type, Context: wf.Context, Phase: wf.Phase,
		PhaseStatus: "in_progress", Completed: wf.Completed, Allowed: apexMoves[wf.Phase],
		Next: "continue " + wf.Phase, Blocking: wf.Violations, Workflow: wf.json(),
		Report: "<cairn-resume nonce=x>\nWorkflow " + wf.ID + " at " + wf.Phase + "\n</cairn-resume>",
	}
}

func (e *fakeEngine) Start(r engine.StartRequest) (*engine.Result, error) {
	unlock, err := e.lock("start")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r.Type != "apex" {
		return nil, fmt.Errorf("unknown workflow type %q: use apex", r.Type)
	}
	if e.st.wf != nil && !r.Replace {
		return nil, &workflow.ActiveError{WorkflowID: e.st.wf.ID, Type: e.st.wf.Type, Phase: e.st.wf.Phase}
	}
	id := r.WorkflowID
	if id == "" {
		id = "apex-20261122T173000Z-3f9a"
	}
	e.st.wf = &fakeWorkflow{ID: id, Type: r.Type, Context: r.Context, Phase: "analyze", Tasks: map[string]string{}}
	return e.result("started apex workflow " + id + " at analyze"), nil
}

func (e *fakeEngine) Transition(r engine.TransitionRequest) (*engine.Result, error) {
	unlock, err := e.lock("transition")
	if err != nil {
		return nil, err
	}
	defer unlock()
	wf := e.st.wf
	if wf == nil {
		return nil, workflow.ErrNoWorkflow
	}
	if r.From != "" && r.From != wf.Phase {
		return nil, &workflow.ConflictError{WorkflowID: wf.ID, ExpectedPhase: r.From, FoundPhase: wf.Phase}
	}
	if !slices.Contains(apexMoves[wf.Phase], r.To) {
		return nil, &workflow.TransitionError{Type: wf.Type, From: wf.Phase, Allowed: apexMoves[wf.Phase], To: r.To}
	}
	wf.Completed = append(wf.Completed, wf.Phase)
	wf.Phase = r.To
	return e.result("moved to " + r.To), nil
}

func (e *fakeEngine) CompleteApproved(outcome string, _ workflow.Approval, _ string) (*engine.Result, error) {
	return e.Complete(outcome)
}

func (e *fakeEngine) Complete(outcome string) (*engine.Result, error) {
	unlock, err := e.lockWorkflow("complete")
	if err != nil {
		return nil, err
	}
	defer unlock()
	e.st.wf.Outcome = outcome
	r := e.result("completed: " + outcome)
	e.st.wf = nil
	return r, nil
}

func (e *fakeEngine) UpdateTask(r engine.TaskRequest) (*engine.Result, error) {
	unlock, err := e.lockWorkflow("task")
	if err != nil {
		return nil, err
	}
	defer unlock()
	e.st.wf.Tasks[r.ID] = r.Status
	return e.result("task " + r.ID + " is " + r.Status), nil
}

func (e *fakeEngine) SetEnforcement(v []engine.Violation) (*engine.Result, error) {
	unlock, err := e.lockWorkflow("enforcement")
	if err != nil {
		return nil, err
	}
	defer unlock()
	e.st.wf.Violations = v
	return e.result(fmt.Sprintf("%d violation(s) recorded", len(v))), nil
}

func (e *fakeEngine) ExpireTTL(dryRun bool) (*engine.Result, error) {
	unlock, err := e.lock("expire")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return &engine.Result{Message: fmt.Sprintf("nothing has expired (dry run %v)", dryRun)}, nil
}

func (e *fakeEngine) SaveCheckpoint(name string, data json.RawMessage) (*engine.Result, error) {
	unlock, err := e.lock("save")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if e.st.failSave != nil {
		return nil, e.st.failSave
	}
	e.st.checkpoints[name] = slices.Clone(data)
	return &engine.Result{Message: "saved checkpoint " + name, Changed: true}, nil
}

func (e *fakeEngine) CheckpointBefore(string) string { return "" }

func (e *fakeEngine) CheckpointsBefore([]string) []string { return nil }

func (e *fakeEngine) LoadCheckpoint(name string) (json.RawMessage, error) {
	unlock, err := e.lock("load")
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, ok := e.st.checkpoints[name]
	if !ok {
		return nil, &store.NotFoundError{What: "checkpoint", Name: name} // the real engine's error
	}
	return d, nil
}

func (e *fakeEngine) ListCheckpoints(pattern string) ([]string, error) {
	unlock, err := e.lock("list")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []string
	for n := range e.st.checkpoints {
		if ok, _ := path.Match(pattern, n); pattern == "" || ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (e *fakeEngine) SetVars(vars map[string]string) (*engine.Result, error) {
	unlock, err := e.lockWorkflow("setvars")
	if err != nil {
		return nil, err
	}
	defer unlock()
	for k, v := range vars {
		e.st.vars[k] = v
	}
	return e.result(fmt.Sprintf("set %d variable(s)", len(vars))), nil
}

func (e *fakeEngine) ReadVars(keys []string) (engine.VarsRead, error) {
	unlock, err := e.lock("getvars")
	if err != nil {
		return engine.VarsRead{}, err
	}
	defer unlock()
	if e.st.panicVars {
		panic("index out of range")
	}
	out := map[string]string{}
	for k, v := range e.st.vars {
		if len(keys) == 0 || slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return engine.VarsRead{Vars: out}, nil
}

func (e *fakeEngine) AppendLog(name string, entry json.RawMessage) (*engine.Result, error) {
	unlock, err := e.lock("log")
	if err != nil {
		return nil, err
	}
	defer unlock()
	e.st.logs[name] = append(e.st.logs[name], slices.Clone(entry))
	return &engine.Result{Message: "appended to log " + name, Changed: true}, nil
}

func (e *fakeEngine) RecordLearning(r engine.LearningRequest) (*engine.Result, error) {
	unlock, err := e.lock("learning")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if e.st.failLearn != nil {
		return nil, e.st.failLearn
	}
	e.st.learnings = append(e.st.learnings, r)
	return &engine.Result{Message: "recorded learning " + r.Title, Changed: true}, nil
}

func (e *fakeEngine) Initiative(r engine.InitiativeRequest) (*engine.Result, error) {
	unlock, err := e.lock("initiative")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return &engine.Result{Message: "initiative " + r.Action, Changed: r.Action != "get"}, nil
}

// CurrentSession reads sessions/<pid>.json from the fake's directory, as the engine does.
func (e *fakeEngine) CurrentSession(pid int) (engine.Session, bool) {
	b, err := os.ReadFile(filepath.Join(e.st.dir, "sessions", strconv.Itoa(pid)+".json"))
	if err != nil {
		return engine.Session{}, false
	}
	var s engine.Session
	if json.Unmarshal(b, &s) != nil {
		return engine.Session{}, false
	}
	return s, true
}

func (e *fakeEngine) Snapshot() (engine.Snapshot, error) {
	unlock, err := e.lock("snapshot")
	if err != nil {
		return engine.Snapshot{}, err
	}
	defer unlock()
	if e.st.wf == nil {
		return engine.Snapshot{}, nil
	}
	return engine.Snapshot{WorkflowID: e.st.wf.ID, Revision: e.st.wf.Revision, Phase: e.st.wf.Phase,
		SessionID: e.st.wf.Session, UpdatedAt: time.Now()}, nil
}

// HistorySince: the fake keeps no journal; its changes carry their session in the snapshot.
func (e *fakeEngine) HistorySince(string, int64) ([]engine.Event, error) { return nil, nil }

func (e *fakeEngine) SnapshotNotices() (engine.Snapshot, []string, error) {
	s, err := e.Snapshot()
	return s, nil, err
}

func (e *fakeEngine) StateDir() string       { return e.st.dir }
func (e *fakeEngine) DefinitionsDir() string { return filepath.Join(e.st.dir, ".claude", "workflows") }

func (e *fakeEngine) SetSession(id string) {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	e.cfg.SessionID = id
	e.st.sessionSets = append(e.st.sessionSets, id)
}

func (e *fakeEngine) ReloadDefinitions() {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	e.st.reloads++
}
func (e *fakeEngine) Warnings() []string { return nil }

func (e *fakeEngine) Close() error {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	if e.closed {
		return errors.New("closed twice")
	}
	e.closed = true
	e.st.closes++
	return nil
}

// otherProcess changes the workflow the way another session would.
func (st *fakeState) otherProcess(session, to string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.wf.Completed = append(st.wf.Completed, st.wf.Phase)
	st.wf.Phase = to
	st.wf.Revision++
	st.wf.Session = session
}

func (e *fakeEngine) LoadPhaseCheckpoint(string) (json.RawMessage, error) {
	return nil, errors.New("the fake keeps no phase checkpoints")
}

func (e *fakeEngine) PhaseCheckpoints() []string { return nil }

func (e *fakeEngine) CheckpointDeletedNote(string) string { return "" }
