package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Notice tells the caller about something the store did on its own while reading or
// updating the workflow: moved a damaged snapshot aside, rebuilt it, migrated an old format.
type Notice struct {
	// Kind is "quarantined", "rebuilt", "rolled-forward", "migrated", "snapshot-stale",
	// "legacy-skipped", "legacy-pending", "archive-pending" or "archive-left".
	Kind string
	// Path is the file concerned, relative to the state directory (for a legacy file
	// migrated from the project, relative to the project root).
	Path string
	// Revision is the workflow revision the notice is about, when there is one.
	Revision int64
	// Message says it in a sentence for a person.
	Message string
	// Lost: revisions after Revision could not be rebuilt (a damaged journal line breaks the
	// chain of changes); the workflow goes on from Revision.
	Lost bool
}

func (n Notice) String() string { return n.Message }

// Workflow is the active workflow's snapshot as read.
type Workflow struct {
	Data     []byte // the record, as stored
	ID       string
	Revision int64
	Notices  []Notice
	// JournalRead: ReadWorkflow read the workflow's journal, or found none, without a refusal,
	// so JournalInTheWay would find nothing in its place just now.
	JournalRead bool
}

// Result is what UpdateWorkflow did.
type Result struct {
	Workflow
	Changed bool  // false when the callback returned nil next
	Seq     int64 // the journal sequence number written
}

var (
	// ErrWorkflowMismatch: the update names a different workflow than the active one.
	ErrWorkflowMismatch = errors.New("a different workflow is active")
	// ErrRevision: the update's revision is not the active one's plus one.
	ErrRevision = errors.New("revision must be the previous revision plus one")
)

// meta is the little the store reads from a workflow record.
type meta struct {
	version string
	id      string
	rev     int64
}

// current reports whether m is a schema-2.x record's, with a valid id and a revision.
func (m meta) current() bool {
	return strings.HasPrefix(m.version, "2.") && nameShape(m.id, true) == nil && m.rev >= 1
}

// errNeedsMigration marks a record in an older format.
type errNeedsMigration struct{ format migrate.Format }

func (e errNeedsMigration) Error() string { return "older format " + e.format.String() }

// readMeta checks a workflow record and reads version, workflow_id and revision. An older
// format comes back as errNeedsMigration, a newer one as *migrate.NewerError.
func readMeta(doc []byte) (meta, error) {
	m, err := strictjson.Members(doc, "version", "workflow_id", "revision")
	if err != nil {
		return meta{}, err
	}
	var out meta
	vok := metaValue(m[0], &out.version)
	iok := metaValue(m[1], &out.id)
	rok := metaValue(m[2], &out.rev)
	if vok && iok && rok && out.current() {
		return out, nil
	}
	// Not a current record: an older format to migrate, a newer one to refuse, or damage.
	f, err := migrate.Detect(doc)
	switch {
	case err != nil:
		return meta{}, err
	case f.NeedsMigration():
		return meta{}, errNeedsMigration{f}
	case !iok || ValidWorkflowID(out.id) != nil:
		return meta{}, errors.New(`"workflow_id" is missing or not a valid id`)
	default:
		return meta{}, errors.New(`"revision" is missing or not a whole number of at least 1`)
	}
}

// metaValue reads raw, a member's value or nil when it is absent, into *p, and reports false
// when it is absent or of the wrong type. null leaves *p as it is.
func metaValue[T any](raw json.RawMessage, p *T) bool {
	return raw != nil && json.Unmarshal(raw, p) == nil
}

// ReadWorkflow returns the active workflow without taking a lock when all is well: the
// snapshot, or the journal's newer record when an update committed to the journal but its
// snapshot was not yet replaced. When the snapshot is damaged (not JSON, truncated, not a
// record), it is moved to quarantine/ (never deleted) and rebuilt from the newest valid journal
// record, under the lock; an older format is migrated; each such step is reported in Notices.
// With no workflow it returns a *NotFoundError, possibly with Notices. A record written by a
// newer Cairn is refused with a *migrate.NewerError and left as it is. Opened WithNoRepair,
// it answers ErrRepairLeft where it would take the lock to repair or settle.
func (s *Store) ReadWorkflow() (Workflow, error) {
	data, err := durable.ReadFile(s.fs, WorkflowFile, strictjson.MaxSize)
	if err == nil {
		m, merr := readMeta(data)
		if merr == nil {
			w := Workflow{Data: data, ID: m.id, Revision: m.rev}
			tail, terr := s.journalTailRevision(journalFile(m.id), m.rev)
			w.JournalRead = terr == nil
			if tail != nil && tail.Revision > m.rev && tail.Snapshot != nil && terr == nil {
				tm, err := readMeta(tail.Snapshot)
				if errors.Is(err, migrate.ErrNewer) {
					// A newer Cairn's change, its snapshot replace cut short: the older state
					// is not the one to resume.
					return Workflow{}, err
				}
				if err == nil && tm.id == m.id {
					w = Workflow{Data: tail.Snapshot, ID: m.id, Revision: tail.Revision, JournalRead: true}
				}
			}
			// A journal ahead of the snapshot whose chain a damaged line breaks gives no newest
			// state: the locked read says which revisions are lost (pastBrokenChain).
			broken, pending := errors.Is(terr, errChain), s.exists(pendingArchive)
			if !broken && !pending {
				return w, nil
			}
			if s.o.noRepair {
				if !pending && s.o.inMemory {
					return w, nil // the status line shows the state the workflow goes on from
				}
				// The snapshot is not the newest state, nor is the break said: the read is
				// left to one that says it (pastBrokenChain), as its change's locked read is.
				return Workflow{}, ErrRepairLeft
			}
			// An archive or an adoption (adopt.go) is in progress or was cut short, or the
			// journal's chain is broken: the locked read waits for it or settles it, or says
			// what is lost. Without the lock, what was read stands.
			if unlock, err := s.lock("workflow"); err == nil {
				defer unlock()
				lw, _, err := s.loadLocked()
				if pe, ok := errors.AsType[*pendingError](err); ok {
					// The marker cannot be read (an I/O error): what was read stands, as
					// without the lock, and the archive waits for a later operation.
					w.Notices = append(w.Notices, Notice{Kind: "archive-pending", Path: pendingArchive,
						Message: fmt.Sprintf("%s, an archive in progress, could not be read because of an I/O error (%v); the workflow is shown as it stands, and the next command that changes it finishes that archive once the file reads; check the disk", pendingArchive, errors.Unwrap(pe.err))})
					return w, nil
				}
				return lw, err
			}
			return w, nil
		}
		if errors.Is(merr, migrate.ErrNewer) {
			return Workflow{}, merr
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		if !s.anythingToRecover() {
			return Workflow{}, &NotFoundError{What: "workflow"}
		}
	} else if !errors.Is(err, durable.ErrTooLarge) {
		// A planted FIFO, symlink or hard link, or an unreadable file: say so, move nothing.
		return Workflow{}, s.unreadableSnapshot(err)
	}
	if s.o.noRepair {
		if s.o.inMemory {
			return s.rebuildInMemory(ErrRepairLeft)
		}
		return Workflow{}, ErrRepairLeft
	}
	unlock, err := s.lock("workflow")
	if err != nil {
		var we *WriteError
		if errors.As(err, &we) || errors.As(err, new(*durable.LockTimeoutError)) {
			return s.rebuildInMemory(err)
		}
		return Workflow{}, err
	}
	defer unlock()
	w, _, err := s.loadLocked()
	return w, err
}

// rebuildInMemory answers a read when the snapshot needs repair but the state directory
// cannot be written, or its lock is held past the wait (none with WithLockWait(0)): the
// newest journal record is returned and nothing is changed.
func (s *Store) rebuildInMemory(lockErr error) (Workflow, error) {
	why := "the state directory cannot be written"
	te, busy := errors.AsType[*durable.LockTimeoutError](lockErr)
	if busy {
		why = "the workflow lock is held " + te.Who()
		if r := te.Resume(); r != "" {
			why += "; " + r
		}
	} else if errors.Is(lockErr, ErrRepairLeft) {
		why = "this reader leaves repairs to the next"
	}
	if s.exists(pendingArchive) {
		// An archive was cut short: its journal may belong to an archived workflow.
		return Workflow{}, lockErr
	}
	rec, _, file, err := s.newestJournalRecord()
	if err != nil {
		return Workflow{}, s.unreadable(err) // as a locked read finds
	}
	if rec == nil {
		if busy {
			return Workflow{}, lockErr // an older file's migration is left to the lock's holder
		}
		if w, ok, err := s.olderInMemory(lockErr); ok {
			return w, err
		}
		if d := s.damaged(); d != nil {
			return Workflow{}, d // on record but unreadable, as a locked read finds
		}
		return Workflow{}, lockErr
	}
	m, err := readMeta(rec.Snapshot)
	if errors.Is(err, migrate.ErrNewer) {
		return Workflow{}, err // to be resumed by a newer Cairn, not taken for unreadable
	}
	if err != nil {
		return Workflow{}, lockErr
	}
	return Workflow{Data: rec.Snapshot, ID: m.id, Revision: rec.Revision, Notices: []Notice{{
		Kind: "rebuilt", Path: WorkflowFile, Revision: rec.Revision,
		Message: fmt.Sprintf("the workflow snapshot is missing or damaged and was read from its journal at revision %d%s; it was not repaired because %s", rec.Revision, sealedOnly(file, rec.Revision), why),
	}}}, nil
}

// anythingToRecover is the cheap check, without the lock, for a journal to rebuild from or a
// legacy file to migrate when there is no snapshot.
func (s *Store) anythingToRecover() bool {
	if s.exists(pendingArchive) {
		return true
	}
	names, err := s.fs.ReadDirNames(journalDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true // journal/ is there but cannot be listed: the locked read says why
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, sealedSuffix) }) {
		return true
	}
	_, _, ok := s.findLegacy()
	return ok
}

// tailState is where the active workflow's journal stands: its last line's sequence number
// and revision, and what a delta appended after it needs (see Record).
type tailState struct {
	seq   int64
	rev   int64
	base  int64
	chain int64
	state string
}

func tailOf(r *Record) tailState {
	if r == nil {
		return tailState{}
	}
	t := tailState{seq: r.Seq, rev: r.Revision, base: r.Seq, state: r.State}
	if r.Delta != nil {
		t.base, t.chain = r.Base, r.Chain
	}
	return t
}

// loadLocked reads the active workflow under the workflow lock, repairing what it can.
func (s *Store) loadLocked() (Workflow, tailState, error) {
	var w Workflow
	if s.o.noRepair && s.exists(pendingArchive) {
		return w, tailState{}, ErrRepairLeft
	}
	if n, err := s.finishArchive(); err != nil {
		return w, tailState{}, err
	} else if n != nil {
		w.Notices = append(w.Notices, *n)
	}
	data, err := durable.ReadFile(s.fs, WorkflowFile, strictjson.MaxSize)
	switch {
	case err == nil:
		var m meta
		m, err = readMeta(data)
		var old errNeedsMigration
		switch {
		case err == nil:
			w.Data, w.ID, w.Revision = data, m.id, m.rev
		case errors.Is(err, migrate.ErrNewer):
			return w, tailState{}, err
		case maybeNewer(err):
			return w, tailState{}, s.foreignSnapshot(err)
		case errors.As(err, &old) && s.o.noRepair:
			return w, tailState{}, ErrRepairLeft
		case errors.As(err, &old):
			return s.migrateOwn(w, data)
		}
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case !errors.Is(err, durable.ErrTooLarge):
		return w, tailState{}, s.unreadableSnapshot(err)
	}
	if err != nil {
		// Damaged or too large: kept in quarantine, and rebuilt below.
		n, qerr := s.Quarantine(WorkflowFile, err)
		if qerr != nil {
			return w, tailState{}, qerr
		}
		w.Notices = append(w.Notices, n)
	}
	if w.Data == nil {
		// Rebuild from the newest journal, if any.
		rec, raw, file, err := s.newestJournalRecord()
		if err != nil {
			return w, tailState{}, s.unreadable(err)
		}
		if rec == nil {
			if legacyDir, name, ok := s.findLegacy(); ok && len(w.Notices) == 0 {
				if s.o.noRepair {
					return w, tailState{}, ErrRepairLeft
				}
				if s.o.noCreate {
					return s.legacyPending(w, legacyDir, name)
				}
				return s.migrateLegacy(w, legacyDir, name)
			}
			if d := s.damaged(); d != nil {
				return w, tailState{}, d
			}
			return w, tailState{}, &NotFoundError{What: "workflow"}
		}
		rm, err := readMeta(rec.Snapshot)
		if err != nil {
			return w, tailState{}, fmt.Errorf("the newest journal record is not a usable workflow record: %w", err)
		}
		if s.o.noRepair {
			return w, tailState{}, ErrRepairLeft
		}
		if err := s.writeErr(WorkflowFile, durable.WriteFile(s.fs, WorkflowFile, rec.Snapshot, 0o600)); err != nil {
			return w, tailState{}, err
		}
		w.Data, w.ID, w.Revision = rec.Snapshot, rm.id, rec.Revision
		msg := fmt.Sprintf("the workflow snapshot was rebuilt from its journal at revision %d", rec.Revision) + sealedOnly(file, rec.Revision)
		if raw.Revision > rec.Revision {
			msg += fmt.Sprintf("; the journal holds revisions up to %d, but a damaged line breaks its chain of changes and those after revision %d cannot be rebuilt (the journal keeps every line)", raw.Revision, rec.Revision)
		}
		w.Notices = append(w.Notices, Notice{Kind: "rebuilt", Path: WorkflowFile, Revision: rec.Revision, Message: msg, Lost: raw.Revision > rec.Revision})
		return w, tailOf(raw), nil
	}
	tail, err := s.journalTail(journalFile(w.ID))
	if err != nil {
		return w, tailState{}, s.readErr("the journal of "+w.ID, journalFile(w.ID), err)
	}
	if tail == nil {
		if err := s.reclaimJournal(w); err != nil {
			return w, tailState{}, err
		}
		if tail, err = s.journalTail(journalFile(w.ID)); err != nil {
			return w, tailState{}, err
		}
		if tail == nil {
			// The active journal is gone or holds no readable line: the next line is a full
			// one numbered after the sealed segments, which readers and the next compaction
			// would otherwise keep in its place.
			ts, err := s.sealedTail(journalFile(w.ID))
			return w, ts, err
		}
	}
	if tail.Revision > w.Revision {
		return s.rollForward(w, tail)
	}
	return w, tailOf(tail), nil
}

// chainWhole reports whether every line of the chain of deltas ending at line seq, from its
// full line base, reads back from file: one the checksum refuses breaks it. It reads no
// further back than the chain's full line.
func (s *Store) chainWhole(file string, base, seq int64) bool {
	recs, err := s.tailRecords(file, func(r Record) bool { return r.Seq <= base }, false, false, nil)
	return err == nil && len(recs) > 0 && recs[0].Seq == base && int64(len(recs)) == seq-base+1 && recs[len(recs)-1].Seq == seq
}

// rollForward writes the snapshot of w.ID's journal at tail, its last line, which the snapshot
// on disk does not hold: the journal is the commit point, and a change recorded there whose
// snapshot replace was cut short is applied now. w.Data is nil when the snapshot on disk is
// not of this schema (an older record whose migration was cut short).
func (s *Store) rollForward(w Workflow, tail *Record) (Workflow, tailState, error) {
	st, err := s.journalState(journalFile(w.ID))
	if errors.Is(err, errChain) && (w.Data != nil || st != nil) {
		return s.pastBrokenChain(w, st, tail)
	}
	if err == nil && st != nil && st.Seq == tail.Seq {
		_, err = readMeta(st.Snapshot)
	}
	if err != nil || st == nil || st.Seq != tail.Seq {
		return w, tailState{}, fmt.Errorf("rebuilding revision %d of %s from its journal: %w", tail.Revision, w.ID, cmp.Or(err, errChain))
	}
	if err := s.writeErr(WorkflowFile, durable.WriteFile(s.fs, WorkflowFile, st.Snapshot, 0o600)); err != nil {
		return w, tailState{}, err
	}
	w.Notices = append(w.Notices, Notice{Kind: "rolled-forward", Path: WorkflowFile, Revision: tail.Revision,
		Message: fmt.Sprintf("revision %d was in the journal but not in the snapshot; the snapshot was brought up to date", tail.Revision)})
	w.Data, w.Revision = st.Snapshot, tail.Revision
	return w, tailOf(tail), nil
}

// pastBrokenChain goes on from w when a damaged line breaks the journal's chain of changes
// before tail, its last line, so that the states after the break cannot be rebuilt (as a
// rebuild of a damaged snapshot finds too, newestJournalRecord): from the newest state there
// is, the snapshot or st, the last the journal gives (nil for none), with a full line after
// tail. The journal keeps every line; nothing after the break is claimed as rebuilt. Opened
// WithNoRepair, it answers ErrRepairLeft: a change made past the break ends the break, and
// no later read would say which revisions were lost.
func (s *Store) pastBrokenChain(w Workflow, st, tail *Record) (Workflow, tailState, error) {
	if s.o.noRepair {
		return w, tailState{}, ErrRepairLeft
	}
	if st != nil && st.Revision > w.Revision {
		if _, err := readMeta(st.Snapshot); err != nil {
			return w, tailState{}, fmt.Errorf("rebuilding revision %d of %s from its journal: %w", st.Revision, w.ID, err)
		}
		if err := s.writeErr(WorkflowFile, durable.WriteFile(s.fs, WorkflowFile, st.Snapshot, 0o600)); err != nil {
			return w, tailState{}, err
		}
		w.Data, w.Revision = st.Snapshot, st.Revision
	}
	w.Notices = append(w.Notices, Notice{Kind: "rebuilt", Path: WorkflowFile, Revision: w.Revision, Lost: true,
		Message: fmt.Sprintf("the journal of %s holds revisions up to %d, but a damaged line breaks its chain of changes and those after revision %d cannot be rebuilt: the workflow goes on from revision %d, and the journal keeps every line", w.ID, tail.Revision, w.Revision, w.Revision)})
	return w, tailState{seq: tail.Seq, rev: tail.Revision}, nil
}

// EndBreak ends a break in the active workflow's journal chain that a read has said (a
// "rebuilt" notice: the states after a damaged line cannot be rebuilt, and the workflow goes
// on from an older one): a full line of the state it goes on from, after the journal's last
// line, so that the journal and the snapshot agree again and later reads do not say the break
// again, as the next change would. With no break left (a change since, or none at all) it
// writes nothing. Opened WithNoRepair, it answers ErrRepairLeft.
func (s *Store) EndBreak() error {
	_, err := s.locked(func(w Workflow, ts tailState) (Result, error) {
		if w.Data == nil || ts.rev <= w.Revision {
			return Result{Workflow: w}, nil
		}
		r, err := w.Record()
		if err != nil {
			return Result{Workflow: w}, err
		}
		r.Revision = ts.rev + 1
		return s.commitRecord(w, ts, r, Event{Kind: "rebuilt", Detail: fmt.Sprintf("from revision %d: a damaged journal line broke the chain of the revisions after it, up to %d", w.Revision, ts.rev)})
	})
	return err
}

// Quarantine moves the damaged file (a name in the state directory) to
// quarantine/<base>-<utc>, durably, never deleting it; why is said in the notice. Opened
// WithNoRepair, it moves nothing and answers ErrRepairLeft.
func (s *Store) Quarantine(file string, why error) (Notice, error) {
	if s.o.noRepair {
		return Notice{}, fmt.Errorf("%s: %w", file, ErrRepairLeft)
	}
	dst, err := s.setAside(path.Base(file), func(dst string) error {
		return s.writeErr(file, s.fs.RenameNoReplace(file, dst))
	})
	if err == nil {
		err = s.fs.SyncDir(path.Dir(file))
	}
	if dst != "" && err != nil {
		return Notice{}, fmt.Errorf("%s was moved to %s, where it is kept, but the disk did not confirm the move (%v): after a power loss it may be back in its place; %s", file, dst, err, CheckDiskStep)
	}
	if err != nil {
		return Notice{}, err
	}
	// Whole characters, never half of one; a cut that would make a secret of a token glued to more
	// text ends before that word.
	reason := secrets.Clip(why.Error(), 200)
	what := "was damaged"
	if errors.Is(why, migrate.ErrForeign) {
		what = "is not Cairn's" // another tool's file: kept all the same, never told as damage
	}
	return Notice{Kind: "quarantined", Path: dst,
		Message: fmt.Sprintf("%s %s (%s) and was moved to %s, where it is kept", file, what, reason, dst)}, nil
}

// setAside puts something under a free name in quarantine/ for base (QuarantineName, or the
// next free one after it) with put, which answers fs.ErrExist for a name taken, and makes the
// name durable. It returns the name, relative to the state directory: on an error too once put
// has put it there, with the sync's error as it is.
func (s *Store) setAside(base string, put func(dst string) error) (string, error) {
	if err := s.mkdir(quarantineDir); err != nil {
		return "", err
	}
	dst := QuarantineName(base, s.o.now())
	for i := 2; ; i++ {
		// Never onto a name taken, even one taken since it was chosen: only "exists" moves on
		// to the next name; any other answer (an I/O error, no permission) would be the same
		// for every name tried.
		err := put(dst)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if i > 100 {
			return "", s.writeErr(dst, fs.ErrExist)
		}
		dst = quarantineDir + "/" + base + "-" + s.utc() + "-" + strconv.Itoa(i)
	}
	return dst, s.fs.SyncDir(quarantineDir)
}

// QuarantineName is the name, relative to the state directory, under which quarantine/ keeps
// a file of base name base set aside at t (Quarantine takes the next free one after it).
func QuarantineName(base string, t time.Time) string {
	return quarantineDir + "/" + base + "-" + t.UTC().Format(utcStamp)
}

// Quarantined says what quarantine/ holds: how many names, and the newest most of them
// (by the time in their names, newest first), relative to the state directory. It reads only
// the directory; none there is none held.
func (s *Store) Quarantined(most int) (total int, newest []string) {
	names, _ := s.fs.ReadDirNames(quarantineDir)
	newestFirst(names)
	for _, n := range names[:min(most, len(names))] {
		newest = append(newest, quarantineDir+"/"+n)
	}
	return len(names), newest
}

// newestFirst sorts names quarantine/ keeps newest first. The time is in the name
// (QuarantineName, or the next free one after it): compared from there, a name without one is
// oldest.
func newestFirst(names []string) {
	when := func(n string) (string, int) {
		m := quarantineStamp().FindStringSubmatch(n)
		if m == nil {
			return "", 0
		}
		i, _ := strconv.Atoi(m[2])
		return m[1], i
	}
	slices.SortFunc(names, func(a, b string) int {
		ta, ia := when(a)
		tb, ib := when(b)
		return cmp.Or(cmp.Compare(tb, ta), cmp.Compare(ib, ia), cmp.Compare(a, b))
	})
}

// quarantineStamp finds the time in a name quarantine/ keeps, and the number Quarantine puts
// after it when the name was taken. Compiled on first use: every hook links the store.
var quarantineStamp = lazyre.New(`-([0-9]{8}T[0-9]{6}\.[0-9]{3}Z)(?:-([0-9]+))?$`)

// Unquarantine puts back at file what Quarantine moved aside, as n says, for a caller whose
// file made anew in its place could not be written: the damaged file is where it was again,
// for the next try, rather than gone from its place with nothing there. It never replaces a
// file at file.
func (s *Store) Unquarantine(n Notice, file string) error {
	if err := s.fs.RenameNoReplace(n.Path, file); err != nil {
		return s.writeErr(file, err)
	}
	return s.writeErr(file, s.fs.SyncDir(path.Dir(file)))
}

// UnreadableError says that a file of the active workflow's state is there but cannot be read:
// its snapshot, or with no snapshot its journal (no permission, an I/O error, or a FIFO, link
// or directory in its place), or a snapshot that is a JSON document holding no workflow record
// with a version above the ones this Cairn reads (another tool's file, or a newer Cairn's that
// moved its fields; its error matches migrate.ErrForeign). It was left as it is: a workflow may
// be on record, and no new one may start over it.
type UnreadableError struct {
	// IDs are the workflows journal/ holds a journal of, the active one's among them.
	IDs []string
	Err error // says which file and why
}

func (e *UnreadableError) Error() string { return e.Err.Error() }

func (e *UnreadableError) Unwrap() error { return e.Err }

// unreadableSnapshot is the *UnreadableError for err, the snapshot's read error: in readErr's
// words, which name what is in its place and the step, as for any state file.
func (s *Store) unreadableSnapshot(err error) *UnreadableError {
	return s.unreadable(s.readErr("the workflow snapshot", WorkflowFile, err))
}

// unreadable is the *UnreadableError for err.
func (s *Store) unreadable(err error) *UnreadableError {
	names, _ := s.fs.ReadDirNames(journalDir)
	sort.Strings(names)
	var ids []string
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".jsonl")
		if !ok {
			id, ok = strings.CutSuffix(n, sealedSuffix)
		}
		if ok && ValidWorkflowID(id) == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return &UnreadableError{IDs: ids, Err: err}
}

// DamagedError says that a workflow is on record but can be read from neither its snapshot
// nor its journal: both are damaged. Nothing was deleted.
type DamagedError struct {
	Dir         string   // the state directory
	Journals    []string // journal files from which no state can be rebuilt, relative to Dir
	Quarantined []string // damaged snapshots kept in quarantine/, relative to Dir, newest first
	// Sealed lists the sealed journal directories (journal/<id>.sealed) whose segments hold no
	// readable record either, of workflows whose active journal is missing.
	Sealed []string
}

// DamagedStep ends a DamagedError's text: the step for the agent, who goes through the user
// (a restore or a move of state files is the person's); the CLI and the person's line at
// session start put the person's own in its place.
const DamagedStep = "ask the user to run `cairn doctor`, which says what to fix"

func (e *DamagedError) Error() string {
	snap := "the snapshot is missing"
	if len(e.Quarantined) > 0 {
		// The newest: the ones before it are earlier workflows', which would push the step
		// off the end of the user's one line.
		snap = "the damaged snapshot is kept in " + e.Quarantined[0]
		if n := len(e.Quarantined) - 1; n > 0 {
			snap += fmt.Sprintf(" (with %d older snapshot%s set aside before)", n, workflow.Plural(n))
		}
	}
	return fmt.Sprintf("a workflow is on record but cannot be read: %s, and no state can be rebuilt from its journal (%s). Nothing was deleted (the files are in %s); %s", snap, strings.Join(append(slices.Clip(e.Journals), e.Sealed...), ", "), e.Dir, DamagedStep)
}

// damaged reports journal files that exist but give no state to rebuild, with the snapshots
// quarantine/ keeps, when there is no snapshot to read: a workflow that must not be shown as
// absent.
func (s *Store) damaged() *DamagedError {
	names, _ := s.fs.ReadDirNames(journalDir)
	d := &DamagedError{Dir: s.dir}
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".jsonl"); ok && ValidWorkflowID(id) == nil {
			if fi, err := s.fs.Lstat(journalDir + "/" + n); err == nil && fi.Size() > 0 && !tornOnly(s.fs, journalDir+"/"+n) {
				d.Journals = append(d.Journals, journalDir+"/"+n)
			}
		} else if id, ok := strings.CutSuffix(n, sealedSuffix); ok && ValidWorkflowID(id) == nil && (!slices.Contains(names, id+".jsonl") || tornOnly(s.fs, journalFile(id))) {
			segs, _ := s.segments(journalFile(id))
			if slices.ContainsFunc(segs, func(f string) bool { fi, err := s.fs.Lstat(f); return err == nil && fi.Size() > 0 }) {
				d.Sealed = append(d.Sealed, journalDir+"/"+n)
			}
		}
	}
	if len(d.Journals) == 0 && len(d.Sealed) == 0 {
		return nil
	}
	sort.Strings(d.Journals)
	sort.Strings(d.Sealed)
	q, _ := s.fs.ReadDirNames(quarantineDir)
	newestFirst(q)
	for _, n := range q {
		if strings.HasPrefix(n, WorkflowFile+"-") {
			d.Quarantined = append(d.Quarantined, quarantineDir+"/"+n)
		}
	}
	return d
}

// tornOnly reports whether the journal file holds no whole line, only the torn first line of
// a writer killed while appending it: nothing in it was ever acknowledged, so it puts no
// workflow on record (the next append cuts it off). A file that cannot be read is not.
func tornOnly(fsys durable.FS, file string) bool {
	data, err := durable.ReadFile(fsys, file, MaxJournalSize)
	return err == nil && bytes.IndexByte(data, '\n') < 0
}

// newestJournalRecord returns the newest verified record among the journals in journal/, with
// its state rebuilt in Snapshot, that record as written (raw), and the file it is in. A journal
// whose chain breaks gives its last state that can be rebuilt. A workflow whose active journal
// is gone or holds no readable line is read from its sealed segments (see chainEnd): its
// acknowledged history is still there and must not read as no workflow.
func (s *Store) newestJournalRecord() (rec, raw *Record, file string, err error) {
	names, err := s.fs.ReadDirNames(journalDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "", nil
	}
	if err != nil {
		return nil, nil, "", cmp.Or(s.othersRead("the journals", journalDir, err), err)
	}
	sort.Strings(names)
	var best *Record
	var bestID string
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".jsonl")
		if !ok {
			id, ok = strings.CutSuffix(n, sealedSuffix)
			if !ok || slices.Contains(names, id+".jsonl") {
				continue // a journal with segments is read through its active file's name
			}
		}
		if ValidWorkflowID(id) != nil {
			continue
		}
		f, r, err := s.chainEnd(id)
		if err != nil {
			// It may hold the newest workflow: none is chosen without it.
			if oe := s.othersRead("the journal of "+id, journalFile(id), err); oe != nil {
				return nil, nil, "", oe
			}
			return nil, nil, "", fmt.Errorf("reading journal %s in %s: %w", journalFile(id), s.dir, err)
		}
		if r != nil && (best == nil || r.At.After(best.At)) {
			best, file, bestID = r, f, id
		}
	}
	if best == nil {
		return nil, nil, "", nil
	}
	rec, err = s.journalState(file)
	if rec == nil && (err == nil || errors.Is(err, errChain)) && file == journalFile(bestID) {
		// No state of the active journal can be rebuilt (its full line is damaged): the
		// newest of its segments may be.
		if f, r := s.sealedEnd(bestID); r != nil {
			file = f
			rec, err = s.journalState(file)
		}
	}
	if rec == nil {
		if errors.Is(err, errChain) {
			return nil, nil, "", nil // nothing to rebuild: damaged() reports the journal
		}
		return nil, nil, "", err
	}
	if rec.Seq != best.Seq || strings.HasSuffix(path.Dir(file), sealedSuffix) {
		// The chain broke after rec, or rec is sealed: the next append continues from rec's
		// state with a full line, after the last line's sequence number.
		best = &Record{Seq: best.Seq, Revision: best.Revision}
	}
	return rec, best, file, nil
}

// chainEnd returns the file holding the newest verified record of workflow id's journal, and
// that record (nil for none): the active journal's last line, or, when the active journal is
// missing or holds no verified line, the newest sealed one (sealedEnd). An active journal that
// cannot be read is an error: it may hold newer changes than its segments.
func (s *Store) chainEnd(id string) (string, *Record, error) {
	jf := journalFile(id)
	r, err := s.journalTail(jf)
	if err != nil || r != nil {
		return jf, r, err
	}
	f, r := s.sealedEnd(id)
	return f, r, nil
}

// sealedEnd returns the newest segment sealed from workflow id's journal that holds a verified
// record, and its last record (nil for none).
func (s *Store) sealedEnd(id string) (string, *Record) {
	segs, _ := s.segments(journalFile(id))
	for i := len(segs) - 1; i >= 0; i-- {
		if r, err := s.journalTail(segs[i]); err == nil && r != nil {
			return segs[i], r
		}
	}
	return "", nil
}

// sealedOnly says, for a rebuild's notice, that it came from file, a sealed segment, because
// the active journal had no line to give: the changes written after it, if any, are lost.
func sealedOnly(file string, rev int64) string {
	dir, _, ok := strings.Cut(file, sealedSuffix+"/")
	if !ok {
		return ""
	}
	return fmt.Sprintf("; its active journal %s.jsonl is missing or gives no state to rebuild, so it was read from its sealed journal %s, and changes made after revision %d, if there were any, cannot be rebuilt", dir, file, rev)
}

// UpdateWorkflow is the one way the active workflow changes. Under the workflow lock it reads
// the current record (nil when there is none; repaired as ReadWorkflow describes) and calls
// fn, which returns the next record and the event that explains it, or nil next to change
// nothing, or an error to abort (returned as is). The next record must be schema 2.x, pass
// CheckDocument, carry the same workflow_id as the current one (archive first to start
// another) and revision = current + 1 (a new workflow starts at 1, or after its journal's
// last revision). The change is appended to journal/<workflow_id>.jsonl and fsynced (the
// commit point), then the snapshot is replaced; if only that replace fails, the change
// still stands (readers see it through the journal) and a "snapshot-stale" Notice says so.
// fn runs under the lock: it must not call UpdateWorkflow, ArchiveIf or ArchiveRecord.
func (s *Store) UpdateWorkflow(fn func(cur []byte) (next []byte, ev Event, err error)) (Result, error) {
	return s.locked(func(w Workflow, ts tailState) (Result, error) {
		next, ev, err := fn(w.Data)
		if err != nil || next == nil {
			return Result{Workflow: w}, err
		}
		return s.commitLocked(w, ts, next, w.Data, ev)
	})
}

// UpdateRecord is UpdateWorkflow over the domain type, the engine's way to change the active
// workflow: fn gets the current record decoded (nil when there is none) and returns the next
// one, or nil to change nothing. The store numbers it (the current revision plus one for the
// same workflow, else 1) and encodes it: the record's one encoding is the store's.
func (s *Store) UpdateRecord(fn func(cur *workflow.Record) (next *workflow.Record, ev Event, err error)) (Result, error) {
	return s.locked(func(w Workflow, ts tailState) (Result, error) {
		var cur *workflow.Record
		if w.Data != nil {
			var err error
			if cur, err = w.Record(); err != nil {
				return Result{Workflow: w}, err
			}
		}
		next, ev, err := fn(cur) // which may change cur
		if err != nil || next == nil {
			return Result{Workflow: w}, err
		}
		next.Revision = 1
		if w.Data != nil && w.ID == next.WorkflowID {
			// After the journal's last revision, which is past the snapshot's when the states
			// after the snapshot's cannot be rebuilt (loadLocked).
			next.Revision = max(w.Revision, ts.rev) + 1
		}
		return s.commitRecord(w, ts, next, ev)
	})
}

// commitRecord encodes r, the store's one encoding of a record, and commits it. A change that
// keeps the workflow active, and grows the record, may not take the room kept for its ending
// (workflow.EndingRoom): ending a record the store took must always be possible.
func (s *Store) commitRecord(w Workflow, ts tailState, r *workflow.Record, ev Event) (Result, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return Result{Workflow: w}, fmt.Errorf("encoding the workflow record: %w", err)
	}
	if limit := strictjson.MaxSize - workflow.EndingRoom; len(data) > limit && len(data) > len(w.Data) && !workflow.MayTakeEndingRoom(r, workflow.Event(ev.Kind)) {
		return Result{Workflow: w}, fmt.Errorf("workflow not saved: %w", &strictjson.Error{Kind: strictjson.TooLarge, Offset: limit,
			Reason: fmt.Sprintf("the record would be %d bytes, and while the workflow is active it may take %d: the last %d KiB are kept for ending it", len(data), limit, workflow.EndingRoom>>10)})
	}
	m := meta{version: r.Version, id: r.WorkflowID, rev: r.Revision}
	if !m.current() {
		return Result{Workflow: w}, errors.New("workflow not saved: the record must be schema 2.x with a valid workflow_id and a revision")
	}
	if err := checkSave(data, w.Data, &ev); err != nil {
		return Result{Workflow: w}, err
	}
	return s.commit(w, ts, data, m, ev)
}

// locked runs fn on the active workflow (nil Data when there is none; repaired as
// ReadWorkflow describes) under the workflow lock.
func (s *Store) locked(fn func(w Workflow, ts tailState) (Result, error)) (Result, error) {
	unlock, err := s.lock("workflow")
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	s.cleanTemps(".", durable.TempPrefix(WorkflowFile))
	w, ts, err := s.loadLocked()
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Result{Workflow: w}, err
	}
	if ts.state != "" && ts.base < ts.seq && !s.chainWhole(journalFile(w.ID), ts.base, ts.seq) {
		// A damaged line in the chain: no state after it can be rebuilt, nor would a delta
		// appended to it. The next line is a full one, which the journal can rebuild again.
		// Checked here, where a line is written, and not in every read (the hooks').
		ts.state = ""
	}
	return fn(w, ts)
}

// CheckRecord applies to r, encoded as the store encodes it, the checks it must pass to be
// saved (CheckDocument), so a caller can refuse a change before doing anything else.
func CheckRecord(r *workflow.Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the workflow record: %w", err)
	}
	return CheckDocument(data)
}

// Record decodes the workflow record.
func (w Workflow) Record() (*workflow.Record, error) { return ParseRecord(w.Data) }

// ParseRecord decodes a stored workflow record (the active one, an archived one, a journal
// snapshot).
func ParseRecord(data []byte) (*workflow.Record, error) {
	var r workflow.Record
	// The method itself, not json.Unmarshal: that scans the whole record twice (to check it,
	// then to find its end) before calling the method, whose first pass checks it too and
	// which answers any failure with json.Unmarshal's own error (workflow.DecodeKnown).
	if err := r.UnmarshalJSON(data); err != nil {
		return nil, &RecordError{Err: strictjson.ExplainIn(data, err)}
	}
	return &r, nil
}

// RecordError is a stored workflow record that does not decode (ParseRecord): Err says why.
type RecordError struct{ Err error }

func (e *RecordError) Error() string { return "reading the workflow record: " + e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// commitLocked commits next, a record given as bytes, reading what the store needs from it;
// text of a secret's shape kept holds does not refuse it (checkChange).
func (s *Store) commitLocked(w Workflow, ts tailState, next, kept []byte, ev Event) (Result, error) {
	m, err := readNext(next)
	if err == nil {
		err = checkSave(next, kept, &ev)
	}
	if err != nil {
		return Result{Workflow: w}, err
	}
	return s.commit(w, ts, next, m, ev)
}

// readNext reads what the store needs from next, a record given as bytes.
func readNext(next []byte) (meta, error) {
	m, err := readMeta(next)
	if err != nil {
		return m, fmt.Errorf("workflow not saved: the record must be schema 2.x with workflow_id and revision: %w", err)
	}
	return m, nil
}

// checkSave is commit's refusal of next and ev (text of a secret's shape kept holds aside).
func checkSave(next, kept []byte, ev *Event) error {
	if err := cmp.Or(checkChange(kept, next), checkEvent(ev, kept)); err != nil {
		return fmt.Errorf("workflow not saved: %w", err)
	}
	return nil
}

// follows refuses m unless its revision is the one after prev (0: none before it).
func follows(m meta, prev int64) error {
	if prev > 0 && m.rev != prev+1 {
		return fmt.Errorf("workflow %s not saved: %w: got %d, the current revision is %d (another process may have changed it; read it again)", m.id, ErrRevision, m.rev, prev)
	}
	return nil
}

// followsJournal is commit's refusal of m, the first record of a new chain, when a journal
// of its id holds lines already that m does not follow: said before anything changes.
func (s *Store) followsJournal(m meta) error {
	tail, err := s.journalTail(journalFile(m.id))
	if err != nil || tail == nil {
		return err
	}
	return follows(m, tail.Revision)
}

// commit commits next, read as m, with ev, both checked (checkSave).
func (s *Store) commit(w Workflow, ts tailState, next []byte, m meta, ev Event) (Result, error) {
	res := Result{Workflow: w}
	if w.Data != nil {
		if m.id != w.ID {
			return res, fmt.Errorf("workflow %s not saved: %w (%s); archive it first", m.id, ErrWorkflowMismatch, w.ID)
		}
	} else {
		ts = tailState{}
		tail, err := s.journalTail(journalFile(m.id))
		if err != nil {
			return res, err
		}
		if tail != nil {
			// A new chain: its first line is full.
			ts = tailState{seq: tail.Seq, rev: tail.Revision}
		} else if n, err := s.setAsideSealed(m.id); err != nil {
			return res, err
		} else if n != nil {
			w.Notices = append(w.Notices, *n)
		}
	}
	if err := follows(m, max(w.Revision, ts.rev)); err != nil {
		return res, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, next); err != nil {
		return res, err
	}
	rec := journalRecord(ts, w.Data, compact.Bytes())
	rec.Seq, rec.Revision, rec.At, rec.Event = ts.seq+1, m.rev, s.o.now().UTC(), ev
	if err := s.mkdir(journalDir); err != nil {
		return res, err
	}
	jf := journalFile(m.id)
	// The journal line is the commit point: unless it is durable (a failed directory sync
	// included), the change is not acknowledged.
	appended, err := durable.AppendLine(s.fs, jf, encodeRecord(rec), true)
	if err != nil {
		return res, s.writeErr(jf, err)
	}
	res = Result{Workflow: Workflow{Data: next, ID: m.id, Revision: m.rev, Notices: w.Notices}, Changed: true, Seq: rec.Seq}
	if err := durable.WriteFile(s.fs, WorkflowFile, next, 0o600); err != nil && !durable.IsNotDurable(err) {
		// Committed in the journal; readers already see it there and the next locked
		// operation brings the snapshot up to date. Said as a refused write says why (the disk
		// full, read-only), without its "left as it was" and "try again": the change stands.
		res.Notices = append(res.Notices, Notice{Kind: "snapshot-stale", Path: WorkflowFile, Revision: m.rev,
			Message: fmt.Sprintf("revision %d is saved in the journal, but %v; the next write brings the snapshot up to date%s", m.rev, ArchiveCause(s.writeErr(WorkflowFile, err)), NoRoomTold(err))})
	}
	if rec.Snapshot != nil && appended.Offset > s.o.compactAt {
		// The change stands whatever this does; a compaction that fails is tried again at the
		// next full line, and one cut short leaves a journal that reads the same.
		_ = s.compactJournal(jf, appended.Offset)
	}
	return res, nil
}

// setAsideSealed moves to quarantine/ the sealed segments of workflow id when a new chain of it
// starts without a journal to continue: they belong to an earlier chain whose journal is gone.
// Left in place, readers, which keep the first copy of each sequence number, would show their
// lines instead of the new chain's, and the next compaction would drop the new chain's lines
// numbered as theirs.
func (s *Store) setAsideSealed(id string) (*Notice, error) {
	dir := sealedDir(journalFile(id))
	if there, err := s.present(dir); err != nil || !there {
		return nil, err
	}
	n, err := s.Quarantine(dir, errors.New("its sealed journal lines belong to an earlier chain of this workflow whose journal is missing"))
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// journalRecord makes the journal line for a change from prev (the current snapshot, nil for
// none) to next (compact): a delta when prev is the state the journal's last line ends in and
// the chain stays within its bounds, else a full line. A delta is used only once applying it
// to prev has given next byte for byte.
func journalRecord(ts tailState, prev, next []byte) Record {
	full := Record{Snapshot: next, State: stateSum(next)}
	if prev == nil || ts.state == "" {
		return full
	}
	var pc bytes.Buffer
	if json.Compact(&pc, prev) != nil || stateSum(pc.Bytes()) != ts.state {
		return full
	}
	a, err := parseJSON(pc.Bytes())
	if err != nil {
		return full
	}
	b, err := parseJSON(next)
	if err != nil {
		return full
	}
	d := diffJSON(a, b)
	chain, size := ts.chain+int64(len(d)), int64(len(next))
	if lines := ts.seq - ts.base + 1; d == nil || chain > maxChainFactor*size || lines >= maxChainRecords && chain+lines*lineCost >= size {
		return full
	}
	dn, err := parseJSON(d)
	if err != nil {
		return full
	}
	if got, err := applyDelta(a, dn); err != nil || !bytes.Equal(got.appendTo(nil), next) {
		return full
	}
	return Record{Delta: d, Base: ts.base, Chain: chain, State: full.State}
}

// cleanTemps removes the temp files in dir that killed writers left, those whose names start
// with prefix (durable.TempPrefix of one file's name, or ".tmp-" for all); the caller holds
// the lock that every writer of those files takes, so none of them is in flight.
func (s *Store) cleanTemps(dir, prefix string) {
	names, err := s.fs.ReadDirNames(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			if dir != "." {
				n = dir + "/" + n
			}
			_ = s.fs.Remove(n)
		}
	}
}
