package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/cairn-dev/cairn"
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
	// written by a newer Cairn, a symlinked state directory, no permission, a FIFO, link or
	// directory in a state file's place).
	StateUnusable
)

// ProjectGoneError is Open's refusal to make again a project directory that is not there
// (deleted or moved while its session is open): its state would start over, empty, in a
// directory made for it alone.
type ProjectGoneError struct{ Root string }

func (e *ProjectGoneError) Error() string {
	return fmt.Sprintf("the project directory %s is not there (deleted or moved); Cairn does not make it again", e.Root)
}

// ProjectGoneStep is a person's step past a ProjectGoneError.
const ProjectGoneStep = "set CLAUDE_PROJECT_DIR to the project where it is now, or unset it and run cairn there"

// projectGone reports whether the project root is not there.
func projectGone(root string) bool {
	_, err := os.Lstat(root)
	return errors.Is(err, fs.ErrNotExist)
}

// ErrNotFound matches every NotFound error (errors.Is).
var ErrNotFound = store.ErrNotFound

// NotFoundMsg is a NotFound error in msg's words alone: errors.Is finds ErrNotFound in it, and
// its text does not repeat "(not found)" after a message that says so.
func NotFoundMsg(msg string) error { return &notFoundError{msg} }

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

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
	case we, lt, nwr, errors.Is(err, durable.ErrSymlinkDir), errors.Is(err, fs.ErrPermission),
		// A FIFO, link or directory in a state file's place: not "missing", which a script
		// would answer by writing a fresh file.
		errors.Is(err, durable.ErrNotRegular), errors.Is(err, durable.ErrHardLinked),
		fileSystemFailed(err):
		return StateUnusable
	case errors.Is(err, store.ErrNotFound):
		return NotFound
	}
	return Refused
}

// fileSystemFailed reports whether err is the file system's failure on a file (a read's EIO,
// too many open files): the state could not be used, nothing about the request was refused. A
// file that is not there is NotFound's, or the caller's to say.
func fileSystemFailed(err error) bool {
	var errno syscall.Errno
	pe, pok := errors.AsType[*fs.PathError](err)
	le, lok := errors.AsType[*os.LinkError](err)
	switch {
	case pok:
		err = pe.Err
	case lok:
		err = le.Err
	default:
		return false
	}
	return errors.As(err, &errno) && !errors.Is(errno, fs.ErrNotExist)
}

// NewerStateError is state written by a newer Cairn: what to install to resume it. It is
// never to be read as no workflow, nor answered by starting a new one over it.
type NewerStateError struct{ Err *migrate.NewerError }

func (e *NewerStateError) Error() string {
	return fmt.Sprintf("the workflow state was written by a newer Cairn (record version %s; this is Cairn %s, which reads schema 2.x) and is left untouched: install a Cairn newer than %s, one that reads version %s, to resume it; do not start a new workflow over it",
		e.Err.Version, cairn.Version(), cairn.Version(), e.Err.Version)
}

func (e *NewerStateError) Unwrap() error { return e.Err }

// Next is the next step for the model, in Cairn's words only: the stored version, which may
// carry any text after its number, stays in the warning, inside the report's fence.
func (e *NewerStateError) Next() string {
	return fmt.Sprintf("The workflow state was written by a newer Cairn: install a Cairn newer than %s, one that reads the record version the warning names, to resume it; do not start a new workflow over it.", cairn.Version())
}

// IsNewerState reports whether err is state written by a newer Cairn.
func IsNewerState(err error) bool { return newerState(err) != nil }

// newerState returns err as a *NewerStateError when it is state from a newer Cairn, else nil.
func newerState(err error) *NewerStateError {
	if n, ok := errors.AsType[*migrate.NewerError](err); ok {
		return &NewerStateError{Err: n}
	}
	return nil
}

// stateErr is err, the store's error reading the active workflow, as the engine gives it:
// state from a newer Cairn as a *NewerStateError, which says it is left untouched and what to
// install; the store's own words say neither.
func stateErr(err error) error {
	if n := newerState(err); n != nil {
		return n
	}
	if re, ok := errors.AsType[*store.RecordError](err); ok && !errors.As(err, new(*recordError)) {
		return &recordError{err: re} // a change read it: the one step with it
	}
	return err
}

// IsForeignSnapshot reports whether err is the store's refusal of a snapshot that holds no
// workflow record and has a version above the ones this Cairn reads: another tool's file, or a
// newer Cairn's that moved its fields. It is left in place, not damage to repair: its one step
// is to move it out of the state directory.
func IsForeignSnapshot(err error) bool {
	fe, ok := errors.AsType[*migrate.ForeignError](err)
	return ok && fe.Newer
}

// UnusableState is the text of state that could not be opened, with one step: its own when
// it says one (store.SaysStep), else cairn doctor, which checks each cause. The CLI and the
// hooks say it alike.
func UnusableState(err error) string {
	if store.SaysStep(err) {
		return err.Error()
	}
	return err.Error() + "; cairn doctor says what to fix"
}
