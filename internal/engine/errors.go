package engine

import (
	"errors"
	"io/fs"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
)

// Class is what kind of failure an error from the engine is. Adapters map it to an exit code
// or a tool error without knowing which layer below raised it.
type Class int

const (
	// Refused: the engine understood the request and said no (an invalid move, a conflict,
	// no active workflow, bad or secret-bearing data). The usual class.
	Refused Class = iota
	// NotFound: the workflow, checkpoint, document or variable asked for does not exist.
	NotFound
	// StateUnusable: the state cannot be used at all (unwritable, locked by another process,
	// written by a newer Cairn, a symlinked state directory, no permission).
	StateUnusable
)

// ErrNotFound matches every NotFound error (errors.Is).
var ErrNotFound = store.ErrNotFound

// WorkflowFile is the active workflow's snapshot, relative to the state directory, for
// watchers.
const WorkflowFile = store.WorkflowFile

// Classify says which Class err belongs to; a nil err is Refused's zero value and should not
// be asked about.
func Classify(err error) Class {
	_, we := errors.AsType[*store.WriteError](err)
	_, lt := errors.AsType[*durable.LockTimeoutError](err)
	_, nwr := errors.AsType[*migrate.NewerError](err)
	switch {
	case we, lt, nwr, errors.Is(err, durable.ErrSymlinkDir), errors.Is(err, fs.ErrPermission):
		return StateUnusable
	case errors.Is(err, store.ErrNotFound):
		return NotFound
	}
	return Refused
}
