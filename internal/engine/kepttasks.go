package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// KeptTasksDir, in the state directory, holds the task events a hook could not record
// (store.KeptTasksDir).
const KeptTasksDir = store.KeptTasksDir

// keptTask is one kept task event, as its file holds it.
type keptTask struct {
	SessionID string `json:"session_id"`
	TaskID    string `json:"task_id"`
	Subject   string `json:"subject"`
	// Withheld is the refusal of a subject not kept for its secret's shape (a completion's):
	// the task is closed by its id alone (workflow.KeptClaudeTask).
	Withheld  string `json:"withheld,omitempty"`
	Completed bool   `json:"completed"`
	// PID is the Claude Code client whose hook kept it (Config.PID), so that it is recorded
	// as that client's. Files kept before it was written have none: their events are recorded
	// as the applying client's when they are its session's.
	PID int `json:"pid,omitempty"`
	// WorkflowID is the workflow active when it was kept, which alone records it; absent
	// where it could not be read, and in files kept before it was written.
	WorkflowID string `json:"workflow_id,omitempty"`
}

// KeepClaudeTask keeps a task event that could not be recorded now, durably and without a
// lock (see KeptTasksDir), for ApplyKeptClaudeTasks. Only what the record would take is kept
// (workflow.KeptClaudeTask): an event it would refuse for a secret is refused now.
func (e *Engine) KeepClaudeTask(t ClaudeTask, completed bool) error {
	k, err := workflow.KeptClaudeTask(t, completed)
	if err != nil {
		return err
	}
	kt := keptTask{SessionID: k.SessionID, TaskID: k.TaskID, Subject: k.Subject, Withheld: k.Withheld, Completed: completed, PID: e.cfg.PID}
	if w, err := e.st.ReadWorkflow(); err == nil { // without the lock when all is well
		kt.WorkflowID = w.ID
	}
	doc, err := json.Marshal(kt)
	if err != nil {
		return err
	}
	return e.st.KeepTask(doc)
}

// HasKeptClaudeTasks says whether task events may be kept (see KeptTasksDir): its directory
// is there. One failed look when none is.
func (e *Engine) HasKeptClaudeTasks() bool { return e.st.HasKeptTasks() }

// ApplyKeptClaudeTasks records the task events KeepClaudeTask kept, oldest first, and drops
// each once recorded (a crash before the drop records it again, which changes nothing); report
// gets each outcome, as RecordClaudeTask's. One the record refuses (no active workflow, ...) is
// dropped too, as it would have been when it came; a file that cannot be read (damaged, or
// not a file; one the disk failed to read stays, as below) is moved to quarantine/
// (Store.Quarantine), said in the returned notes (one that cannot be moved there stays, said
// too, and blocks none after it). One kept under another workflow than the active
// one (replaced since) is not recorded, and said so. Each is recorded as the session
// and client that kept it, whichever hook applies it: who owns the workflow, and whether a
// task list beside its live owner is mirrored, are theirs. It stops at the first the lock
// still keeps out, that waits for a repair (store.ErrRepairLeft), or that the state cannot
// take (Classify says StateUnusable: a full disk, a read-only directory), which stays kept
// with those after it, and returns that error. When none is kept it costs one directory read
// that finds nothing.
//
// The kept events' lock is held around them all and never waited for: a hook that finds it
// held gets ErrKeptBusy at once, as the holder records them, those kept while it holds them
// too (it looks again once it lets go); held by a stopped process, the lock's error.
//
// wait bounds each wait for the workflow lock. 0 is for a caller whose own work needs the
// lock wait it has (a session start, the end of a turn): the kept events are recorded only if
// the lock is free now, so a held lock does not cost it a second wait, and only if the state
// needs no repair, which the caller's own read then makes and says (a repair made here would
// be said only on stderr).
//
// until, when not zero, is when such a caller's share of its time ends: those not recorded by
// then stay kept for the next hook (ErrKeptLeft), so that many of them on a slow disk do not
// take the time of its own work (the anchor, the report) past its deadline.
func (e *Engine) ApplyKeptClaudeTasks(wait time.Duration, until time.Time, report func(t ClaudeTask, completed bool, res *Result, err error)) (notes []string, err error) {
	names, err := e.st.KeptTasks()
	if err != nil || len(names) == 0 {
		if err == nil && names != nil {
			e.st.DropKeptTasksDir() // there, empty: a stale temp file may have been all it held
		}
		return nil, err
	}
	st := e.st // a kept event that cannot be read is set aside by the caller's own store
	if cfg := e.cfg; wait <= 0 || wait != cfg.LockWait {
		cfg.LockWait = wait
		if wait <= 0 {
			cfg.LockWait = time.Millisecond
			// A repair the state needs is left to the caller's own read, which says it.
			cfg.NoRepair = true
		}
		now, err := Open(cfg)
		if err != nil {
			return nil, err
		}
		defer now.Close()
		e = now
	}
	as := map[workflow.Actor]*Engine{{SessionID: e.cfg.SessionID, PID: e.cfg.PID}: e}
	defer func() {
		for _, o := range as {
			if o != e {
				o.Close()
			}
		}
	}()
	seen := map[string]bool{}
	for {
		unlock, err := e.st.LockKeptTasks()
		switch {
		case store.KeptTasksLocked(err):
			if te, _ := errors.AsType[*durable.LockTimeoutError](err); te.Stopped {
				return notes, err // a stopped holder records none until it is resumed: said
			}
			if len(seen) > 0 {
				return notes, nil // those kept since are the holder's, which looks again too
			}
			return notes, ErrKeptBusy
		case err != nil:
			return notes, err
		}
		err = e.applyKeptTasks(as, st, names, seen, until, &notes, report)
		if err == nil {
			e.st.DropKeptTasksDir() // empty now, so the next look costs one failed read; kept if one came meanwhile
		}
		unlock()
		if err != nil {
			return notes, err
		}
		// One kept while the lock was held, by a hook that then found it held, is this
		// hook's: that one said so.
		if names, err = e.st.KeptTasks(); err != nil || !slices.ContainsFunc(names, func(n string) bool { return !seen[n] }) {
			return notes, err
		}
	}
}

// ErrKeptBusy is ApplyKeptClaudeTasks' answer when another hook holds the kept events' lock:
// it records them now, and those kept while it does.
var ErrKeptBusy = errors.New("another Cairn hook records the kept task events now")

// applyKeptTasks records the kept task events names not seen yet, under the kept events' lock
// (ApplyKeptClaudeTasks), adding each to seen.
func (e *Engine) applyKeptTasks(as map[workflow.Actor]*Engine, st *store.Store, names []string, seen map[string]bool, until time.Time, notes *[]string, report func(t ClaudeTask, completed bool, res *Result, err error)) error {
	left := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return seen[n] })
	for i, name := range left {
		if !until.IsZero() && time.Now().After(until) {
			return fmt.Errorf("%w; %d stay kept for the next Cairn hook", ErrKeptLeft, len(left)-i)
		}
		if err := e.applyKeptTask(as, st, name, notes, report); err != nil {
			return err
		}
		seen[name] = true
	}
	return nil
}

// applyKeptTask records the kept task event name and drops it, under the kept events' lock
// (ApplyKeptClaudeTasks): without it, hooks running at once each applied the same events, and
// said "already recorded; nothing changed" for each one another had applied. Notes of an event
// that cannot be read are added to notes.
func (e *Engine) applyKeptTask(as map[workflow.Actor]*Engine, st *store.Store, name string, notes *[]string, report func(t ClaudeTask, completed bool, res *Result, err error)) error {
	data, err := e.st.ReadKeptTask(name)
	if errors.Is(err, store.ErrNotFound) {
		return nil // gone meanwhile (removed by hand)
	}
	if fileSystemFailed(err) {
		// Not damage: the disk failed the read. Moved to quarantine/, it would be lost.
		return fmt.Errorf("a kept task event could not be read and stays kept for the next Cairn hook: %w", err)
	}
	var k keptTask
	if err == nil {
		err = json.Unmarshal(data, &k)
	}
	if err != nil {
		// Kept, never deleted: moved aside as the store moves any damaged file.
		n, qerr := st.Quarantine(store.KeptTaskFile(name), fmt.Errorf("kept task event could not be read: %w", err))
		if qerr != nil {
			// Left where it is, and said: the events kept after it are recorded all the same.
			*notes = append(*notes, fmt.Sprintf("kept task event %s could not be read (%v) and stays where it is: %v", store.KeptTaskFile(name), err, qerr))
			return nil
		}
		*notes = append(*notes, n.Message)
		return nil
	}
	t := ClaudeTask{SessionID: k.SessionID, TaskID: k.TaskID, Subject: k.Subject, Withheld: k.Withheld}
	by, err := e.keptBy(as, k)
	if err != nil {
		return err
	}
	res, err := by.recordClaudeTask(t, k.Completed, k.WorkflowID)
	if isLockTimeout(err) || errors.Is(err, store.ErrRepairLeft) {
		return err
	}
	if err != nil && Classify(err) == StateUnusable {
		// Not a refusal: the state cannot be written now. Dropped, it would be lost.
		return fmt.Errorf("a kept task event was not recorded and stays kept for the next Cairn hook: %w", err)
	}
	report(t, k.Completed, res, err)
	if err := e.st.DropKeptTask(name); err != nil {
		return err
	}
	return nil
}

// ErrKeptLeft is ApplyKeptClaudeTasks' answer when its caller's share of time ran out before
// every kept task event was recorded.
var ErrKeptLeft = errors.New("the time this hook gives them ran out")

// keptBy is the engine that records k: as its session and client (one without a client, kept
// by an older Cairn, is the applying client's when it is its session), from as, where it is
// kept for the next of theirs.
func (e *Engine) keptBy(as map[workflow.Actor]*Engine, k keptTask) (*Engine, error) {
	who := workflow.Actor{SessionID: k.SessionID, PID: k.PID}
	if k.PID == 0 && k.SessionID == e.cfg.SessionID {
		who.PID = e.cfg.PID
	}
	if by, ok := as[who]; ok {
		return by, nil
	}
	cfg := e.cfg
	if who.PID != cfg.PID {
		cfg.ClientStart = 0 // another client's, asked of the platform
	}
	cfg.SessionID, cfg.PID = who.SessionID, who.PID
	by, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	as[who] = by
	return by, nil
}

// LockedBy says who holds the lock err gave up on ("by pid N (COMMAND) since TIME"), or ""
// when err is not a lock wait given up.
func LockedBy(err error) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		return te.Who()
	}
	return ""
}
