package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// KeptTasksDir, in the state directory, holds the task events (TaskCreated, TaskCompleted) a
// hook could not record because another process held the workflow lock past its wait. No one
// can send a hook event again, so each is kept there, one file each named by when it came,
// until the next hook records it (engine.ApplyKeptClaudeTasks).
const KeptTasksDir = "kept-tasks"

var keptTasks = collection{"kept task event", KeptTasksDir, false}

// KeepTask keeps doc, a task event, as a new file of KeptTasksDir named by when it came (the
// wall clock, not the store's: the names are their order), durably and without a lock,
// through the checks every document passes.
func (s *Store) KeepTask(doc []byte) error {
	name := fmt.Sprintf("%019d-%d", time.Now().UnixNano(), os.Getpid())
	var err error
	// A directory found empty and removed by DropKeptTasksDir between the two steps of the
	// write (making it, writing in it) is made again.
	for range 3 {
		if err = s.put(keptTasks, name, doc, durable.WriteFile); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// HasKeptTasks says whether KeptTasksDir is there: one failed look when nothing is kept.
func (s *Store) HasKeptTasks() bool {
	_, err := s.fs.Lstat(KeptTasksDir)
	return err == nil
}

// KeptTasks lists the kept task events' names, oldest first, and removes a temp file a keep
// killed mid-write left once no writer can still be using it (StaleTempAge). With nothing
// kept it costs one failed directory read, and the list is nil (no KeptTasksDir to drop).
func (s *Store) KeptTasks() ([]string, error) { return s.names(keptTasks) }

// ReadKeptTask returns the kept task event name (one KeptTasks listed), strict JSON. One
// another hook recorded and dropped meanwhile is ErrNotFound; any other error leaves the file
// for the caller to move to quarantine (Quarantine).
func (s *Store) ReadKeptTask(name string) ([]byte, error) {
	data, err := durable.ReadFile(s.fs, keptTasks.file(name), strictjson.MaxSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &NotFoundError{What: keptTasks.what, Name: name}
	case err == nil:
		err = strictjson.Check(data)
	}
	return data, err
}

// KeptTaskFile is the kept task event name's file, relative to the state directory.
func KeptTaskFile(name string) string { return keptTasks.file(name) }

// DropKeptTask removes the kept task event name, once recorded. One already gone (another
// hook recorded it) is no error.
func (s *Store) DropKeptTask(name string) error {
	if err := s.fs.Remove(keptTasks.file(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.writeErr(keptTasks.file(name), err)
	}
	return nil
}

// DropKeptTasksDir removes KeptTasksDir if it is empty, so the next look costs one failed
// read; one a keep wrote into meanwhile stays.
func (s *Store) DropKeptTasksDir() { _ = s.fs.Remove(KeptTasksDir) }

// LockKeptTasks takes the lock a hook holds while it records the kept task events and drops
// them, so that hooks running at once record each once. It is tried once, never waited for:
// its holder records them all (engine.ApplyKeptClaudeTasks).
func (s *Store) LockKeptTasks() (func() error, error) { return s.lockWaiting(keptTasksLock, 0) }

const keptTasksLock = "kept-tasks"

// KeptTasksLocked reports whether err is LockKeptTasks finding the lock held: another hook
// records the kept events now.
func KeptTasksLocked(err error) bool {
	te, ok := errors.AsType[*durable.LockTimeoutError](err)
	return ok && filepath.Base(te.Path) == ".lock-"+keptTasksLock
}

// KeptTasksInTheWay reports whether err is something in KeptTasksDir's own place (InTheWay):
// no task event can be kept there.
func KeptTasksInTheWay(err error) bool { return filepath.Base(inTheWayPath(err)) == KeptTasksDir }
