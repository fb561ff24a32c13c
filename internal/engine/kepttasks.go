package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// KeptTasksDir, in the state directory, holds the task events (TaskCreated, TaskCompleted) a
// hook could not record because another process held the workflow lock past its wait. No one
// can send a hook event again, so each is kept there, one file each named by when it came,
// until ApplyKeptClaudeTasks records it.
const KeptTasksDir = "kept-tasks"

// keptTask is one kept task event, as its file holds it.
type keptTask struct {
	SessionID string `json:"session_id"`
	TaskID    string `json:"task_id"`
	Subject   string `json:"subject"`
	Completed bool   `json:"completed"`
}

// KeepClaudeTask keeps a task event that could not be recorded now, durably and without a
// lock (see KeptTasksDir), for ApplyKeptClaudeTasks. Only what the record would take is kept
// (workflow.KeptClaudeTask): an event it would refuse for a secret is refused now.
func (e *Engine) KeepClaudeTask(t ClaudeTask, completed bool) error {
	k, err := workflow.KeptClaudeTask(t, completed)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(keptTask{SessionID: k.SessionID, TaskID: k.TaskID, Subject: k.Subject, Completed: completed})
	if err != nil {
		return err
	}
	dir := filepath.Join(e.StateDir(), KeptTasksDir)
	name := filepath.Join(dir, fmt.Sprintf("%019d-%d.json", time.Now().UnixNano(), os.Getpid()))
	// A directory found empty and removed by ApplyKeptClaudeTasks between the two steps is
	// made again.
	for range 3 {
		if err = durable.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err = durable.WriteFileAtomic(name, doc, 0o600); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// HasKeptClaudeTasks says whether task events may be kept (see KeptTasksDir): its directory
// is there. One failed look when none is.
func (e *Engine) HasKeptClaudeTasks() bool {
	_, err := os.Lstat(filepath.Join(e.StateDir(), KeptTasksDir))
	return err == nil
}

// ApplyKeptClaudeTasks records the task events KeepClaudeTask kept, oldest first, and drops
// each once recorded (a crash before the drop records it again, which changes nothing); report
// gets each outcome, as RecordClaudeTask's. One the record refuses (no active workflow, ...) is
// dropped too, as it would have been when it came; a file that cannot be read is moved to
// quarantine/ (Store.Quarantine), said in the returned notes. It stops at the first the lock
// still keeps out, which stays kept with those after it, and returns that error. When none is
// kept it costs one directory read that finds nothing.
//
// wait false is for a caller whose own work needs the lock wait it has (a session start, the
// end of a turn): the kept events are recorded only if the lock is free now, so a held lock
// does not cost it a second wait.
func (e *Engine) ApplyKeptClaudeTasks(wait bool, report func(t ClaudeTask, completed bool, res *Result, err error)) (notes []string, err error) {
	dir := filepath.Join(e.StateDir(), KeptTasksDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !wait {
		cfg := e.cfg
		cfg.LockWait = time.Millisecond
		now, err := Open(cfg)
		if err != nil {
			return nil, err
		}
		defer now.Close()
		e = now
	}
	for _, ent := range ents {
		name := ent.Name()
		if strings.HasPrefix(name, ".tmp-") {
			// A keep killed mid-write left it, once no writer can still be using it: removed,
			// so the directory can go and the next look costs one failed read again.
			if fi, err := ent.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > store.StaleTempAge {
				_ = os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !ent.Type().IsRegular() {
			continue // not ours
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		var k keptTask
		if err == nil {
			if err = strictjson.Check(data); err == nil {
				err = json.Unmarshal(data, &k)
			}
		}
		if err != nil {
			// Kept, never deleted: moved aside as the store moves any damaged file.
			n, qerr := e.st.Quarantine(KeptTasksDir+"/"+name, fmt.Errorf("kept task event could not be read: %w", err))
			if qerr != nil {
				return notes, qerr
			}
			notes = append(notes, n.Message)
			continue
		}
		t := ClaudeTask{SessionID: k.SessionID, TaskID: k.TaskID, Subject: k.Subject}
		res, err := e.RecordClaudeTask(t, k.Completed)
		if isLockTimeout(err) {
			return notes, err
		}
		report(t, k.Completed, res, err)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return notes, err
		}
	}
	_ = os.Remove(dir) // empty now, so the next look costs one failed read; kept if one came meanwhile
	return notes, nil
}

// LockedBy says who holds the lock err gave up on ("by pid N (COMMAND) since TIME"), or ""
// when err is not a lock wait given up.
func LockedBy(err error) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		return te.Who()
	}
	return ""
}
