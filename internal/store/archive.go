package store

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// ArchiveInfo describes one archived workflow.
type ArchiveInfo struct {
	Dir        string    `json:"dir"` // under archive/, e.g. "apex-20261122T173000Z-3f9a-20261123T101500.000Z"
	WorkflowID string    `json:"workflow_id"`
	Reason     string    `json:"reason"` // completed, expired, replaced, conflict, ...
	At         time.Time `json:"at"`
	Revision   int64     `json:"revision"`
	// What a listing shows of the record, copied into the index so that listing archives
	// opens none of them.
	Type      string    `json:"type,omitempty"`
	Phase     string    `json:"phase,omitempty"`
	Context   string    `json:"context,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Pruned lists the older archive directories that retention removed to make room.
	Pruned []string `json:"-"`
	// PruneErr is why retention could not remove older archives; the archive itself was
	// made, and the next archive prunes again.
	PruneErr error `json:"-"`
	// Notices say what finishing the archive did besides (what it kept aside, and where).
	Notices []Notice `json:"-"`
	// Extra holds the members a newer Cairn wrote that this one has no field for, kept when
	// retention writes the index back.
	Extra map[string]json.RawMessage `json:"-"`
}

// archiveInfoJSON is ArchiveInfo without its methods, for workflow's unknown-member helpers.
type archiveInfoJSON ArchiveInfo

func (a ArchiveInfo) MarshalJSON() ([]byte, error) {
	return workflow.EncodeKnown(archiveInfoJSON(a), a.Extra)
}

func (a *ArchiveInfo) UnmarshalJSON(data []byte) error {
	var v archiveInfoJSON
	var extra map[string]json.RawMessage
	if err := workflow.DecodeKnown(data, &v, &extra); err != nil {
		return err
	}
	*a = ArchiveInfo(v)
	a.Extra = extra
	return nil
}

// summarize copies the record's type, phase, context and update time into a.
func (a *ArchiveInfo) summarize(record []byte) {
	var r struct {
		Type      string    `json:"type"`
		State     string    `json:"state"`
		Context   string    `json:"context"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	if json.Unmarshal(record, &r) == nil {
		a.Type, a.Phase, a.Context, a.UpdatedAt = r.Type, r.State, r.Context, r.UpdatedAt
		a.clipContext()
	}
}

// clipContext cuts the context a listing shows to what a start takes
// (workflow.MaxContextRunes): one an older Cairn or a seed allowed to be longer would make
// archive.json and its index line too large to read back.
func (a *ArchiveInfo) clipContext() {
	a.Context = secrets.Clip(a.Context, workflow.MaxContextRunes) // never cut into a secret
}

// readArchiveInfo reads what archive.json, in the archive directory dir, says of its archive
// (ok false when it cannot be read): in full, as an older Cairn wrote it with a context of
// any length, which is cut short here.
func (s *Store) readArchiveInfo(dir string) (a ArchiveInfo, ok bool) {
	b, err := durable.ReadFile(s.fs, dir+"/archive.json", strictjson.MaxSize)
	if err != nil || json.Unmarshal(b, &a) != nil {
		return ArchiveInfo{}, false
	}
	a.clipContext()
	return a, true
}

const archiveStamp = "20060102T150405.000Z"

// ErrNotActive is ArchiveIf's answer when the workflow it was asked to archive is no longer
// the active one.
var ErrNotActive = errors.New("no longer the active workflow")

// ArchiveIf moves the active workflow's snapshot and journal into archive/<workflow_id>-<utc>/
// (archive/conflict-<workflow_id>-<utc>/ when reason is "conflict", as seed 004 does), under
// the workflow lock, so that no workflow is active afterwards. It then applies retention: the
// newest N archives in the index's order are kept (DefaultRetention, or WithRetention), the
// one just made always among them, and the active workflow's conflict archives a replay may
// still be owed from too (owedConflicts), and the archive that records the migration of a
// seed file still in place (seedArchives), and older archive directories are removed and listed in
// ArchiveInfo.Pruned. That pruning is the only deletion the store ever makes; the active
// workflow is never touched by it. A missing active workflow is a *NotFoundError.
//
// It archives only when the active workflow is id (any, for ""), checked under the lock: an
// operation that committed a workflow's end and then archives it must not archive the next
// workflow another process started in between. Otherwise it archives nothing and returns an
// error matching ErrNotActive.
func (s *Store) ArchiveIf(reason, id string) (ArchiveInfo, error) {
	w, unlock, err := s.lockActive(reason)
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer unlock()
	if id != "" && w.ID != id {
		return ArchiveInfo{}, fmt.Errorf("workflow %s was not archived: %w (the active one is %s)", id, ErrNotActive, w.ID)
	}
	info, err := s.archiveLocked(w.ID, w.Revision, reason, nil, w.Data, w.Notices)
	if unfinished, err := madeUnfinished(&info, err); err != nil || unfinished {
		return info, err
	}
	info.Pruned, info.PruneErr = s.prune(info.Dir)
	return info, nil
}

// lockActive checks an archive reason, takes the workflow lock and reads the active workflow
// under it, for an operation that archives it. The caller releases the lock when err is nil.
func (s *Store) lockActive(reason string) (w Workflow, unlock func() error, err error) {
	if err := ValidName(reason); err != nil {
		return w, nil, fmt.Errorf("archive reason: %w", err)
	}
	if unlock, err = s.lock("workflow"); err != nil {
		return w, nil, err
	}
	if w, _, err = s.loadLocked(); err != nil {
		unlock()
		return w, nil, err
	}
	return w, unlock, nil
}

// ArchiveRecord files a workflow record that is not the active one (the losing side of a
// conflict, a replaced import) as an archive, without touching the active workflow, then
// applies retention as ArchiveIf does. Text of a secret's shape kept holds (the seed file doc
// was migrated from, Legacy.Source) does not refuse it (checkChange).
func (s *Store) ArchiveRecord(doc []byte, reason string, kept []byte) (ArchiveInfo, error) {
	if err := ValidName(reason); err != nil {
		return ArchiveInfo{}, fmt.Errorf("archive reason: %w", err)
	}
	if err := checkChange(kept, doc); err != nil {
		return ArchiveInfo{}, fmt.Errorf("record not archived: %w", err)
	}
	m, err := readMeta(doc)
	if err != nil {
		return ArchiveInfo{}, fmt.Errorf("record not archived: %w", err)
	}
	unlock, err := s.lock("workflow")
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer unlock()
	var told []Notice
	if n, err := s.finishArchive(); err != nil {
		return ArchiveInfo{}, err
	} else if n != nil {
		told = append(told, *n)
	}
	info, err := s.archiveLocked(m.id, m.rev, reason, doc, doc, told)
	if unfinished, err := madeUnfinished(&info, err); err != nil || unfinished {
		return info, err
	}
	info.Pruned, info.PruneErr = s.prune(info.Dir)
	return info, nil
}

// pendingArchive names the archive in progress, written durably before its commit point and
// removed once the archive is whole, so that recovery (finishArchive) can finish or undo an
// archive a kill or an I/O error cut short.
const pendingArchive = archiveDir + "/pending.json"

type pending struct {
	Dir        string `json:"dir"`
	WorkflowID string `json:"workflow_id"`
	Active     bool   `json:"active"` // the active workflow is being archived (not ArchiveRecord)
	// Adopt is set while AdoptLine replaces the active workflow's line (adopt.go).
	Adopt *adoptMark `json:"adopt,omitempty"`
	// Made is the empty directory under archive/ that Cairn made before writing the marker and
	// then renames to Dir without replacing (startArchive): while it is there, a directory named
	// Dir is not Cairn's; once it is gone, Dir is. A marker without it (an earlier Cairn's)
	// proves nothing about Dir, which recovery then never removes.
	Made string `json:"made,omitempty"`
}

// archiveMade is the base of the temp name an archive's directory is made under (pending.Made).
const archiveMade = "archive-dir"

// archiveLocked builds the archive directory. With doc nil it moves the active snapshot and
// journal. The commit point is the snapshot's arrival in the archive directory (its rename,
// or for doc its durable write): before it the workflow is still active with its journal and
// the half-made directory is removed; after it the workflow is archived and the journal follows
// it, now or, after a crash, in finishArchive. The index line comes last. told is what the
// caller's locked read or recovery said first, which the archive's notices begin with: the
// marker it settled is gone, so nothing says it again.
func (s *Store) archiveLocked(id string, rev int64, reason string, doc, record []byte, told []Notice) (ArchiveInfo, error) {
	info, err := s.newArchive(id, rev, reason, record)
	info.Notices = slices.Clone(told)
	if err != nil {
		return info, err
	}
	p := pending{WorkflowID: id, Active: doc == nil}
	made, err := s.startArchive(&info, &p)
	dir := archiveDir + "/" + info.Dir
	files := newFiles{s: s, dir: dir}
	undo := func(err error) (ArchiveInfo, error) {
		// The directory goes only when it holds nothing but what the archive wrote there.
		if made {
			if n, _ := s.undoArchive(p, dir, files.ours...); n != nil {
				info.Notices = append(info.Notices, *n)
			}
		}
		return info, notArchived(err)
	}
	if errors.Is(err, errDirTaken) {
		return info, err
	} else if err != nil {
		return undo(err)
	}
	metaDoc, _ := json.Marshal(info)
	if err := files.write("archive.json", metaDoc); err != nil {
		return undo(err)
	}
	if doc != nil {
		if err := files.write(WorkflowFile, doc); err != nil {
			return undo(err)
		}
	} else {
		err := s.fs.RenameNoReplace(WorkflowFile, dir+"/"+WorkflowFile)
		if errors.Is(err, fs.ErrExist) {
			// Someone else's file: it is not replaced, and the workflow stays active.
			return undo(s.writeErr(dir+"/"+WorkflowFile, err))
		}
		if err == nil {
			err = s.syncMove(id, dir)
		}
		if err != nil {
			if there, serr := s.present(dir + "/" + WorkflowFile); serr == nil && !there {
				return undo(s.writeErr(WorkflowFile, err))
			} else if serr != nil {
				// Unknown whether it moved: recovery decides from what is on disk.
				return info, fmt.Errorf("archiving %s: %w; whether it is archived in %s or still active is settled on the next read", id, ArchiveCause(s.writeErr(WorkflowFile, err)), dir)
			} else if _, ok := errors.AsType[*moveUnconfirmedError](err); ok {
				return info, err // moved, but not archived for sure: the marker stays
			}
		}
	}
	// Committed: what is left is finishArchive's work, done now.
	n, err := s.finishArchive()
	if n != nil {
		info.Notices = append(info.Notices, *n)
	}
	if err != nil {
		return info, &unfinishedError{dir: dir, err: err}
	}
	return info, nil
}

// syncMove makes the active workflow id's move into its archive directory dir durable, both
// ends, before its journal follows it: a power loss must not bring the workflow back active
// with its journal archived.
func (s *Store) syncMove(id, dir string) error {
	for _, d := range []string{dir, "."} {
		if err := s.fs.SyncDir(d); err != nil {
			return &moveUnconfirmedError{id: id, dir: dir, err: s.writeErr(d, err)}
		}
	}
	return nil
}

// moveUnconfirmedError is syncMove's when the active workflow's snapshot is in its archive
// directory but the move could not be made durable (a directory's sync failed): a power loss
// may bring the workflow back active, so its journal stays with it until the move is.
type moveUnconfirmedError struct {
	id, dir string
	err     error
}

func (e *moveUnconfirmedError) Error() string {
	cause := e.err
	if we, ok := errors.AsType[*WriteError](cause); ok {
		cause = we.Err // its own text would say the file was left as it was
	}
	return fmt.Sprintf("workflow %s was moved into %s, but the disk did not confirm the move (%v): after a power loss it may be active again, with its journal, which stays with it until the next command that changes a workflow finishes the archive, once that is mended", e.id, e.dir, cause)
}

func (e *moveUnconfirmedError) Unwrap() error { return e.err }

// unfinishedError is archiveLocked's when the archive was made (its snapshot is in its
// directory) but finishing it, the journal's move or the index line, failed: the marker stays,
// and the next locked operation finishes it.
type unfinishedError struct {
	dir string
	err error
}

func (e *unfinishedError) Error() string {
	cause := e.err
	if we, ok := errors.AsType[*WriteError](cause); ok {
		if we.whose != "" {
			return fmt.Sprintf("the workflow is archived in %s, but finishing the archive failed: %s, as after a cairn run with sudo (%v); %s gives the state directory back to this user, and the next command that changes a workflow then finishes it", e.dir, we.whose, we.Err, we.fix)
		}
		cause = we.Err // its own text would say the file was left as it was
	}
	return fmt.Sprintf("the workflow is archived in %s, but finishing the archive failed (%v); the next command that changes a workflow finishes it, once that is mended", e.dir, cause)
}

func (e *unfinishedError) Unwrap() error { return e.err }

// madeUnfinished turns err, archiveLocked's, into a notice of info when the archive was made
// and only finishing it failed. Retention then waits for the next archive: it would place
// the archive the index lacks by its clock alone (placeUnlisted).
func madeUnfinished(info *ArchiveInfo, err error) (unfinished bool, _ error) {
	ue, ok := errors.AsType[*unfinishedError](err)
	if !ok {
		return false, err
	}
	info.Notices = append(info.Notices, Notice{Kind: "archive-pending", Path: pendingArchive, Message: ue.Error()})
	return true, nil
}

// newFiles writes the files of an archive into its new directory dir without replacing, and
// keeps the names of those it wrote (ours), which the archive's undo may remove: a file of
// that name someone else put there first is theirs, neither replaced nor removed.
type newFiles struct {
	s    *Store
	dir  string
	ours []string
}

func (f *newFiles) write(name string, data []byte) error {
	err := durable.WriteFileNoReplace(f.s.fs, f.dir+"/"+name, data, 0o600)
	if !errors.Is(err, fs.ErrExist) {
		f.ours = append(f.ours, name)
	}
	return f.s.writeErr(f.dir+"/"+name, err)
}

// moveIfLeft renames from to to when from is there, durably (both directories synced): a step
// that a recovery can run again. It never replaces: when to is there, even made after the
// look, nothing is moved and both are kept.
func (s *Store) moveIfLeft(from, to string) error {
	left, err := s.present(from)
	if err != nil || !left {
		return err
	}
	if err := durable.RenameNoReplace(s.fs, from, to); err != nil && !errors.Is(err, fs.ErrExist) {
		return s.writeErr(from, err)
	}
	return nil
}

// newArchive describes the archive of record (workflow id at revision rev) made now for
// reason, with Dir a name not taken under archive/, and makes archive/.
func (s *Store) newArchive(id string, rev int64, reason string, record []byte) (ArchiveInfo, error) {
	info := ArchiveInfo{WorkflowID: id, Reason: reason, At: s.o.now().UTC(), Revision: rev}
	info.summarize(record)
	if err := s.mkdir(archiveDir); err != nil {
		return info, err
	}
	base := info.WorkflowID + "-" + info.At.Format(archiveStamp)
	if info.Reason == "conflict" {
		base = "conflict-" + base
	}
	info.Dir = base
	return info, s.freeArchiveName(&info, base, 2)
}

// freeArchiveName moves info.Dir, when it is taken under archive/, on to the first of
// base-<i>, base-<i+1>... that is not.
func (s *Store) freeArchiveName(info *ArchiveInfo, base string, i int) error {
	for ; ; i++ {
		taken, err := s.present(archiveDir + "/" + info.Dir)
		if err != nil {
			return notArchived(err)
		}
		if !taken {
			return nil
		}
		if i > 100 {
			return notArchived(s.writeErr(archiveDir+"/"+info.Dir, fs.ErrExist))
		}
		info.Dir = base + "-" + strconv.Itoa(i)
	}
}

// errDirTaken is startArchive's error when every directory name it tried was made by someone
// else since it was chosen. Those directories are not Cairn's to use or to remove.
var errDirTaken = errors.New("the archive directory was made by another process meanwhile")

// startArchive makes the archive's directory, info.Dir or, when a directory of that name
// appeared since newArchive chose it, the next free name, and leaves archive/pending.json (p)
// naming it, so that recovery knows of every directory an archive makes and removes only those
// Cairn made. The directory is made empty under a temp name (p.Made) before the marker is
// written, then renamed to info.Dir without replacing: a directory of that name made by anyone
// else is never used, and recovery, finding the temp name still there, knows it is not
// Cairn's. made says that info.Dir is Cairn's (it was renamed into place), for the caller's
// undo; without it the start undid itself (marker, then temp directory). The caller holds the
// workflow lock.
func (s *Store) startArchive(info *ArchiveInfo, p *pending) (made bool, err error) {
	s.cleanArchiveTemps()
	p.Made = durable.TempName(archiveMade)
	tmp := archiveDir + "/" + p.Made
	if err := s.fs.Mkdir(tmp, 0o700); err != nil {
		return false, s.writeErr(tmp, err)
	}
	abandon := func(err error) (bool, error) {
		// The marker goes first: while it names tmp, tmp's absence would prove info.Dir Cairn's.
		if s.removePending() == nil {
			_ = s.fs.Remove(tmp)
		}
		return false, err
	}
	for {
		p.Dir = info.Dir
		dir := archiveDir + "/" + info.Dir
		mark, _ := json.Marshal(p)
		// The marker's write syncs archive/, and with it tmp's entry.
		if err := durable.WriteFile(s.fs, pendingArchive, mark, 0o600); err != nil {
			return abandon(s.writeErr(pendingArchive, err))
		}
		err := durable.RenameNoReplace(s.fs, tmp, dir)
		if err == nil || durable.IsNotDurable(err) {
			return true, s.writeErr(dir, err)
		}
		if !errors.Is(err, fs.ErrExist) {
			return abandon(s.writeErr(dir, err))
		}
		// Made by someone else since its name was chosen: the next name, in a new marker.
		base, n := archiveSeq(info.Dir)
		info.Dir = base + "-" + strconv.Itoa(n+1)
		if err := s.freeArchiveName(info, base, n+2); err != nil || n >= 100 {
			_, err = abandon(cmp.Or(err, notArchived(s.writeErr(archiveDir+"/"+info.Dir, fs.ErrExist))))
			return false, fmt.Errorf("%w: %w", errDirTaken, err)
		}
	}
}

func (s *Store) exists(name string) bool {
	_, err := s.fs.Lstat(name)
	return err == nil
}

// present is exists for a decision: an error other than "not there" is returned.
func (s *Store) present(name string) (bool, error) {
	_, err := s.fs.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, s.writeErr(name, err)
	}
	return true, nil
}

// notArchived says that a failed archive changed nothing.
func notArchived(err error) error {
	return &notArchivedError{err}
}

type notArchivedError struct{ err error }

func (e *notArchivedError) Error() string {
	return "nothing was archived, the workflow is as it was: " + e.err.Error()
}

func (e *notArchivedError) Unwrap() error { return e.err }

// ArchiveCause is why an archive failed, without the words that say it changed nothing, for
// a caller that has just changed the workflow itself (completed it): there "the workflow is
// as it was" would say the completion had not happened, and a write's "nothing was changed"
// and its step ("try again") would too.
func ArchiveCause(err error) error {
	if e, ok := err.(*notArchivedError); ok {
		err = e.err
	}
	if we, ok := err.(*WriteError); ok {
		what, _ := we.parts()
		return &causeOnly{what, we}
	}
	return err
}

// causeOnly is a WriteError said without what it left and its step (ArchiveCause).
type causeOnly struct {
	what string
	err  *WriteError
}

func (e *causeOnly) Error() string { return e.what }
func (e *causeOnly) Unwrap() error { return e.err }

// finishArchive completes or undoes the archive named in archive/pending.json, if any: with
// the snapshot in the archive directory it moves the journal there (never over one there:
// the workflow's own then goes to quarantine/, with a notice) and adds the index line; without it, it removes the half-made directory when the marker proves Cairn made it and it
// holds only archive.json (finishPending), and otherwise leaves it with a notice. Every locked
// workflow operation runs it first, so no read ever rebuilds an archived workflow from a
// journal left behind. A marker it cannot read or act on is moved to quarantine/, and the
// notice says so.
func (s *Store) finishArchive() (*Notice, error) {
	data, err := durable.ReadFile(s.fs, pendingArchive, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil && !notOurs(err) {
		if derr := s.dirInTheWay(archiveDir); derr != nil {
			// archive/ itself is not a directory (a symlink out of the state directory, which
			// is never followed): that is the refusal, with its step.
			return nil, derr
		}
		// An I/O error: the marker may well be Cairn's, and the archive it names is to be
		// finished, by a later operation. Until then the state cannot be read whole.
		return nil, s.unreadable(&pendingError{fmt.Errorf("reading %s, the archive in progress, in %s: %w", pendingArchive, s.dir, err)})
	}
	var p pending
	if err == nil {
		if err = json.Unmarshal(data, &p); err == nil {
			if _, _, ok := parseArchiveDir(p.Dir); !ok || strings.ContainsAny(p.Dir, `/\`) || ValidWorkflowID(p.WorkflowID) != nil {
				err = errors.New("not an archive in progress")
			}
		}
	}
	if err == nil && p.Made != "" && (!strings.HasPrefix(p.Made, durable.TempPrefix(archiveMade)) || strings.ContainsAny(p.Made, `/\`)) {
		err = errors.New("not an archive in progress")
	}
	if err != nil {
		// Not a marker Cairn wrote (damaged, too large, a directory or FIFO in its place, no
		// permission): left where it is it would stop every write. It is moved aside, whole.
		n, qerr := s.Quarantine(pendingArchive, err)
		if qerr != nil {
			return nil, fmt.Errorf("%s, the archive in progress, in %s cannot be read (%v) nor moved aside: %w", pendingArchive, s.dir, err, qerr)
		}
		return &n, nil
	}
	return s.finishPending(p)
}

// dirInTheWay is the error of a state directory's subdirectory dir when something else is in
// its place (a symlink, a file), else nil.
func (s *Store) dirInTheWay(dir string) error {
	if err := s.notDirAt(dir); err != nil {
		return s.writeErr(dir, err)
	}
	return nil
}

// pendingError is finishArchive's error when archive/pending.json cannot be read (an I/O
// error): a lock-free read goes on without settling the archive it names.
type pendingError struct{ err error }

func (e *pendingError) Error() string { return e.err.Error() }

func (e *pendingError) Unwrap() error { return e.err }

// notOurs says that err, from reading a file Cairn writes as a regular file it can read, finds
// something else in its place.
func notOurs(err error) bool {
	return errors.Is(err, durable.ErrNotRegular) || errors.Is(err, durable.ErrHardLinked) ||
		errors.Is(err, durable.ErrTooLarge) || errors.Is(err, fs.ErrPermission)
}

// finishPending is finishArchive's work for the archive p names. It removes a directory only
// when the marker proves Cairn made it (p.Made is gone), and then only what the archive writes
// there; a directory it leaves is named in the notice.
func (s *Store) finishPending(p pending) (*Notice, error) {
	dir := archiveDir + "/" + p.Dir
	if p.Made != "" {
		tmp := archiveDir + "/" + p.Made
		if there, err := s.present(tmp); err != nil {
			return nil, err
		} else if there {
			// Cut short before its directory was in place: nothing was moved, and a directory
			// named p.Dir is someone else's.
			if err := s.removePending(); err != nil {
				return nil, err
			}
			_ = s.fs.Remove(tmp)
			return nil, nil
		}
	}
	if p.Adopt != nil {
		if done, n, err := s.settleAdopt(p, dir); err != nil || !done {
			return n, err
		}
		return nil, s.indexPending(p, dir)
	}
	committed, err := s.present(dir + "/" + WorkflowFile)
	if err != nil {
		return nil, err
	}
	if committed && p.Active {
		// The snapshot there proves the commit only if the active one left (a rename moves
		// it); if it is still here, the one there is not this archive's.
		if still, err := s.present(WorkflowFile); err != nil {
			return nil, err
		} else if still && p.Made == "" {
			return s.leavePending(p, dir, fmt.Sprintf("it holds a %s, but workflow %s never moved into it and stays active with its journal", WorkflowFile, p.WorkflowID))
		} else if still {
			committed = false
		}
	}
	if !committed {
		// Cut short before the commit point: the workflow never left.
		return s.undoArchive(p, dir, "archive.json")
	}
	var kept *Notice
	if p.Active {
		// The snapshot's move made durable (again, for an archive whose syncs failed) before
		// its journal follows it.
		if err := s.syncMove(p.WorkflowID, dir); err != nil {
			return nil, err
		}
		jf := journalFile(p.WorkflowID)
		// The sealed segments first: a journal found here is then whole.
		for _, m := range []struct{ from, to, what string }{
			{sealedDir(jf), sealedDir(dir + "/journal.jsonl"), "sealed journal"},
			{jf, dir + "/journal.jsonl", "journal"},
		} {
			if err := s.moveIfLeft(m.from, m.to); err != nil {
				return nil, fmt.Errorf("workflow %s is archived in %s but its %s could not follow it (it will be moved on the next write): %w", p.WorkflowID, dir, m.what, err)
			}
			// Still there: the archive holds one already, which is not replaced (another's,
			// or after a power loss ours under both names). Ours is kept in quarantine/, not
			// left where a read would rebuild the archived workflow from it.
			if left, err := s.present(m.from); err != nil {
				return nil, err
			} else if left {
				n, err := s.Quarantine(m.from, fmt.Errorf("%s already held %s", dir, path.Base(m.to)))
				if err != nil {
					return nil, err
				}
				n.Message = fmt.Sprintf("workflow %s was archived in %s, which already held %s: the workflow's own %s was not put over it but moved to %s, where it is kept", p.WorkflowID, dir, path.Base(m.to), m.what, n.Path)
				kept = &n
			}
		}
		for _, d := range []string{dir, journalDir} {
			if err := s.fs.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, s.writeErr(d, err)
			}
		}
	}
	return kept, s.indexPending(p, dir)
}

// indexPending adds the index line of the archive p made, unless it is there, and ends it.
func (s *Store) indexPending(p pending, dir string) error {
	index, _ := s.readIndex()
	if !slices.ContainsFunc(index, func(a ArchiveInfo) bool { return a.Dir == p.Dir }) {
		info := ArchiveInfo{Dir: p.Dir, WorkflowID: p.WorkflowID}
		if a, ok := s.readArchiveInfo(dir); ok {
			info = a
			info.Dir = p.Dir
		}
		line, _ := json.Marshal(info)
		if _, err := durable.AppendLine(s.fs, archiveIndex, line, true); err != nil {
			return s.writeErr(archiveIndex, err)
		}
	}
	return s.removePending()
}

// reclaimJournal brings back the journal of w, the active workflow, from an archive directory
// that holds it without a snapshot: what Cairn left, before archive/pending.json, when killed between
// moving the journal and moving the snapshot into the archive. Only a journal that ends at w's
// snapshot (its revision, and its state where the journal records one) is w's own: another
// line of the same workflow (a half-pruned conflict archive's) would have w jump to its states.
func (s *Store) reclaimJournal(w Workflow) error {
	id := w.ID
	// Only a missing journal is brought back: one that is there, readable or not, is the
	// active workflow's own, and renaming over it would destroy it.
	if there, err := s.present(journalFile(id)); err != nil || there {
		return err
	}
	names, err := s.fs.ReadDirNames(archiveDir)
	if err != nil {
		return nil
	}
	for _, n := range names {
		aid, _, ok := parseArchiveDir(n)
		if !ok || aid != id {
			continue
		}
		dir := archiveDir + "/" + n
		if s.exists(dir+"/"+WorkflowFile) || !s.exists(dir+"/journal.jsonl") || !s.endsAt(dir+"/journal.jsonl", w) {
			continue
		}
		if err := s.mkdir(journalDir); err != nil {
			return err
		}
		if err := s.moveIfLeft(sealedDir(dir+"/journal.jsonl"), sealedDir(journalFile(id))); err != nil {
			return err
		}
		if err := s.fs.RenameNoReplace(dir+"/journal.jsonl", journalFile(id)); errors.Is(err, fs.ErrExist) {
			// The active journal appeared since the look: it is the workflow's own, and the
			// archive directory's stays where it is.
			return nil
		} else if err != nil {
			return s.writeErr(journalFile(id), err)
		}
		for _, d := range []string{journalDir, dir} {
			if err := s.fs.SyncDir(d); err != nil {
				return s.writeErr(d, err)
			}
		}
		return nil
	}
	return nil
}

// endsAt says whether journal file jf's last line is w's snapshot: its revision and, when the
// line records it, its state.
func (s *Store) endsAt(jf string, w Workflow) bool {
	t, err := s.journalTail(jf)
	if err != nil || t == nil || t.Revision != w.Revision {
		return false
	}
	var c bytes.Buffer
	return t.State == "" || json.Compact(&c, w.Data) == nil && stateSum(c.Bytes()) == t.State
}

// cleanArchiveTemps removes the temp files a killed archive or prune left in archive/ (the
// index's, the marker's) and the empty directories of archives killed before their marker
// named them (startArchive); every writer of those holds the workflow lock, which the caller
// holds, and no marker names them (recovery settled it first).
func (s *Store) cleanArchiveTemps() {
	for _, f := range []string{"index.jsonl", "pending.json", archiveMade} {
		s.cleanTemps(archiveDir, durable.TempPrefix(f))
	}
}

// removePending removes archive/pending.json durably: the archive it named is whole or undone.
func (s *Store) removePending() error {
	if err := s.fs.Remove(pendingArchive); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.writeErr(pendingArchive, err)
	}
	return s.writeErr(pendingArchive, s.fs.SyncDir(archiveDir))
}

// undoArchive undoes the archive p names, cut short before its commit point: it removes dir,
// its directory, and then the marker, durably. dir is removed only when the marker proves
// Cairn made it and it holds nothing but ours (the files the archive writes there, temp files);
// otherwise it is left, with a notice.
func (s *Store) undoArchive(p pending, dir string, ours ...string) (*Notice, error) {
	if p.Made == "" {
		if there, err := s.present(dir); err != nil || !there {
			return nil, cmp.Or(err, s.removePending())
		}
		return s.leavePending(p, dir, "the marker that named it was written by an earlier Cairn, which did not record whether it made the directory")
	}
	names, err := s.fs.ReadDirNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.removePending()
	}
	if err != nil {
		return nil, s.writeErr(dir, err)
	}
	if slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(ours, n) && !strings.HasPrefix(n, ".tmp-") }) {
		return s.leavePending(p, dir, "it holds files the archive did not write")
	}
	if err := s.fs.RemoveAll(dir); err != nil {
		return nil, s.writeErr(dir, err)
	}
	if err := s.fs.SyncDir(archiveDir); err != nil {
		return nil, s.writeErr(archiveDir, err)
	}
	return nil, s.removePending()
}

// leavePending ends the archive p names, cut short, without removing its directory dir, which
// is not known to be Cairn's alone (why says how), and says so in a notice.
func (s *Store) leavePending(p pending, dir, why string) (*Notice, error) {
	if err := s.removePending(); err != nil {
		return nil, err
	}
	return &Notice{Kind: "archive-left", Path: dir, Message: fmt.Sprintf("an archive of workflow %s was cut short and undone; %s, which it named, was left as it is because %s: the workflow is as it was, and the directory can be removed if it is not yours", p.WorkflowID, dir, why)}, nil
}

// parseArchiveDir reads the time from an archive directory name; ok is false for anything
// else found in archive/.
func parseArchiveDir(name string) (id string, at time.Time, ok bool) {
	n := len(archiveStamp)
	rest, _ := archiveSeq(name)
	if len(rest) < n+2 || rest[len(rest)-n-1] != '-' {
		return "", time.Time{}, false
	}
	at, err := time.Parse(archiveStamp, rest[len(rest)-n:])
	if err != nil {
		return "", time.Time{}, false
	}
	return strings.TrimPrefix(rest[:len(rest)-n-1], "conflict-"), at, true
}

// archiveSeq splits the "-2" style suffix newArchive gives archives made in the same
// millisecond off an archive directory's name: base and 2, or the name and 1 without one.
func archiveSeq(name string) (base string, n int) {
	if i := strings.LastIndexByte(name, '-'); i > 0 && len(name)-i <= 4 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i], n
		}
	}
	return name, 1
}

// prune keeps the newest s.o.retention archives and removes the others, never kept (the
// archive just made), a conflict archive a replay may be owed from (owedConflicts) nor the
// archive that records the migration of a seed file still in place (seedArchives), and
// returns the directories it removed. Newest means last in
// archive/index.jsonl, the order archives were made in, which no clock can reorder (the time
// in a directory's name is only the writer's clock). The index is reconciled with archive/
// first: a line whose directory is gone is dropped; an archive directory the index lacks is
// placed among the indexed ones by its time (placeUnlisted). A directory whose snapshot is not a record of the
// workflow its name carries is not an archive (archivedID; a half-made one is finishArchive's)
// and is left alone.
func (s *Store) prune(kept string) ([]string, error) {
	names, err := s.fs.ReadDirNames(archiveDir)
	if err != nil {
		return nil, s.writeErr(archiveDir, err)
	}
	index, damaged, err := s.readIndexLines()
	if errors.Is(err, durable.ErrTooLarge) {
		// No later archive can read it either: said, with the step that lets retention go on.
		return nil, fmt.Errorf("the order of the archives is not known, so none was removed: %w", s.indexErr(err))
	}
	if err != nil {
		// Without the index the order is unknown, and rewriting it from archive/ alone would
		// drop what only it knows (a half-pruned directory's line): retention waits for the
		// next archive.
		return nil, nil
	}
	order, missing, changed := s.reconcile(names, index)
	if len(missing) > 0 && damaged > 0 {
		// The damaged lines may be theirs, the newest archives' as well as any: taken for the
		// oldest, they would be the first removed. The index is left as it is.
		dirs := "directories"
		if len(missing) == 1 {
			dirs = "directory"
		}
		return nil, fmt.Errorf("%s in %s has %d damaged line%s, so the place in the order of archives of the %d archive %s it does not name is not known: none was removed",
			archiveIndex, s.dir, damaged, workflow.Plural(damaged), len(missing), dirs)
	}
	if len(missing) > 0 {
		order = placeUnlisted(order, missing)
		changed = true
	}
	var removed []string
	if extra := len(order) - s.o.retention; extra > 0 {
		owed := append(s.owedConflicts(order), s.seedArchives(order)...)
		var keep []ArchiveInfo
		for i, a := range order {
			if i >= extra || a.Dir == kept || slices.Contains(owed, a.Dir) {
				keep = append(keep, a)
				continue
			}
			if err := s.fs.RemoveAll(archiveDir + "/" + a.Dir); err != nil {
				// What is removed stays removed; the index keeps the rest, this one included
				// (perhaps half removed), so that the next prune finishes it.
				_ = s.writeIndex(append(keep, order[i:]...))
				return removed, s.writeErr(archiveDir+"/"+a.Dir, err)
			}
			removed = append(removed, a.Dir)
		}
		order, changed = keep, true
	}
	doc, short := indexDoc(order)
	if !changed && !short {
		return removed, nil
	}
	return removed, s.writeErr(archiveIndex, durable.WriteFile(s.fs, archiveIndex, doc, 0o600))
}

// placeUnlisted places the archives the index does not name (missing, oldest first) among
// those it names (order): each after the last named one made before it by the times they
// carry, so that an index put back from a backup does not have retention take the archives
// made since for the oldest. Nothing better is known of their place; one of the same
// millisecond as a named one goes before it.
func placeUnlisted(order, missing []ArchiveInfo) []ArchiveInfo {
	// earliest[i] is the earliest time of order[i:]: the last named archive made before t is
	// the last i with earliest[i] before t, and both go up, so one pass places them all.
	earliest := make([]time.Time, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		earliest[i] = order[i].At.Truncate(time.Millisecond)
		if i+1 < len(order) && earliest[i+1].Before(earliest[i]) {
			earliest[i] = earliest[i+1]
		}
	}
	out := make([]ArchiveInfo, 0, len(order)+len(missing))
	next := 0 // the first of order not yet in out
	for _, m := range missing {
		at := m.At.Truncate(time.Millisecond)
		after := next
		for after < len(order) && earliest[after].Before(at) {
			after++
		}
		out = append(append(out, order[next:after]...), m)
		next = after
	}
	return append(out, order[next:]...)
}

// reconcile reads the index's archives (index) against the names under archive/ (names):
// order is the index's archives whose directories are there, a line whose directory is gone
// pointed at an unnamed one of its workflow when there is exactly one (a copied project, a
// hand-made fix), and changed says it differs from the index; missing are the other archive
// directories no line names, oldest first by their names. Only an archive (archivedID) is
// missing: a line pointed at any other directory would list it and let retention remove what
// it holds.
func (s *Store) reconcile(names []string, index []ArchiveInfo) (order, missing []ArchiveInfo, changed bool) {
	onDisk := map[string]bool{}
	for _, n := range names {
		if _, _, ok := parseArchiveDir(n); ok {
			onDisk[n] = true
		}
	}
	listed := map[string]bool{}
	for _, a := range index {
		listed[a.Dir] = true
	}
	unlisted := map[string][]string{}
	ids := map[string]string{} // an unlisted archive's workflow id
	for n := range onDisk {
		if listed[n] {
			continue
		}
		if id := s.archivedID(n); id != "" {
			ids[n] = id
			unlisted[id] = append(unlisted[id], n)
		}
	}
	inIndex := map[string]bool{}
	for _, a := range index {
		if !onDisk[a.Dir] {
			changed = true
			c := unlisted[a.WorkflowID]
			if len(c) != 1 || inIndex[c[0]] {
				continue
			}
			a.Dir = c[0]
		}
		if inIndex[a.Dir] {
			changed = true
			continue
		}
		inIndex[a.Dir] = true
		order = append(order, a)
	}
	for n := range onDisk {
		if inIndex[n] || !slices.Contains(unlisted[ids[n]], n) {
			continue
		}
		a := ArchiveInfo{Dir: n, WorkflowID: ids[n], Reason: "unknown"}
		_, a.At, _ = parseArchiveDir(n)
		if strings.HasPrefix(n, "conflict-"+a.WorkflowID+"-") {
			a.Reason = "conflict"
		}
		// Its id (checked against its snapshot) and time (its name's) stand: an archive.json
		// copied from another archive would make it that one's, placed by that one's time.
		if m, ok := s.readArchiveInfo(archiveDir + "/" + n); ok && m.Reason != "" && m.WorkflowID == a.WorkflowID {
			if !m.At.Truncate(time.Millisecond).Equal(a.At) {
				m.At = a.At
			}
			a = m
			a.Dir = n
		}
		missing = append(missing, a)
	}
	// Nothing better is known of their order than the stamps in their names, and within one
	// millisecond their suffixes (-10 after -9). At is the name's stamp or, from archive.json,
	// finer: cut to the name's millisecond, so the two never disagree.
	slices.SortFunc(missing, func(a, b ArchiveInfo) int {
		abase, an := archiveSeq(a.Dir)
		bbase, bn := archiveSeq(b.Dir)
		return cmp.Or(a.At.Truncate(time.Millisecond).Compare(b.At.Truncate(time.Millisecond)),
			strings.Compare(abase, bbase), cmp.Compare(an, bn), strings.Compare(a.Dir, b.Dir))
	})
	return order, missing, changed
}

// UnlistedArchives returns the archive directories archive/index.jsonl does not name (an
// index lost, emptied or damaged, an archive whose line is not written yet), newest first,
// which retention places among the indexed ones by their times. It lists archive/: for the
// commands a person runs, never a hook's path.
func (s *Store) UnlistedArchives() ([]ArchiveInfo, error) {
	index, _, err := s.readIndexLines()
	if err != nil {
		return nil, s.indexErr(err)
	}
	return s.archivesNotIn(index)
}

// ArchiveDirs returns every archive directory under archive/, newest first by the times in
// their names, read from the directories alone: for a listing when archive/index.jsonl
// cannot be read.
func (s *Store) ArchiveDirs() ([]ArchiveInfo, error) { return s.archivesNotIn(nil) }

// archivesNotIn returns the archive directories index does not name, newest first.
func (s *Store) archivesNotIn(index []ArchiveInfo) ([]ArchiveInfo, error) {
	names, err := s.fs.ReadDirNames(archiveDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, s.writeErr(archiveDir, err)
	}
	_, missing, _ := s.reconcile(names, index)
	slices.Reverse(missing)
	return missing, nil
}

// archivedID is the workflow id of the archive in directory n under archive/, which the index
// may not name: its snapshot's, when n's name carries it (an id that begins with "conflict-"
// reads, in the name, as a conflict archive of the rest). "" when n is no archive: anything
// else there (a directory an undone archive left because it held another's files, a half-made
// one) is not retention's to list or remove.
func (s *Store) archivedID(n string) string {
	a := archiveID(n)
	if a == "" {
		return ""
	}
	data, err := durable.ReadFile(s.fs, archiveDir+"/"+n+"/"+WorkflowFile, strictjson.MaxSize)
	if err != nil {
		return ""
	}
	m, err := readMeta(data)
	if err == nil && (m.id == a || m.id == "conflict-"+a && strings.HasPrefix(n, m.id+"-")) {
		return m.id
	}
	return ""
}

// archiveID is the workflow id an archive directory's name carries.
func archiveID(n string) string {
	id, _, _ := parseArchiveDir(n)
	return id
}

// ArchiveDirOf returns the name of a directory under archive/ that holds an archive of
// workflow id (its snapshot is a record of id), or "" when none does. It lists archive/
// rather than reading the index, so an archive whose line the index lost, or an index too
// large to read, does not hide it: what a start checks before it gives id to a new workflow.
func (s *Store) ArchiveDirOf(id string) (string, error) {
	names, err := s.fs.ReadDirNames(archiveDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", s.writeErr(archiveDir, err)
	}
	slices.Sort(names)
	for _, n := range slices.Backward(names) {
		if a := archiveID(n); (a == id || "conflict-"+a == id) && s.archivedID(n) == id {
			return n, nil
		}
	}
	return "", nil
}

// ReplayIntent is the document remotesync (remotesync.IntentDoc) keeps the replay a sync cut
// short still owes in, named here because retention reads it: workflow_id's copy at revision mine lost a race, and lost is the SHA-256 of
// that copy's record without insignificant space.
const ReplayIntent = "remote-replay"

// owedConflicts returns the directories of the active workflow's conflict archives in order
// (oldest first) that a replay may still be owed from, so that retention does not remove them:
// the newest one (a sync cut short before its replay replays it at the next sync), and the one
// remotesync's intent names by the sum of its record, which a later conflict archive of the
// same workflow (a seed file's second copy) would otherwise push out; all of them while the
// intent is there but cannot be read.
func (s *Store) owedConflicts(order []ArchiveInfo) []string {
	data, err := durable.ReadFile(s.fs, WorkflowFile, strictjson.MaxSize)
	if err != nil {
		return nil
	}
	m, err := readMeta(data)
	if err != nil {
		return nil
	}
	var owed []string
	for i := len(order) - 1; i >= 0; i-- {
		if order[i].WorkflowID == m.id && order[i].Reason == "conflict" {
			owed = append(owed, order[i].Dir)
			break
		}
	}
	var in struct {
		Workflow string `json:"workflow_id"`
		Mine     int64  `json:"mine"`
		Lost     string `json:"lost"`
	}
	doc, err := s.get(documents, ReplayIntent)
	unknown := err != nil && !errors.Is(err, ErrNotFound)
	if !unknown && (err != nil || json.Unmarshal(doc, &in) != nil || in.Workflow != m.id || in.Lost == "") {
		return owed
	}
	for _, a := range order {
		if a.WorkflowID != m.id || a.Reason != "conflict" || slices.Contains(owed, a.Dir) {
			continue
		}
		if unknown {
			// The intent is there but cannot be read: the archive it owes is not known, so
			// none of the candidates goes until it can be.
			owed = append(owed, a.Dir)
			continue
		}
		if a.Revision != in.Mine {
			continue
		}
		rec, err := durable.ReadFile(s.fs, archiveDir+"/"+a.Dir+"/"+WorkflowFile, strictjson.MaxSize)
		var c bytes.Buffer
		if err != nil || json.Compact(&c, rec) != nil {
			continue
		}
		if sum := sha256.Sum256(c.Bytes()); hex.EncodeToString(sum[:]) == in.Lost {
			owed = append(owed, a.Dir)
		}
	}
	return owed
}

// maxIndex is the most of archive/index.jsonl that is read whole (retention, a full listing).
var maxIndex = 16 << 20

// writeIndex writes order as archive/index.jsonl (indexDoc).
func (s *Store) writeIndex(order []ArchiveInfo) error {
	doc, _ := indexDoc(order)
	return s.writeErr(archiveIndex, durable.WriteFile(s.fs, archiveIndex, doc, 0o600))
}

// indexDoc is archive/index.jsonl holding order. Past half of maxIndex, the oldest lines
// leave out the summary a listing shows (type, phase, context, update time), which the
// archive's own record keeps and a listing then reads, until it fits (short says some did):
// every line stays, and the index retention writes stays one it can read, however many
// archives it keeps.
func indexDoc(order []ArchiveInfo) (doc []byte, short bool) {
	lines := make([][]byte, len(order))
	total := 0
	for i, a := range order {
		lines[i], _ = json.Marshal(a)
		total += len(lines[i]) + 1
	}
	for i := 0; i < len(order) && total > maxIndex/2; i++ {
		a := order[i]
		if a.Type == "" {
			continue // no summary to leave out
		}
		a.Type, a.Phase, a.Context, a.UpdatedAt = "", "", "", time.Time{}
		line, _ := json.Marshal(a)
		total += len(line) - len(lines[i])
		lines[i], short = line, true
	}
	doc = make([]byte, 0, total)
	for _, l := range lines {
		doc = append(append(doc, l...), '\n')
	}
	return doc, short
}

// readIndex reads archive/index.jsonl and says whether it could be read (a missing one is
// empty).
func (s *Store) readIndex() ([]ArchiveInfo, error) {
	out, _, err := s.readIndexLines()
	return out, err
}

// readIndexLines is readIndex, also counting the whole lines that name no archive (damaged).
func (s *Store) readIndexLines() (out []ArchiveInfo, damaged int, err error) {
	data, err := durable.ReadFile(s.fs, archiveIndex, int64(maxIndex))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	lines := ParseLines(data, MaxLogLine)
	damaged = lines.Invalid
	for _, l := range lines.Lines {
		var a ArchiveInfo
		if json.Unmarshal(l, &a) == nil && a.Dir != "" {
			out = append(out, a)
		} else {
			damaged++
		}
	}
	return out, damaged, nil
}

// ListArchives returns the archives, newest first, from archive/index.jsonl: it never lists
// the archive directory, so its cost does not grow with stray directories there. An index
// that cannot be read is an error, not an empty list.
func (s *Store) ListArchives() ([]ArchiveInfo, error) {
	out, err := s.readIndex()
	if err != nil {
		return nil, s.indexErr(err)
	}
	// Newest first in the order archives were made: the index's, which no clock reorders.
	slices.Reverse(out)
	return out, nil
}

// IndexTooLargeStep ends what is said of an archive index too large to read: the model's step
// (what is there may be someone's), which the CLI replaces with the person's.
const IndexTooLargeStep = "ask the user to move it out of the state directory (it may be someone's); the next archive then makes a new index from the archive directories"

func (s *Store) indexErr(err error) error {
	if s.dirInTheWay(archiveDir) != nil {
		return s.readErr("the archive index", archiveIndex, err) // archive/ is what is in the way
	}
	if errors.Is(err, durable.ErrTooLarge) {
		return fmt.Errorf("%s is too large to read (%w) and was left as it is; it is %s: %s", archiveIndex, err, filepath.Join(s.dir, filepath.FromSlash(archiveIndex)), IndexTooLargeStep)
	}
	return fmt.Errorf("reading the archive index in %s: %w", s.dir, err)
}

// RecentArchives returns the newest n archives (all when n <= 0), newest first, and whether
// the index holds older ones. It reads the index backwards from its end, only as far as n
// lines, so a listing costs the same however many archives there are.
func (s *Store) RecentArchives(n int) ([]ArchiveInfo, bool, error) {
	out, more, _, err := s.RecentArchivesSkipped(n)
	return out, more, err
}

// RecentArchivesSkipped is RecentArchives, also counting the whole lines read that name no
// archive (a damaged or foreign line in place of an entry), which the list leaves out.
func (s *Store) RecentArchivesSkipped(n int) (out []ArchiveInfo, more bool, skipped int, err error) {
	if n <= 0 {
		out, skipped, err = s.readIndexLines()
		if err != nil {
			return nil, false, 0, s.indexErr(err)
		}
		slices.Reverse(out) // newest first, as ListArchives
		return out, false, skipped, nil
	}
	err = s.readBack(archiveIndex, 32<<10, nil, func(body []byte, whole bool) bool {
		// A torn last line is no archive: readBack gives whole lines only.
		out, skipped = out[:0], 0
		for len(body) > 0 && len(out) < n {
			i := bytes.LastIndexByte(body, '\n')
			var a ArchiveInfo
			if line := body[i+1:]; json.Unmarshal(line, &a) == nil && a.Dir != "" {
				out = append(out, a)
			} else if len(bytes.TrimSpace(line)) > 0 {
				skipped++
			}
			body = body[:max(i, 0)]
		}
		more = len(body) > 0 || !whole
		return len(out) == n
	})
	if err != nil {
		return nil, false, 0, s.indexErr(err)
	}
	return out, more, skipped, nil
}

// ReadArchive returns an archived workflow's snapshot and verified journal (the journal is
// empty when the archive has none). dir is an ArchiveInfo.Dir.
func (s *Store) ReadArchive(dir string) ([]byte, Journal, error) {
	data, err := s.ReadArchiveRecord(dir)
	if err != nil {
		return nil, Journal{}, err
	}
	j, err := s.ReadArchiveJournal(dir)
	return data, j, err
}

// ReadArchiveRecord returns an archived workflow's snapshot alone: ReadArchive without the
// journal, which a long workflow's makes many times the record's size.
func (s *Store) ReadArchiveRecord(dir string) ([]byte, error) {
	if !archiveDirName(dir) {
		return nil, &NotFoundError{What: "archive", Name: dir}
	}
	file := archiveDir + "/" + dir + "/" + WorkflowFile
	data, err := durable.ReadFile(s.fs, file, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{What: "archive", Name: dir}
	}
	if err != nil {
		return nil, s.readErr("archive "+dir, file, err)
	}
	return data, nil
}

// archiveDirName says whether dir names an archive directory (an ArchiveInfo.Dir), not a path
// out of the archive.
func archiveDirName(dir string) bool {
	_, _, ok := parseArchiveDir(dir)
	return ok && !strings.ContainsAny(dir, `/\`) && !strings.Contains(dir, "..")
}

// ReadArchiveLast returns the last verified line of an archived workflow's journal, with its
// event and without its state (nil when the journal holds none), reading backwards from the
// journal's end: what a retried archive checks, at the cost of that line rather than of a long
// workflow's whole journal (a compaction leaves the newest lines in the journal file, not in
// its segments). dir is an ArchiveInfo.Dir.
func (s *Store) ReadArchiveLast(dir string) (*Record, error) {
	if !archiveDirName(dir) {
		return nil, &NotFoundError{What: "archive", Name: dir}
	}
	file := archiveDir + "/" + dir + "/journal.jsonl"
	recs, err := s.tailRecords(file, func(Record) bool { return true }, false, true, nil)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return &recs[len(recs)-1], nil
}

// ReadArchiveJournal returns an archived workflow's verified journal, its sealed segments
// with it (empty when the archive has none). dir is an ArchiveInfo.Dir, whose record
// ReadArchiveRecord read.
func (s *Store) ReadArchiveJournal(dir string) (Journal, error) {
	return s.readArchiveJournal(dir, true)
}

// ReadArchiveEvents is ReadArchiveJournal without the states, as ReadJournalEvents.
func (s *Store) ReadArchiveEvents(dir string) (Journal, error) {
	return s.readArchiveJournal(dir, false)
}

func (s *Store) readArchiveJournal(dir string, states bool) (Journal, error) {
	j, err := s.readJournalFile(archiveDir+"/"+dir+"/journal.jsonl", dir, states)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return j, err
	}
	return j, nil
}

// EachArchiveState is Journal.EachState over an archived workflow's journal (dir is an
// ArchiveInfo.Dir), read one line at a time: a long journal is not held whole.
func (s *Store) EachArchiveState(dir string, after int64, fn func(Record) error) error {
	if !archiveDirName(dir) {
		return &NotFoundError{What: "archive", Name: dir}
	}
	return eachSince(func(fn func(Record) error) error {
		return s.journalLines(archiveDir+"/"+dir+"/journal.jsonl", dir, after, fn)
	}, after, anyRecord, fn)
}
