// Package remote is the interface between Cairn and a shared store that several machines write:
// per workflow, an append-only line of opaque records numbered 1, 2, 3, ... without gaps.
//
// The one write is a conditional append: records go after an expected head, and nothing is
// written if another writer got there first; the error then carries the head the writer must
// catch up with. That compare-and-swap is all a backend has to offer, so git (a ref update
// conditional on its old value), PostgreSQL (a row insert under a unique key) and the
// in-memory reference (memremote) implement the same Backend, and remotetest checks each one.
//
// The package knows nothing of what a record holds: the local journal's format, replaying
// through the state machine and archiving conflicts are the caller's work.
package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// Record is one entry of a workflow's remote line. Rev is its position: the first record of a
// workflow is revision 1 and each later one is the previous plus one.
type Record struct {
	Rev  int64
	Data []byte
}

// Heads maps each workflow id the remote holds to its head revision (its last record's Rev).
// A workflow absent from the map has no records, which is the same as head 0.
type Heads map[string]int64

// Backend is a shared remote. Every method is safe for concurrent use by goroutines and by
// other processes and machines writing the same remote.
type Backend interface {
	// Append writes data's records after revision after (0 for a new workflow), so the n it
	// hands over become revisions after+1 ... after+n, and returns the new head. If the
	// remote's head is not after, Append writes nothing and returns a *ConflictError that
	// holds the current head. Either all the records are written or none is: an error of
	// data's writes nothing, and is returned.
	//
	// An error other than a conflict (the network dropped, a timeout) leaves the outcome
	// unknown: the records may have landed. Callers that retry read the line first.
	Append(ctx context.Context, workflow string, after int64, data Data) (head int64, err error)

	// Since returns the records of workflow after revision rev, oldest first (all of them
	// for rev 0); none when rev is the head or the workflow has no records.
	Since(ctx context.Context, workflow string, rev int64) ([]Record, error)

	// Heads lists every workflow's head in one round trip to the remote. Lines it cannot
	// read (not written by Cairn) are left out and named in an *UnreadableError, returned
	// with the heads of the others.
	Heads(ctx context.Context) (Heads, error)

	// Watch blocks until the remote's heads differ from known, then returns them; it
	// returns ctx's error when ctx ends first. Backends without notifications poll.
	Watch(ctx context.Context, known Heads) (Heads, error)
}

// Data is the records of an append, handed to yield one at a time, oldest first, as they are
// made, so that a long line (every record a full snapshot, hundreds of MB for a long workflow) is
// never held whole. An error from yield stops it and is returned, as is one of its own (a record
// could not be made). Append calls it at most once, and it must not call the Backend.
type Data func(yield func([]byte) error) error

// Slice is Data of records already held.
func Slice(data ...[]byte) Data {
	return func(yield func([]byte) error) error {
		for _, d := range data {
			if err := yield(d); err != nil {
				return err
			}
		}
		return nil
	}
}

// Reader is a Backend that hands a line's records over one at a time as it reads them (Since,
// record by record), so that a caller keeping only some of them never holds the whole line:
// every record carries a full snapshot, and a long workflow's line can be hundreds of MB.
type Reader interface {
	Each(ctx context.Context, workflow string, rev int64, fn func(Record) error) error
}

// Each calls fn with each record of workflow after rev, oldest first, one at a time when b is a
// Reader (else from Since); an error from fn stops the read and is returned.
func Each(ctx context.Context, b Backend, workflow string, rev int64, fn func(Record) error) error {
	if r, ok := b.(Reader); ok {
		return r.Each(ctx, workflow, rev, fn)
	}
	recs, err := b.Since(ctx, workflow, rev)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Records is Since for a Reader: its records, collected.
func Records(ctx context.Context, r Reader, workflow string, rev int64) ([]Record, error) {
	var recs []Record
	if err := r.Each(ctx, workflow, rev, func(rec Record) error { recs = append(recs, rec); return nil }); err != nil {
		return nil, err
	}
	return recs, nil
}

// Stepper is a Backend that names, for a person, the step that ends a line no sync can read
// because one of its records is not Cairn's: where to look at what it holds, and how clearing
// it loses no workflow. Backends that are not Steppers get UnreadableStep's words.
type Stepper interface {
	UnreadableStep(workflow string) string
}

// UnreadableStep is b's step for workflow's line, which holds a record Cairn did not write.
func UnreadableStep(b Backend, workflow string) string {
	if s, ok := b.(Stepper); ok {
		return s.UnreadableStep(workflow)
	}
	return fmt.Sprintf("see what the remote's line of %s holds and keep any work there; deleting that line then loses no workflow: every machine keeps its own copy of %s, and one where it is active pushes it again", workflow, workflow)
}

// IsName reports whether r has the shape of a git remote's name rather than an address or a
// path: names cannot hold ':' or '\' (addresses, ext::, Windows paths) nor start with '/' or
// '.' (paths). A name is what cairn remote enable stores (settings planted in a repository's
// state directory, or edited, could otherwise hold an address git would push every sync to),
// and what steps may name as it is: an address may hold a token.
func IsName(r string) bool {
	if r == "" || r[0] == '-' || r[0] == '.' || r[0] == '/' || strings.Contains(r, "..") {
		return false
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; c == ':' || c == '\\' || c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// NextSyncTries is the step of a sync that did not finish and loses nothing by that: true of
// cairn-mcp, which syncs again by itself; the CLI names the command a person runs instead.
const NextSyncTries = "the next sync tries again"

// ErrConflict is what a *ConflictError matches with errors.Is.
var ErrConflict = errors.New("remote head moved")

// ErrUnreadable matches (errors.Is) a backend's error for a line no sync can read as it is
// (commits Cairn did not write, a history rewritten by hand, a ref its repository cannot
// resolve): every sync fails the same way until someone acts on the remote.
var ErrUnreadable = errors.New("the remote's line cannot be read")

// Unreadable marks err, in its own words, as a line no sync can read (ErrUnreadable).
func Unreadable(err error) error { return unreadable{err} }

type unreadable struct{ error }

func (unreadable) Is(target error) bool { return target == ErrUnreadable }

// ConflictError reports an append refused because another writer moved the head first.
type ConflictError struct {
	Workflow string
	Expected int64 // the head the append was written after
	Current  int64 // the head the remote holds now
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("remote: workflow %s moved to revision %d while this machine wrote after %d: read the new records and replay on top of them",
		e.Workflow, e.Current, e.Expected)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// UnreadableError is Heads' error when some of the remote's lines could not be read: the heads
// returned with it are the others', so one foreign line does not hide the rest.
type UnreadableError struct {
	IDs []string // the lines left out, sorted
	Err error    // why the first of them could not be read
	// Lines says, for each of IDs that the backend could tell, why it was left out and the
	// step that ends it; an id not in it counts as NotCairns.
	Lines []LeftOut
}

// Reason says why Heads left a line out. The steps differ, and taking one reason's step for
// another's can delete the only shared copy of someone's work.
type Reason string

const (
	// NotCairns: the line's commits were not written by Cairn (pushed by hand, by another
	// tool, or moved).
	NotCairns Reason = "not-cairns"
	// CaseTwin: the id differs only in case from one synced instead (Twin), and this
	// machine's file system holds the two refs as one file.
	CaseTwin Reason = "case-twin"
	// Damaged: the line's ref points at an object the remote does not have.
	Damaged Reason = "damaged"
)

// LeftOut is one line Heads left out, and why.
type LeftOut struct {
	ID     string
	Reason Reason
	Twin   string `json:",omitempty"` // CaseTwin: the id synced instead, which must be left alone
	Ref    string `json:",omitempty"` // the line's name on the remote, when the backend has one
	// Step is the one thing that ends it, for a person: what to run and where, and why that
	// loses no work.
	Step string
}

// LeftOut is the reason and step for each of e.IDs, NotCairns with no step where the backend
// gave none.
func (e *UnreadableError) LeftOut() []LeftOut {
	out := make([]LeftOut, 0, len(e.IDs))
	for _, id := range e.IDs {
		l := LeftOut{ID: id, Reason: NotCairns}
		for _, g := range e.Lines {
			if g.ID == id {
				l = g
				break
			}
		}
		out = append(out, l)
	}
	return out
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("remote: %d line%s left out (%s): %v", len(e.IDs), workflow.Plural(len(e.IDs)), strings.Join(e.IDs, ", "), e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// ValidID checks a workflow id for the remote: the local store's rule (workflow.ValidID),
// plus no ".lock" ending, which git reserves in ref names.
func ValidID(id string) error {
	if err := workflow.ValidID(id); err != nil {
		return err
	}
	if strings.HasSuffix(id, ".lock") {
		return errors.New("workflow id ends in \".lock\", which git refuses in ref names: choose another id")
	}
	return nil
}

// MaxRecord bounds one record: Append refuses a larger one, and a backend reading one from the
// remote (put there by anyone who can push) reports it as an error without reading it whole.
// It is well above the largest entry Cairn writes (a workflow snapshot is at most 1 MiB, 6 MiB
// once encoding/json has escaped every '<' in it).
const MaxRecord = 16 << 20

// CheckAppend checks Append's arguments the same way for every backend: the id and head at
// once, and data's records as they come, in the Data it returns, which fails on a record over
// MaxRecord and when data held none.
func CheckAppend(id string, after int64, data Data) (Data, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, errors.New("remote: the expected head is negative")
	}
	return func(yield func([]byte) error) error {
		n := 0
		if data == nil {
			data = Slice()
		}
		if err := data(func(d []byte) error {
			if len(d) > MaxRecord {
				return fmt.Errorf("remote: a record of %d bytes is over the %d a remote line takes", len(d), MaxRecord)
			}
			n++
			return yield(d)
		}); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("remote: nothing to append")
		}
		return nil
	}, nil
}

// Equal reports whether two sets of heads are the same, counting a head of 0 as absent.
func (h Heads) Equal(o Heads) bool {
	for id, r := range h {
		if o[id] != r {
			return false
		}
	}
	for id, r := range o {
		if h[id] != r {
			return false
		}
	}
	return true
}

// DefaultPoll is how often Poll lists the heads when given no interval.
const DefaultPoll = 10 * time.Second

// Poll is Watch for backends without notifications: it lists the heads every interval, each
// wait drawn within ±10% of it so that machines polling one host drift apart rather than
// arriving in step. The band is narrow on purpose: a change waits at most 1.1 intervals (plus
// the listing) to be seen, which keeps the 99th percentile of propagation under 1.2 polls. A failed listing is retried at the next poll;
// the last error is returned if ctx ends.
func Poll(ctx context.Context, b Backend, known Heads, interval time.Duration) (Heads, error) {
	if interval <= 0 {
		interval = DefaultPoll
	}
	var last error
	for {
		h, err := b.Heads(ctx)
		if _, ok := errors.AsType[*UnreadableError](err); ok {
			err = nil // the readable lines' heads are what can change
		}
		if err == nil && !h.Equal(known) {
			return h, nil
		}
		if err != nil {
			last = err
		}
		wait := interval*9/10 + time.Duration(rand.Int64N(int64(interval/5)+1))
		if err := Sleep(ctx, wait); err != nil {
			if last != nil {
				return nil, fmt.Errorf("%w (last poll: %v)", err, last)
			}
			return nil, err
		}
	}
}

// Sleep waits d, or until ctx ends and then returns ctx's error: the pause between a
// backend's retries and polls.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
