package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Where the seeds kept their state, relative to the project root.
const (
	seed001File   = ".claude/workflow-state.json"
	seed002Phase  = "memory/state/phase.json"
	seed002Exec   = "memory/state/execution.json"
	seed004Dir    = ".workflow-state"
	seed004Suffix = "-state.json"
)

// findLegacy looks, with a few lstats and no reads, for a seed's state file in the project: a
// regular file first, else whatever else is in the place of one (a symlink, a FIFO), so the
// read that follows can say why it is not migrated. Names in skip are passed over.
func (s *Store) findLegacy(skip ...string) (root, name string, ok bool) {
	root = s.o.projectRoot
	if root == "" {
		return "", "", false
	}
	odd := ""
	for _, rel := range []string{seed001File, seed002Phase} {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case err != nil || fi.IsDir() || slices.Contains(skip, rel):
		case fi.Mode().IsRegular():
			return root, rel, true
		case odd == "":
			odd = rel
		}
	}
	first, firstOdd := "", ""
	if entries, err := durable.ReadDirPath(filepath.Join(root, seed004Dir)); err == nil {
		for _, e := range entries {
			n := e.Name()
			if !strings.HasSuffix(n, seed004Suffix) || e.IsDir() ||
				(len(skip) > 0 && slices.Contains(skip, seed004Dir+"/"+n)) {
				continue
			}
			if e.Type().IsRegular() {
				if first == "" || n < first {
					first = n
				}
			} else if firstOdd == "" || n < firstOdd {
				firstOdd = n
			}
		}
	}
	switch {
	case first != "":
		return root, seed004Dir + "/" + first, true
	case odd != "":
		return root, odd, true
	case firstOdd != "":
		return root, seed004Dir + "/" + firstOdd, true
	}
	return "", "", false
}

// migrateLegacy converts a seed's state file into the active workflow (journaled as a
// "migrated" event) and then renames the original to its .v<old>.json.bak name beside it, so
// it is kept but not migrated twice. A file that is not a format Cairn migrates is left alone.
func (s *Store) migrateLegacy(w Workflow, root, name string) (Workflow, tailState, error) {
	l, ok := s.firstLegacy(&w, root, name, "was not migrated", "it was left as it is", true)
	if !ok {
		return w, tailState{}, &NotFoundError{What: "workflow"}
	}
	name = l.Name
	out, err := s.commitLocked(Workflow{}, tailState{}, l.Record, l.Source, Event{Kind: "migrated", Detail: "from " + l.From.String() + " " + name})
	if err != nil {
		return w, tailState{}, fmt.Errorf("migrating %s: %w", name, err)
	}
	msg := fmt.Sprintf("%s, "+older+", was migrated to this Cairn's format; the original is kept as ", name)
	if backup, err := s.RetireLegacy(l); err == nil {
		msg += backup
	} else {
		// The migration is committed: a directory that cannot be written (a read-only mount)
		// leaves the original in place, where FindLegacy knows it for this workflow's origin.
		msg += fmt.Sprintf("it is, in place, since %v", err)
	}
	out.Notices = append(w.Notices, append(out.Notices, Notice{Kind: "migrated", Path: name, Revision: out.Revision, Message: msg})...)
	return out.Workflow, tailState{seq: out.Seq, rev: out.Revision}, nil
}

// legacyPending reports, for a store opened WithNoCreate, a seed's state file that a creating
// open would migrate, and leaves it as it is: such a store may have nowhere to put the
// migrated workflow (a missing state directory reads from memory), and renaming the original
// then would lose the workflow.
func (s *Store) legacyPending(w Workflow, root, name string) (Workflow, tailState, error) {
	if l, ok := s.firstLegacy(&w, root, name, "cannot be migrated", "it is left as it is", false); ok {
		w.Notices = append(w.Notices, Notice{Kind: "legacy-pending", Path: l.Name,
			Message: fmt.Sprintf("%s, "+older+", holds a workflow not yet migrated; the next session start, or the next command that changes the workflow, migrates it", l.Name)})
	}
	return w, tailState{}, &NotFoundError{What: "workflow"}
}

// firstLegacy reads the seed's state file name and, when it cannot be migrated, the ones
// findLegacy finds after it, until one can: each stands alone, and one that cannot be
// migrated, said in a legacy-skipped notice added to w, keeps no other from migrating. One
// that is the origin of a workflow on record, left in place, is passed over; with retire (the
// caller holds the workflow lock) its rename is finished, whether or not a workflow is active.
func (s *Store) firstLegacy(w *Workflow, root, name, not, left string, retire bool) (Legacy, bool) {
	var seen []string
	for {
		l, err := s.readLegacy(root, name, s.o.now())
		if err == nil {
			rev, done := s.migratedFrom(root, l)
			if !done {
				return l, true
			}
			if retire {
				if n := s.retireSettled(l, rev); n != nil {
					w.Notices = append(w.Notices, *n)
				}
			}
			err = errNoLegacy // its workflow's own origin, left in place: passed over
		}
		if !errors.Is(err, errNoLegacy) {
			w.Notices = append(w.Notices, Notice{Kind: "legacy-skipped", Path: name,
				Message: fmt.Sprintf("%s in the project %s (%s); %s%s", name, not, err, left, legacyNext(err))})
		}
		seen = append(seen, name)
		var ok bool
		if root, name, ok = s.findLegacy(seen...); !ok {
			return Legacy{}, false
		}
	}
}

// legacyNext is the next step for a seed's state file that is not migrated, after why (err):
// one that changes nothing Cairn holds. A newer Cairn's record says its own.
func legacyNext(err error) string {
	switch {
	case errors.Is(err, migrate.ErrNewer):
		return ""
	case errors.Is(err, errNotFile):
		return "; to migrate it, put a regular copy of its own in its place and start a session again"
	case errors.Is(err, errLegacyTooLarge):
		return "; to migrate it, bring it under the limit and start a session again"
	case errors.Is(err, migrate.ErrForeign):
		return "; Cairn takes it for another tool's file and never reads or changes it: leave it where it is"
	case errors.Is(err, migrate.ErrLimit):
		return "; to migrate it, make it smaller or less deeply nested and start a session again"
	case errors.Is(err, errNoWorkflow):
		return "; there is no workflow in it to migrate"
	case errors.Is(err, errLegacyUnreadable):
		return "; to migrate it, make it readable and start a session again"
	case errors.Is(err, migrate.ErrMalformed), errors.Is(err, migrate.ErrUnknownFormat):
		return "; to migrate it, correct it to strict JSON in a format Cairn knows and start a session again"
	}
	// Strict JSON in a format Cairn knows, lacking something the record needs.
	return "; to migrate it, correct in it what that says and start a session again"
}

// legacyReadErr says why a seed's state file found in the project cannot be read. Only a file
// gone since it was found (another process migrated it) is errNoLegacy.
func legacyReadErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNoLegacy
	case errors.Is(err, durable.ErrNotRegular):
		return fmt.Errorf("it is not a regular file but a symlink, FIFO or device: %w", errNotFile)
	case errors.Is(err, durable.ErrHardLinked):
		return fmt.Errorf("it has more than one hard link: %w", errNotFile)
	case errors.Is(err, durable.ErrTooLarge):
		return errLegacyTooLarge
	}
	return fmt.Errorf("%w: %w", errLegacyUnreadable, err)
}

var (
	errNotFile          = errors.New("only a regular file of its own is read in place of a state file")
	errLegacyTooLarge   = errors.New("it is over the 1 MiB limit of a state file")
	errLegacyUnreadable = errors.New("it could not be read")
	errNoWorkflow       = errors.New("it holds no workflow")
)

// migrateExtra is what a migration of the document in file name needs beyond it.
func (s *Store) migrateExtra(name string) migrate.Extra {
	return migrate.Extra{Name: name, TTL: s.o.typeTTL}
}

// errNoLegacy: the file could not be read, so there is nothing to report about it.
var errNoLegacy = errors.New("no readable legacy file")

// readLegacy reads a seed's state file (with seed 002's execution.json) and migrates it in
// memory as at now. An error other than errNoLegacy says why the file is not a workflow Cairn
// migrates.
func (s *Store) readLegacy(root, name string, now time.Time) (Legacy, error) {
	pd, err := durable.OpenDir(root)
	if err != nil {
		return Legacy{}, errNoLegacy
	}
	defer pd.Close()
	data, err := durable.ReadFile(pd, name, strictjson.MaxSize)
	if err != nil {
		return Legacy{}, legacyReadErr(err)
	}
	extra, source := s.migrateExtra(name), data
	if name == seed002Phase {
		exec, err := durable.ReadFile(pd, seed002Exec, strictjson.MaxSize)
		switch {
		case err == nil:
			extra.Execution = exec
			source = slices.Concat([]byte("["), data, []byte(","), exec, []byte("]"))
		case !errors.Is(err, fs.ErrNotExist):
			// Migrating without it would start the workflow without its tasks.
			return Legacy{}, fmt.Errorf("%s beside it: %w", seed002Exec, legacyReadErr(err))
		}
	}
	res, err := migrate.Migrate(data, extra, now.UTC())
	if err != nil {
		return Legacy{}, err
	}
	if !res.From.NeedsMigration() || res.Record == nil {
		return Legacy{}, errNoWorkflow
	}
	rec, err := json.Marshal(res.Record)
	if err != nil {
		return Legacy{}, err
	}
	return Legacy{Name: name, From: res.From, Record: rec, Backup: res.Backup, Source: source}, nil
}

// maybeNewer reports whether err, a snapshot's, is of a document that holds no workflow record
// and has a version above the ones this Cairn reads: another tool's file, or a newer Cairn's
// that moved its fields. Neither is damage to repair, nor Cairn's to move.
func maybeNewer(err error) bool {
	fe, ok := errors.AsType[*migrate.ForeignError](err)
	return ok && fe.Newer
}

// foreignSnapshot is the error for such a snapshot: it is left in place, and nothing starts
// over it.
func (s *Store) foreignSnapshot(err error) *UnreadableError {
	// The step is the person's (moveOutStep), which an adapter speaking to the model replaces.
	return s.unreadable(&inTheWayError{msg: fmt.Sprintf("the workflow snapshot %s in %s was left as it is: %v; another tool's file, or a newer Cairn's that this one cannot tell, is not Cairn's to move (once it is out of the way Cairn reads the workflow from its journal, if there is one)", WorkflowFile, s.dir, err), path: filepath.Join(s.dir, WorkflowFile), err: err})
}

// UnmigratableError is an older snapshot that could not be migrated, left as it is: a
// workflow on record all the same.
type UnmigratableError struct {
	ID  string // the snapshot's workflow_id, when it holds a valid one
	Err error  // says why and the step
}

func (e *UnmigratableError) Error() string { return e.Err.Error() }

func (e *UnmigratableError) Unwrap() error { return e.Err }

// unmigratable is the error for an older snapshot (data) that could not be migrated (err).
func (s *Store) unmigratable(data []byte, err error) error {
	var id string
	if m, jerr := strictjson.Object(data); jerr != nil || !metaValue(m["workflow_id"], &id) || ValidWorkflowID(id) != nil {
		id = ""
	}
	return &UnmigratableError{ID: id, Err: fmt.Errorf("the workflow snapshot in %s is in an older format that could not be migrated; it was left as it is: %w; to resume it, correct it by hand as that says, then %s", s.dir, err, CheckOnRecord)}
}

// CheckOnRecord ends the step for a snapshot left as it is: once it is moved or corrected,
// look at what is on record. It names the agent's tool, as the hook output and the MCP tools
// say it; the CLI puts its own command in its place (engine.CheckOnRecord).
const CheckOnRecord = workflow.CheckOnRecord

// migrateOwn converts an older record found in the state directory's own snapshot, keeping
// the original as workflow-state.v<old>.json.bak. data is a document readMeta found in an
// older format, which Migrate converts to a record or refuses with an error (FuzzMigrate).
func (s *Store) migrateOwn(w Workflow, data []byte) (Workflow, tailState, error) {
	res, err := migrate.Migrate(data, s.migrateExtra(WorkflowFile), s.o.now().UTC())
	if err != nil {
		return w, tailState{}, s.unmigratable(data, err)
	}
	backup, err := s.keepBackup(res.Backup, data)
	if we, ok := errors.AsType[*WriteError](err); ok && readOnlyErr(we) {
		out, err := ownInMemory(res, err)
		out.Notices = append(w.Notices, out.Notices...)
		return out, tailState{}, err
	}
	if err != nil {
		return w, tailState{}, err
	}
	id := res.Record.WorkflowID
	tail, err := s.journalTail(journalFile(id))
	if err != nil {
		return w, tailState{}, s.readErr("the journal of "+id, journalFile(id), err)
	}
	if tail != nil && tail.Revision >= res.Record.Revision {
		// A migration killed after its journal line, the commit point, and before its
		// snapshot replace: it is finished from the journal, not committed a second time.
		w.ID = id
		out, ts, err := s.rollForward(w, tail)
		if err == nil {
			out.Notices = append(out.Notices, Notice{Kind: "migrated", Path: WorkflowFile, Revision: out.Revision,
				Message: fmt.Sprintf("the migration of the workflow snapshot, "+older+", was cut short and has been finished from its journal; the original is kept as %s", backup)})
		}
		return out, ts, err
	}
	out, err := s.commitRecord(Workflow{}, tailState{}, res.Record, Event{Kind: "migrated", Detail: "from " + res.From.String()})
	if err != nil {
		return w, tailState{}, fmt.Errorf("migrating %s: %w", WorkflowFile, err)
	}
	out.Notices = append(out.Notices, Notice{Kind: "migrated", Path: WorkflowFile, Revision: out.Revision,
		Message: fmt.Sprintf("the workflow snapshot, "+older+", was migrated to this Cairn's format; the original is kept as %s", backup)})
	return out.Workflow, tailState{seq: out.Seq, rev: out.Revision}, nil
}

// older says where a migrated document came from in the notices' words: its format's name
// (seed001, schema1) is the journal's, which no reader of a notice can act on.
const older = "written by an older Cairn"

// readOnlyErr reports whether we is a write refused because the directory cannot be written,
// rather than one that failed (a full disk, an I/O error).
func readOnlyErr(we *WriteError) bool {
	return errors.Is(we.Err, syscall.EROFS) || errors.Is(we.Err, fs.ErrPermission)
}

// olderInMemory answers a read of the snapshot when the state directory cannot be written
// (why) and there is no journal: an older record, or with no snapshot a seed's state file, is
// migrated in memory, and nothing is written until a later read can. ok is false when there
// is neither.
func (s *Store) olderInMemory(why error) (w Workflow, ok bool, err error) {
	data, err := durable.ReadFile(s.fs, WorkflowFile, strictjson.MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return s.legacyInMemory(why)
	}
	if err != nil {
		return Workflow{}, false, nil
	}
	if _, err := readMeta(data); !errors.As(err, new(errNeedsMigration)) {
		return Workflow{}, false, nil
	}
	res, err := migrate.Migrate(data, s.migrateExtra(WorkflowFile), s.o.now().UTC())
	if err != nil {
		return Workflow{}, true, s.unmigratable(data, err)
	}
	w, err = ownInMemory(res, why)
	return w, true, err
}

// legacyInMemory is olderInMemory for a seed's state file, the first that reads (firstLegacy).
func (s *Store) legacyInMemory(why error) (w Workflow, ok bool, err error) {
	root, name, found := s.findLegacy()
	if !found {
		return Workflow{}, false, nil
	}
	l, found := s.firstLegacy(&w, root, name, "was not migrated", "it was left as it is", false)
	if !found {
		return w, true, &NotFoundError{What: "workflow"}
	}
	m, err := readMeta(l.Record)
	if err != nil {
		return w, true, err
	}
	w.Data, w.ID, w.Revision = l.Record, m.id, m.rev
	w.Notices = append(w.Notices, Notice{Kind: "legacy-pending", Path: l.Name, Revision: m.rev,
		Message: fmt.Sprintf("%s, "+older+", was migrated in memory only, and left as it is, since the state directory cannot be written (%v); make the state directory writable, and the next session start, or the next command that changes the workflow, migrates it and keeps the original as %s", l.Name, why, l.Backup)})
	return w, true, nil
}

// ownInMemory is the workflow an older snapshot migrates to (res), read but not written
// because the state directory cannot be written (why). res.Record is never nil: both callers
// pass the Migrate of a document readMeta found in an older format, which Migrate converts or
// refuses with an error.
func ownInMemory(res migrate.Result, why error) (Workflow, error) {
	data, err := json.Marshal(res.Record)
	if err != nil {
		return Workflow{}, err
	}
	return Workflow{Data: data, ID: res.Record.WorkflowID, Revision: res.Record.Revision, Notices: []Notice{{
		Kind: "legacy-pending", Path: WorkflowFile, Revision: res.Record.Revision,
		Message: fmt.Sprintf("the workflow snapshot, "+older+", was migrated in memory only, and left as it is, since the state directory cannot be written (%v); make the state directory writable, and the next command migrates it on disk and keeps the original as %s", why, res.Backup),
	}}}, nil
}

// keepBackup writes data, the original of a migration, under name or the first free name
// after it (backupFor), unless one of those already holds exactly data: a migration cut
// short and run again keeps the original once. A file made at the chosen name between the
// look and the write (by another tool or a person: the workflow lock keeps Cairn out) is
// never overwritten; the next name is tried.
func (s *Store) keepBackup(name string, data []byte) (string, error) {
	cand := name
	for i := 2; ; i++ {
		b, err := durable.ReadFile(s.fs, cand, int64(len(data)))
		if err == nil && bytes.Equal(b, data) {
			return cand, nil
		}
		if _, err := s.fs.Lstat(cand); err != nil {
			err := durable.WriteFileNoReplace(s.fs, cand, data, 0o600)
			if err == nil || durable.IsNotDurable(err) || !errors.Is(err, fs.ErrExist) {
				return cand, s.writeErr(cand, err)
			}
		}
		cand = backupFor(name, i)
	}
}

// backupFor is name with the counter i before ".json.bak": the next name tried when name, a
// backup's, is taken.
func backupFor(name string, i int) string {
	return strings.TrimSuffix(name, ".json.bak") + fmt.Sprintf("-%d.json.bak", i)
}

// moveToBackup renames from to name, or to the first name after it (backupFor) that is free
// at the moment of the rename: a backup is never overwritten, not even one made between
// Cairn's look and its rename. It returns the name used.
func moveToBackup(fsys durable.FS, from, name string) (string, error) {
	cand := name
	for i := 2; ; i++ {
		err := durable.RenameNoReplace(fsys, from, cand)
		if err == nil || durable.IsNotDurable(err) || !errors.Is(err, fs.ErrExist) {
			return cand, err
		}
		cand = backupFor(name, i)
	}
}

// Legacy is a seed's state file found in the project while Cairn already has an active
// workflow: a second copy competing for the same slot (seed 004's two sessions resuming one
// workflow). Record is its migrated schema-2.0 record; nothing has been written.
type Legacy struct {
	Name   string // relative to the project root
	From   migrate.Format
	Record []byte
	Backup string // the .v<old>.json.bak name it is renamed to once settled
	// Source is the file (with seed 002's execution.json, in a list): text of a secret's shape
	// it holds does not refuse the record (checkChange).
	Source []byte
}

// FindLegacy reports a seed's state file that the store left alone because a workflow is
// already active. Cheap when there is none: a few lstats. A file that is instead the origin of
// a workflow migrated from it (the active one, or one archived since) still in place has its
// rename finished, and finished, not nil then, says so for the user. Either that or a file
// that holds no workflow is passed over for the next one (seed 004 keeps one per session), so
// none hides a second copy until a later start.
func (s *Store) FindLegacy() (l Legacy, finished *Notice, found bool) {
	var seen []string
	for {
		root, name, ok := s.findLegacy(seen...)
		if !ok {
			return Legacy{}, finished, false
		}
		seen = append(seen, name)
		l, err := s.readLegacy(root, name, s.o.now())
		if err != nil {
			continue
		}
		if _, ok := s.migratedFrom(root, l); !ok {
			return l, finished, true
		}
		if n := s.finishRetire(root, l); n != nil {
			finished = n
		}
	}
}

// finishRetire renames l, the seed file a workflow was migrated from, found still in place: a
// migration killed after its commit and before this rename, or one still between the two,
// which holds the workflow lock until its own rename is done (and says so itself), or one
// whose project directory could not be written then. If it cannot be done now, the next
// start tries again. The notice is for a rename it finished.
func (s *Store) finishRetire(root string, l Legacy) *Notice {
	unlock, err := s.lock("workflow")
	if err != nil {
		return nil
	}
	defer unlock()
	if rev, ok := s.migratedFrom(root, l); ok {
		return s.retireSettled(l, rev)
	}
	return nil
}

// retireSettled renames l, the seed file the workflow at revision rev was migrated from, under
// the workflow lock; the notice is for a rename done (the migration was not redone).
func (s *Store) retireSettled(l Legacy, rev int64) *Notice {
	backup, err := s.RetireLegacy(l)
	if err != nil {
		return nil
	}
	return &Notice{Kind: "migrated", Path: l.Name, Revision: rev,
		Message: fmt.Sprintf("%s, "+older+", was still in place after its migration; it is now kept as %s; the workflow is unchanged", l.Name, backup)}
}

// migratedFrom reports whether the workflow l's record names was migrated from exactly the
// seed file l as it is on disk now, and at which revision: its journal, the active one or an
// archive's, holds the migration of l.Name (or a second copy of the workflow settled from it
// was archived or put in the active slot), and migrating the file again as at that
// migration's own time (legacy.migrated_at) gives the same record byte for byte. A seed file
// left in place (its directory could not be written) is then never migrated a second time,
// bringing back a workflow that was archived since.
func (s *Store) migratedFrom(root string, l Legacy) (int64, bool) {
	m, err := readMeta(l.Record)
	if err != nil {
		return 0, false
	}
	if ValidWorkflowID(m.id) == nil {
		if rev, ok := s.holdsMigration(root, journalFile(m.id), m.id, l); ok {
			return rev, true
		}
	}
	archives, _ := s.ListArchives()
	_, rev, ok := s.migrationArchive(root, l, m.id, archives)
	return rev, ok
}

// migrationArchive returns the first of archives whose journal holds the migration of exactly
// the seed file l (or that is that file archived as a second copy), of workflow id, and that migration's revision (see migratedFrom).
func (s *Store) migrationArchive(root string, l Legacy, id string, archives []ArchiveInfo) (dir string, rev int64, ok bool) {
	for _, a := range archives {
		if a.WorkflowID != id {
			continue
		}
		if !archiveDirName(a.Dir) {
			continue
		}
		if rev, ok := s.holdsMigration(root, archiveDir+"/"+a.Dir+"/journal.jsonl", a.Dir, l); ok {
			return a.Dir, rev, true
		}
		// A second copy archived as it was (ArchiveRecord) has no journal: its record is one.
		if rec, err := s.ReadArchiveRecord(a.Dir); err == nil && a.Reason == "conflict" && s.migrationOf(root, l, rec) {
			return a.Dir, a.Revision, true
		}
	}
	return "", 0, false
}

// seedArchives returns the directories, among order, of the archives that are all that records
// the migration of a seed file still in place (its directory could not be written): without
// them, the next read would migrate that file again and bring its ended workflow back.
func (s *Store) seedArchives(order []ArchiveInfo) []string {
	var kept, seen []string
	for {
		root, name, ok := s.findLegacy(seen...)
		if !ok {
			return kept
		}
		seen = append(seen, name)
		l, err := s.readLegacy(root, name, s.o.now())
		if err != nil {
			continue
		}
		m, err := readMeta(l.Record)
		if err != nil {
			continue
		}
		if dir, _, ok := s.migrationArchive(root, l, m.id, order); ok {
			kept = append(kept, dir)
		}
	}
}

// holdsMigration reports whether the journal file of id (with the segments sealed from it)
// holds the migration of exactly the seed file l (a revision of kind migrated: a seed's
// migration, or a second copy's put in the active slot), and its revision (see migratedFrom).
// It reads the journal forward and stops there: a migration begins its journal, so a long one
// costs its first line.
func (s *Store) holdsMigration(root, file, id string, l Legacy) (int64, bool) {
	var rev int64
	found := errors.New("found")
	err := s.journalLines(file, id, math.MinInt64, func(r Record) error {
		if r.Event.Kind == "migrated" && s.migrationOf(root, l, r.Snapshot) {
			rev = r.Revision
			return found
		}
		return nil
	})
	return rev, err == found
}

// migrationOf reports whether rec is the seed file l migrated: migrating it again as at rec's
// own time (legacy.migrated_at) gives rec byte for byte.
func (s *Store) migrationOf(root string, l Legacy, rec []byte) bool {
	var m struct {
		Legacy struct {
			MigratedAt time.Time `json:"migrated_at"`
		} `json:"legacy"`
	}
	if rec == nil || json.Unmarshal(rec, &m) != nil || m.Legacy.MigratedAt.IsZero() {
		return false
	}
	again, err := s.readLegacy(root, l.Name, m.Legacy.MigratedAt)
	return err == nil && bytes.Equal(again.Record, rec)
}

// RetireLegacy renames a settled legacy file (and seed 002's execution.json beside it) to its
// .v<old>.json.bak name, so it is kept but never considered again. It returns the new name.
func (s *Store) RetireLegacy(l Legacy) (string, error) {
	var pd durable.FS = s.o.projectFS
	if pd == nil {
		d, err := durable.OpenDir(s.o.projectRoot)
		if err != nil {
			return "", err
		}
		defer d.Close()
		pd = d
	}
	// A rename not confirmed durable still happened: the next start finishes it if it is lost.
	backup, err := moveToBackup(pd, l.Name, l.Backup)
	if err != nil && !durable.IsNotDurable(err) {
		return "", fmt.Errorf("%s could not be renamed to %s: %w", l.Name, backup, err)
	}
	if l.Name == seed002Phase {
		_, _ = moveToBackup(pd, seed002Exec, migrate.BackupName(seed002Exec, l.From))
	}
	return backup, nil
}

// ReplaceWorkflow puts rec in the active slot after archiving the current active workflow
// with reason (e.g. "conflict"), all under the workflow lock, so no other process sees the
// slot empty in between. rec becomes revision 1 of its own journal; text of a secret's shape
// kept holds (Legacy.Source) does not refuse it (checkChange). On an error, the ArchiveInfo
// names a directory only when the active workflow was moved into it: none is active then.
func (s *Store) ReplaceWorkflow(rec []byte, reason string, ev Event, kept []byte) (ArchiveInfo, Result, error) {
	w, unlock, err := s.lockActive(reason)
	if err != nil {
		return ArchiveInfo{}, Result{}, err
	}
	defer unlock()
	// Refused before the archive: refused after it, it would leave no workflow active.
	m, err := readNext(rec)
	if err == nil {
		err = cmp.Or(checkSave(rec, kept, &ev), s.JournalInTheWay(m.id))
	}
	if err == nil && m.id != w.ID {
		err = s.followsJournal(m) // the active one's journal is archived with it
	}
	if err != nil {
		return ArchiveInfo{}, Result{}, err
	}
	info, err := s.archiveLocked(w.ID, w.Revision, reason, nil, w.Data, w.Notices)
	if _, made := errors.AsType[*unfinishedError](err); err != nil && !made && !errors.As(err, new(*moveUnconfirmedError)) {
		return ArchiveInfo{}, Result{}, err // nothing archived: no directory to name
	}
	if err != nil {
		return info, Result{}, err
	}
	res, err := s.commit(Workflow{}, tailState{}, rec, m, ev)
	if err != nil {
		return info, res, fmt.Errorf("the active workflow was archived as %s but its replacement was not saved: %w", info.Dir, err)
	}
	// The replacement stands: retention failing is the archive's PruneErr, as for any archive.
	info.Pruned, info.PruneErr = s.prune(info.Dir)
	return info, res, nil
}
