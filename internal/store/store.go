// Package store is Cairn's L1 state: the state directory (.claude/cairn) and everything in it.
// It gives durable atomic replace of named JSON documents and checkpoints, locked
// read-modify-write with a bounded wait, lock-free reads that see the old or the new version,
// JSONL logs with torn-tail repair, the workflow journal with its snapshot, quarantine and
// rebuild of a corrupt snapshot, archives with retention, and migration of older formats.
//
// The workflow record is internal/workflow's type; the store owns its one encoding
// (UpdateRecord takes a function over *workflow.Record, ParseRecord reads one back) and
// numbers its revisions, and leaves what the record means to internal/workflow. It does not
// discover the project root (internal/project does) and never deletes state, with two
// exceptions: archive directories beyond the retention count are pruned (see ArchiveIf), and so
// are the session records of clients that exited an hour ago or more (see PruneSessions). (Temp
// files a killed writer left behind are not state; they are removed once no writer can be using
// them.)
//
// Every write goes through a durable.FS anchored at the state directory, is checked first
// (CheckDocument: strict JSON and no secret, in one pass), and leaves the old content intact
// when it fails.
//
// The journal (journal/<id>.jsonl) is the commit point of every workflow change: a line holds
// the change as a JSON delta, or the whole record again once the lines since the last one
// number at least 32 and hold as many bytes as the record (or their deltas 4 times that), each
// line and each state checked by a sum, so a rebuild reads only the tail from the newest full
// line. Past 1
// MiB (DefaultCompactAt) the lines before a new full line are sealed into
// journal/<id>.sealed/<n>.jsonl: the active journal stays short, and history, show and sync
// read the segments and the active journal together, so compaction loses no history. Sealing
// is two atomic replaces under the workflow lock, segment first; readers keep the first copy of
// each sequence number, so a compaction cut short reads the same as one not begun or done.
package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/vars"
)

// File and directory names inside the state directory.
const (
	WorkflowFile   = "workflow-state.json"
	workflowName   = "workflow-state"
	checkpointsDir = "checkpoints"
	logsDir        = "logs"
	journalDir     = "journal"
	archiveDir     = "archive"
	quarantineDir  = "quarantine"
	sessionsDir    = "sessions"
	archiveIndex   = "archive/index.jsonl"
	lockWorkflow   = ".lock-workflow"
)

const (
	// MaxLogLine is the longest JSONL log line, after compaction.
	MaxLogLine = 64 << 10
	// DefaultRetention is how many archives ArchiveIf keeps (seed 002's default).
	DefaultRetention = 5
	// DefaultLockWait bounds how long a write waits for a lock; hooks run under timeouts.
	DefaultLockWait = 5 * time.Second
	// DefaultCompactAt is the active journal's size past which its older lines are sealed
	// into a segment: about a thousand transitions of a typical workflow.
	DefaultCompactAt = 1 << 20
)

var (
	// ErrNotFound: the document, checkpoint, log or workflow does not exist. Errors that
	// match it say which.
	ErrNotFound = errors.New("not found")
	// ErrReserved: the name belongs to the store's own bookkeeping.
	ErrReserved = errors.New("reserved name")
)

// NotFoundError says what was missing.
type NotFoundError struct {
	What string // "document", "checkpoint", "log", "workflow", "archive"
	Name string
}

func (e *NotFoundError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("no %s", e.What)
	}
	return fmt.Sprintf("%s %q not found", e.What, e.Name)
}

func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// WriteError is a write that did not happen (or, for NotDurable, did but is unconfirmed). Its
// message names the state directory and what was kept.
type WriteError struct {
	Dir  string // the state directory
	Name string // the file, relative to Dir
	Err  error
	// NoInodes: Err is ENOSPC and the file system had no free inode, though it may have room
	// for data.
	NoInodes bool
	// whose, when Err is a permission refusal, says that Name (or its directory) belongs to
	// another user (as after cairn was run with sudo), and fix gives it back.
	whose, fix string
}

// FreeSpaceStep ends the message of a write the full disk refused: a person's step, which an
// adapter speaking to the model replaces (the model is not to make room by deleting files).
const FreeSpaceStep = "free some space and try again"

// FreeInodesStep ends the message of a write refused for want of a free inode: FreeSpaceStep's
// counterpart, which an adapter speaking to the model replaces too.
const FreeInodesStep = "free some inodes there (each file takes one) and try again"

func (e *WriteError) Error() string {
	what, then := e.parts()
	return what + then
}

// parts are the error's text: what failed and why, then what that left and the step, for
// Cause to leave out where the caller changed state itself.
func (e *WriteError) parts() (what, then string) {
	switch {
	case durable.IsNotDurable(e.Err):
		return fmt.Sprintf("%s in %s was written but may not survive a power loss: %v", e.Name, e.Dir, errors.Unwrap(e.Err)), ""
	case e.whose != "":
		return fmt.Sprintf("cannot write %s: %s, as after a cairn run with sudo (%v)", e.Name, e.whose, e.Err), fmt.Sprintf("; nothing was changed: %s gives the state directory back to this user, then try again", e.fix)
	case errors.Is(e.Err, syscall.EROFS) || errors.Is(e.Err, fs.ErrPermission):
		// The directory that refused: a subdirectory (archive/ on its own mount) may be
		// read-only while the rest of the state directory is not.
		where := "the state directory " + e.Dir
		if d := path.Dir(filepath.ToSlash(e.Name)); d != "." {
			where = "the directory " + filepath.Join(e.Dir, filepath.FromSlash(d))
		}
		return fmt.Sprintf("cannot write %s: %s is read-only or not writable (%v)", e.Name, where, e.Err), "; nothing was changed and the existing state can still be read"
	case errors.Is(e.Err, syscall.EIO):
		return fmt.Sprintf("cannot write %s in %s: the disk reported an I/O error (%v)", e.Name, e.Dir, e.Err), "; it was left as it was; " + CheckDiskStep
	case errors.Is(e.Err, syscall.ENOSPC) && e.NoInodes:
		return fmt.Sprintf("cannot write %s in %s: its file system has no free inodes, though it may have room for data (%v; df -i counts them)", e.Name, e.Dir, e.Err), "; it was left as it was; " + FreeInodesStep
	case errors.Is(e.Err, syscall.ENOSPC):
		return fmt.Sprintf("cannot write %s in %s: the disk is full (%v)", e.Name, e.Dir, e.Err), "; it was left as it was; " + FreeSpaceStep
	case errors.Is(e.Err, syscall.EDQUOT):
		// df shows room: the limit is this user's, and freeing their own files lifts it.
		return fmt.Sprintf("cannot write %s in %s: this user's disk quota there is used up (%v; quota -s shows it)", e.Name, e.Dir, e.Err), "; it was left as it was; " + FreeSpaceStep
	case errors.Is(e.Err, syscall.ENOLCK):
		// A network share mounted without its lock service: every write fails the same way.
		return fmt.Sprintf("cannot write %s in %s: its file system gives no file locks (%v), which Cairn takes so that writes from several processes stay whole", e.Name, e.Dir, e.Err), "; nothing was changed: keep the project on a local disk, or mount the share with locking on"
	}
	if what := InPlace(e.Err); what != "" {
		return fmt.Sprintf("cannot write %s in %s: %s", e.Name, e.Dir, what), "; nothing was changed and it was left as it is" + moveOutStep(filepath.Join(e.Dir, e.Name))
	}
	return fmt.Sprintf("writing %s in %s: %v", e.Name, e.Dir, e.Err), ""
}

func (e *WriteError) Unwrap() error { return e.Err }

// NoInodes reports whether err is a WriteError refused for want of a free inode.
func NoInodes(err error) bool {
	we, ok := errors.AsType[*WriteError](err)
	return ok && we.NoInodes
}

// NoRoomStep ends what the agent reads of a write the full disk (or one out of inodes, or a
// quota used up) refused while the call succeeded: the agent's step, which the CLI replaces
// with the person's. The change stands, so there is nothing to try again.
const NoRoomStep = "tell the user; do not delete or move files to make room"

// NoRoomTold is "; " and NoRoomStep when err is a write refused for want of room, else "".
func NoRoomTold(err error) string {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return "; " + NoRoomStep
	}
	return ""
}

// CheckDiskStep ends the message of a write the disk failed with an I/O error: a person's
// step, which an adapter speaking to the model replaces.
const CheckDiskStep = "check the disk before trying again"

// WithoutPersonStep is err's text without the step a full disk's refusal (FreeSpaceStep,
// FreeInodesStep), a disk's I/O error (CheckDiskStep) or something in a state file's place (InTheWay) gives a person, for an
// adapter that gives its reader its own.
func WithoutPersonStep(err error) string {
	msg := strings.NewReplacer("; "+FreeSpaceStep, "", "; "+FreeInodesStep, "", "; "+CheckDiskStep, "").Replace(err.Error())
	if p := inTheWayPath(err); p != "" {
		msg = strings.Replace(msg, moveOutStep(p), "", 1)
	}
	return msg
}

// moveOutStep ends the refusal over something in the place of a state file or its directory
// (path): the person's step. The agent's is to have the user run cairn doctor, which names it
// too: what is there may be someone's, and is not the agent's to move.
func moveOutStep(path string) string {
	return ": move " + path + " out of the state directory (it may be someone's), then try again"
}

// InTheWay reports whether err was refused for something in the place of a state file or of
// its directory (a directory, FIFO or symlink; a file with other names), which Cairn left as
// it is.
func InTheWay(err error) bool { return inTheWayPath(err) != "" }

// inTheWayPath is the path that InTheWay's err names, else "".
func inTheWayPath(err error) string {
	if we, ok := errors.AsType[*WriteError](err); ok && InPlace(we.Err) != "" && we.whose == "" {
		return filepath.Join(we.Dir, we.Name)
	}
	if ie, ok := errors.AsType[*inTheWayError](err); ok {
		return ie.path
	}
	return ""
}

// readErr is the error of a failed read of file, a state file holding what (`checkpoint
// "plan"`, `the journal of ID`): for something in the file's place, what it is and the one
// step; else err with what and where.
func (s *Store) readErr(what, file string, err error) error {
	if d := path.Dir(file); s.notDir(d, err) != nil {
		// Its directory is what is in the way (a symlink out of the state directory, which
		// is never followed): that is named, with its step.
		e := s.notDirAt(d)
		nr, _ := errors.AsType[*durable.NotRegularError](e)
		return &inTheWayError{msg: fmt.Sprintf("cannot read %s: %s is in the place of its directory %s/; it was left as it is", what, nr.Kind(), d), path: filepath.Join(s.dir, filepath.FromSlash(d)), err: e}
	}
	if in := InPlace(err); in != "" {
		return &inTheWayError{msg: fmt.Sprintf("cannot read %s: %s; it was left as it is", what, in), path: filepath.Join(s.dir, filepath.FromSlash(file)), err: err}
	}
	if oe := s.othersRead(what, file, err); oe != nil {
		return oe
	}
	return fmt.Errorf("reading %s in %s: %w", what, s.dir, err)
}

// othersRead is the error of a read of file (holding what) that err refused because file, or
// its directory, belongs to another user: whose it is and the command that gives it back.
// Else nil.
func (s *Store) othersRead(what, file string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	whose, fix := s.notThisUsers(file)
	if whose == "" {
		return nil
	}
	return &inTheWayError{msg: fmt.Sprintf("cannot read %s: %s, as after a cairn run with sudo (%v); it was left as it is: %s gives the state directory back to this user, then try again", what, whose, err, fix), err: err, others: true, fix: fix}
}

// inTheWayError is readErr's error for something in a state file's place, or for a state file of
// another user's (others; or the state directory, which Open refuses); it wraps the read's.
type inTheWayError struct {
	msg    string
	path   string // what is in the way, for moveOutStep; "" when msg says its own step
	err    error
	others bool
	fix    string // for others: the command that gives the state directory back
	dirVar string // the variable that named the state directory a file is in the place of
}

// GiveBack is the command that gives the state directory back to this user when err refused
// state another user owns (OtherUsers), else "": a step that must not be lost where its
// error's text is cut.
func GiveBack(err error) string {
	if ie, ok := errors.AsType[*inTheWayError](err); ok && ie.others {
		return ie.fix
	}
	if we, ok := errors.AsType[*WriteError](err); ok && we.whose != "" {
		return we.fix
	}
	return ""
}

// DirVariable is the variable that named the state directory when err is Open's refusal of a
// file in its place (WithDirFromVariable), else "": its fix is the variable's, not the file's.
func DirVariable(err error) string {
	ie, _ := errors.AsType[*inTheWayError](err)
	if ie == nil {
		return ""
	}
	return ie.dirVar
}

func (e *inTheWayError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.msg + moveOutStep(e.path)
}
func (e *inTheWayError) Unwrap() error { return e.err }

// SaysStep reports whether err is one that says what to do about it itself (something in the
// way, another user's file), so that a caller adds no step of its own after it.
func SaysStep(err error) bool {
	_, ok := errors.AsType[*inTheWayError](err)
	return ok
}

// fileInTheWay reports whether a read refused a state file (err) for what a write would
// replace in the file's own place (InPlace): not a directory, which the write refuses itself,
// nor what is in its directory's place.
func fileInTheWay(err error) bool {
	if nr, ok := errors.AsType[*durable.NotRegularError](err); ok {
		return !nr.Dir && !nr.Mode.IsDir()
	}
	return InPlace(err) != ""
}

// InPlace says what sits in the place of a state file when that is what refused its read or
// write (a directory, FIFO or symlink, or a file with other names; or, where a directory
// belongs, a file), else "".
func InPlace(err error) string {
	if nr, ok := errors.AsType[*durable.NotRegularError](err); ok && nr.Dir {
		return nr.Kind() + " is in its place, not a directory"
	} else if ok {
		return nr.Kind() + " is in its place, not a file Cairn wrote"
	}
	switch {
	case errors.Is(err, durable.ErrNotRegular):
		return "it is not a regular file (a symlink, FIFO, device or directory is in its place)"
	case errors.Is(err, durable.ErrHardLinked):
		return "it has more than one hard link, so writing it would change another file too"
	}
	return ""
}

// Store is an open state directory. It is safe for concurrent use by goroutines and by
// processes: writes that read first hold a cross-process lock.
type Store struct {
	dir  string
	fs   durable.FS
	real io.Closer
	o    options

	mu      sync.Mutex
	notices []Notice // said by no result yet (TakeNotices)
}

// TakeNotices returns, once, what the store did on its own in a call whose result has no room
// to say it (AppendLog's setting aside of an unfinished last line), and forgets it.
func (s *Store) TakeNotices() []Notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}

// keepNotice keeps n for TakeNotices.
func (s *Store) keepNotice(n Notice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, n)
}

type options struct {
	fs          durable.FS                  // tests inject faults through it (WithFS, export_test.go)
	wrapFS      func(durable.FS) durable.FS // WithWrapFS
	retention   int
	lockWait    time.Duration
	lockUntil   time.Time // every lock wait ends by then (WithLockUntil)
	now         func() time.Time
	projectRoot string
	projectFS   durable.FS // tests wrap the project root (WithProjectFS, export_test.go)
	noCreate    bool
	keepRoot    bool // WithNoCreateRoot
	noRepair    bool // WithNoRepair
	inMemory    bool // WithReadInMemory
	compactAt   int64
	typeTTL     func(typ string) (string, bool) // WithTypeTTL
	dirVar      string                          // WithDirFromVariable
}

// Option changes how Open sets up a Store.
type Option func(*options)

// WithRetention keeps the newest n archives (at least 1) instead of DefaultRetention.
func WithRetention(n int) Option {
	return func(o *options) { o.retention = max(n, 1) }
}

// WithFS makes the store do all its file operations through fsys (anchored at dir), for fault
// injection in tests (this package's and those of the packages that write through a store).
func WithFS(fsys durable.FS) Option { return func(o *options) { o.fs = fsys } }

// WithWrapFS makes the store do its file operations through wrap of the directory it opens,
// for the tests of packages that open a store by its path and cut no power
// (durabletest.NoSync spares them the fsyncs).
func WithWrapFS(wrap func(durable.FS) durable.FS) Option {
	return func(o *options) { o.wrapFS = wrap }
}

// WithLockWait bounds how long writes wait for a lock. 0 waits for none: a lock another
// process holds is tried once, and a read that would repair the snapshot under it answers
// from the journal instead, as in a state directory that cannot be written.
func WithLockWait(d time.Duration) Option { return func(o *options) { o.lockWait = d } }

// WithLockUntil ends every lock wait by t, however many locks a caller under a deadline (a
// hook) meets one after another.
func WithLockUntil(t time.Time) Option { return func(o *options) { o.lockUntil = t } }

// WithClock sets the clock used for journal times and archive and quarantine names.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithProjectRoot says where the project root is, for finding the seeds' legacy state files
// (.claude/workflow-state.json, memory/state/, .workflow-state/). By default it is the state
// directory's grandparent when the state directory is <root>/.claude/cairn, else none.
func WithProjectRoot(root string) Option { return func(o *options) { o.projectRoot = root } }

// WithDirFromVariable says that the variable name gave the state directory: a file where it
// goes is then the variable's mistake, and Open's refusal says to set the variable again, not
// to move a file that may be anyone's (/etc/passwd).
func WithDirFromVariable(name string) Option { return func(o *options) { o.dirVar = name } }

// WithNoCreate opens the state directory for commands that only read: a missing directory is
// not created (nor its .gitignore), and the store reads as empty; whatever such a command
// would write goes nowhere. A command run in the wrong place ($HOME, /) creates nothing.
func WithNoCreate() Option { return func(o *options) { o.noCreate = true } }

// WithNoCreateRoot leaves a missing project root missing: a state directory beneath it opens
// as WithNoCreate opens one (empty, nothing created), so that a project deleted while a
// session is open is not made again by the hooks that run after.
func WithNoCreateRoot() Option { return func(o *options) { o.keepRoot = true } }

// WithNoRepair opens the state directory for a caller whose words no one reads (Claude Code's
// StopFailure and task event hooks): the one-off repairs whose notice is said once are not
// made. Reading or changing the workflow answers ErrRepairLeft where it would repair the
// snapshot (set aside, rebuilt, migrated) or settle an archive cut short, and Quarantine moves
// nothing and answers it too; the next caller that reads the state makes the repair and says
// it.
func WithNoRepair() Option { return func(o *options) { o.noRepair = true } }

// WithReadInMemory has a store opened WithNoRepair answer a read whose snapshot needs a
// repair from what the journal holds, in memory, as it does when the lock is held (the status
// line); ErrRepairLeft only when there is none.
func WithReadInMemory() Option { return func(o *options) { o.inMemory = true } }

// WithTypeTTL gives the TTL of a workflow type's definition (false: none), which an older
// document that names no ttl takes when it is migrated, as a start of the type would.
func WithTypeTTL(ttl func(typ string) (string, bool)) Option {
	return func(o *options) { o.typeTTL = ttl }
}

// ErrRepairLeft is what a store opened WithNoRepair answers where a one-off repair is needed.
var ErrRepairLeft = errors.New("the state needs a repair, left to the next reader, which says it")

// Open opens the state directory dir, creating it (and missing parents) 0700 with a
// .gitignore of "*" so state is never committed by accident. A dir that is a symlink is
// refused. A read-only dir opens fine: reads work and writes fail with a *WriteError.
func Open(dir string, opts ...Option) (*Store, error) {
	o := options{retention: DefaultRetention, lockWait: DefaultLockWait, now: time.Now, compactAt: DefaultCompactAt}
	for _, opt := range opts {
		opt(&o)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if o.projectRoot == "" && filepath.Base(abs) == "cairn" && filepath.Base(filepath.Dir(abs)) == ".claude" {
		o.projectRoot = filepath.Dir(filepath.Dir(abs))
	}
	root := o.projectRoot
	// A file in the way is said as such (inTheWay) beneath the project, and wherever the
	// variable named the directory: its step is then the variable's, not the bare mkdir error.
	sayFile := durable.Beneath(root, abs) || o.dirVar != ""
	var seen fs.FileInfo // the directory as this first look found it, for privateDir and OpenDirSeen
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("opening state directory %s: %w", abs, durable.ErrSymlinkDir)
	} else if err == nil && !fi.IsDir() {
		return nil, inTheWay("opening", abs, abs, o.dirVar)
	} else if errors.Is(err, syscall.ENOTDIR) && sayFile {
		if p := fileOnTheWay(abs); p != "" {
			return nil, inTheWay("creating", abs, p, o.dirVar)
		}
	} else if errors.Is(err, fs.ErrNotExist) && (o.noCreate || o.keepRoot && rootMissing(root)) {
		o.noCreate = true
		if err := durable.CheckBeneath(root, abs); err != nil {
			if p := fileOnTheWay(abs); p != "" && sayFile {
				return nil, inTheWay("opening", abs, p, o.dirVar)
			}
			return nil, fmt.Errorf("opening state directory %s: %w", abs, err)
		}
		// An empty in-memory directory (simfs) stands in for the missing one.
		return &Store{dir: abs, fs: simfs.New(), real: nopCloser{}, o: o}, nil
	} else if err == nil {
		seen = fi // a directory
	}
	// Below the project root no component may be a link (.claude -> /elsewhere would put
	// state there): MkdirBeneath checks each one and creates what is missing.
	if _, err := durable.MkdirBeneath(root, abs, 0o700); err != nil {
		if p := fileOnTheWay(abs); p != "" && sayFile {
			return nil, inTheWay("creating", abs, p, o.dirVar)
		}
		if errors.Is(err, durable.ErrLinkedComponent) {
			return nil, fmt.Errorf("opening state directory %s: %w", abs, err)
		}
		return nil, fmt.Errorf("creating state directory %s: %w", abs, err)
	}
	if err := privateDir(abs, seen); err != nil {
		return nil, err
	}
	d, err := durable.OpenDirSeen(abs, seen)
	if err != nil {
		if seen != nil && errors.Is(err, fs.ErrPermission) {
			// Another user's 0700 directory (cairn run once with sudo made it): the bare
			// "permission denied" said neither whose nor what gives it back.
			if uid, ok := OwnerUID(seen); ok && uid != os.Geteuid() {
				whose, fix := NotThisUsers(abs, uid, os.Geteuid())
				return nil, &inTheWayError{msg: fmt.Sprintf("cannot open the state directory: %s, as after a cairn run with sudo (%v); nothing was changed: %s gives it back to this user, then try again", whose, err, fix), err: err, others: true, fix: fix}
			}
		}
		return nil, fmt.Errorf("opening state directory %s: %w", abs, err)
	}
	s := &Store{dir: abs, fs: d, real: d, o: o}
	if o.fs != nil {
		s.fs = o.fs
	}
	if o.wrapFS != nil {
		s.fs = o.wrapFS(s.fs)
	}
	if _, err := s.fs.Lstat(".gitignore"); errors.Is(err, fs.ErrNotExist) && !o.noCreate {
		// Failing here (a read-only directory) must not stop reads; writes will say why.
		_ = durable.WriteFile(s.fs, ".gitignore", []byte("*\n"), 0o600)
	}
	return s, nil
}

// fileOnTheWay returns the nearest of dir and its parents that is there, when it is not a
// directory (nor a symlink, refused with its own error), else "".
func fileOnTheWay(dir string) string {
	for p := dir; ; {
		fi, err := os.Lstat(p)
		if err == nil {
			if fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
				return ""
			}
			return p
		}
		next := filepath.Dir(p)
		if next == p {
			return ""
		}
		p = next
	}
}

// inTheWay is Open's error, while op ("opening", "creating") the state directory dir, when
// file, dir or one of its parents, is not a directory: what is wrong and what the person does
// about it, then InTheWayStep. The file may be anyone's, so nothing suggests discarding it;
// when the variable dirVar named dir, the variable is what is set again.
func inTheWay(op, dir, file, dirVar string) error {
	if dirVar != "" {
		return &inTheWayError{msg: fmt.Sprintf("%s state directory %s: %s is a file, not a directory, and %s names it as the state directory. "+InTheWayLeft+"set %s to a directory, or unset it to keep the state in the project; %s", op, dir, file, dirVar, dirVar, InTheWayStep), dirVar: dirVar}
	}
	where := "there"
	if file != dir {
		where = "in " + dir + ", beneath it"
	}
	return &inTheWayError{msg: fmt.Sprintf("%s state directory %s: %s is a file, not a directory: Cairn keeps its state %s. "+InTheWayLeft+"look at what it holds and move or rename it (for example to %s.bak); %s", op, dir, file, where, file, InTheWayStep)}
}

// InTheWayLeft begins the step in Open's error for a file in the state directory's way: what
// comes before it says what is wrong (cairn doctor's detail), it and what follows what to do.
const InTheWayLeft = "Cairn left it untouched; "

// InTheWayStep ends Open's error for a file in the state directory's way: what follows its
// move, as the hook output (shown to the user, who has no command to run again) and the MCP
// tools say it; the CLI puts its own step in its place (engine.InTheWayStep).
const InTheWayStep = "Cairn then opens its state at its next hook or tool call"

// Exists reports whether the state directory is on disk: false only for a store opened
// WithNoCreate where it is missing.
func (s *Store) Exists() bool { _, virtual := s.real.(nopCloser); return !virtual }

// Dir is the state directory's absolute path.
func (s *Store) Dir() string { return s.dir }

// Close releases the directory handle.
func (s *Store) Close() error { return s.real.Close() }

func (s *Store) writeErr(name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*WriteError](err); ok {
		return err
	}
	if e := s.notDir(path.Dir(name), err); e != nil {
		name, err = path.Dir(name), e
	}
	we := &WriteError{Dir: s.dir, Name: name, Err: err, NoInodes: errors.Is(err, syscall.ENOSPC) && durable.NoFreeInodes(s.dir)}
	if errors.Is(err, fs.ErrPermission) {
		we.whose, we.fix = s.notThisUsers(name)
	}
	return we
}

// notThisUsers says, when name in the state directory or its directory belongs to another
// user than this one, whose it is and the command that gives the state directory back to
// this user; else "". The directory is looked at too when name is this user's: creating,
// renaming or removing a file is the directory's owner's to allow (a journal of this user's
// in a journal/ that cairn run with sudo made). Root, who may write another's files, is
// never refused for that.
func (s *Store) notThisUsers(name string) (whose, fix string) {
	me := os.Geteuid()
	if me == 0 {
		return "", ""
	}
	for n := name; ; n = path.Dir(n) {
		if fi, err := s.fs.Lstat(n); err == nil {
			if uid, ok := OwnerUID(fi); ok && uid != me {
				whose, _ = NotThisUsers(filepath.Join(s.dir, filepath.FromSlash(n)), uid, me)
				_, fix = NotThisUsers(s.dir, uid, me)
				return whose, fix
			}
		}
		if n != name || path.Dir(n) == "." {
			return "", ""
		}
	}
}

// OtherUsers reports whether err is a write, a read or an open refused because the state
// directory or a file in it belongs to another user (the error says whose, and how to give it
// back).
func OtherUsers(err error) bool {
	if ie, ok := errors.AsType[*inTheWayError](err); ok && ie.others {
		return true
	}
	we, ok := errors.AsType[*WriteError](err)
	return ok && we.whose != ""
}

// notDir is, when err failed a step into dir, a subdirectory of the state directory
// (checkpoints, logs) that is not a directory, the error that says what is in its place: a
// symlink, which the file system refuses as "path escapes from parent", or a file. Else nil.
func (s *Store) notDir(dir string, err error) error {
	if err == nil || dir == "." || InPlace(err) != "" {
		return nil
	}
	return s.notDirAt(dir)
}

// notDirAt is the error for what is in the place of dir when it is there and not a directory
// (a symlink out of the state directory, which is never followed), else nil.
func (s *Store) notDirAt(dir string) error {
	if fi, lerr := s.fs.Lstat(dir); lerr == nil && !fi.IsDir() {
		return &fs.PathError{Op: "open", Path: dir, Err: &durable.NotRegularError{Mode: fi.Mode(), Dir: true}}
	}
	return nil
}

// rootMissing reports whether the project root root is named and is not there.
func rootMissing(root string) bool {
	if root == "" {
		return false
	}
	_, err := os.Lstat(root)
	return errors.Is(err, fs.ErrNotExist)
}

// lock takes the named lock ("NAME" -> .lock-NAME).
func (s *Store) lock(name string) (func() error, error) {
	return s.lockWaiting(name, durable.WaitBefore(s.o.lockWait, s.o.lockUntil))
}

// lockWaiting is lock waiting up to wait (0: tried once).
func (s *Store) lockWaiting(name string, wait time.Duration) (func() error, error) {
	unlock, err := s.fs.Lock(".lock-"+name, wait)
	if err != nil {
		var te *durable.LockTimeoutError
		if errors.As(err, &te) {
			return nil, err
		}
		return nil, s.writeErr(".lock-"+name, err)
	}
	return unlock, nil
}

func (s *Store) mkdir(name string) error {
	return s.writeErr(name, durable.MkdirIn(s.fs, name, 0o700))
}

func (s *Store) utc() string { return s.o.now().UTC().Format(utcStamp) }

// utcStamp is the time in archive and quarantine names.
const utcStamp = "20060102T150405.000Z"

// privateDir makes the state directory private (0700) when other users may read or write it
// (a 0777 directory lets any local user plant or read state); when that cannot be done and
// others may write there (not on a read-only mount), the directory is refused. Windows has no
// such mode bits. seen is the directory's Lstat when the caller has it (nil: look now).
func privateDir(abs string, seen fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := seen, error(nil)
	if fi == nil {
		fi, err = os.Stat(abs)
	}
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return nil // a missing directory is reported by the open that follows
	}
	// On a read-only mount nobody can write, nor chmod: it opens for reading, as any
	// read-only state directory does.
	if err := os.Chmod(abs, 0o700); err != nil && fi.Mode().Perm()&0o022 != 0 && !errors.Is(err, syscall.EROFS) {
		// Not this user's: its chmod fails for them as Cairn's did.
		if uid, ok := OwnerUID(fi); ok && errors.Is(err, fs.ErrPermission) && uid != os.Geteuid() {
			whose, fix := NotThisUsers(abs, uid, os.Geteuid())
			return &inTheWayError{msg: fmt.Sprintf("state directory %s is %04o, writable by other users, and could not be made private: %s; %s gives it to this user, and Cairn then makes it private", abs, fi.Mode().Perm(), whose, fix), err: err, others: true, fix: fix}
		}
		// Its step is said here: a caller adds none (SaysStep).
		return &inTheWayError{msg: fmt.Sprintf("state directory %s is %04o, writable by other users, and could not be made private (%v); chmod 700 it", abs, fi.Mode().Perm(), err), err: err}
	}
	return nil
}

// NotThisUsers says that dir belongs to the user uid, not to this one (me), and the command
// that gives it to this user; only then can this user make it private or write in it.
func NotThisUsers(dir string, uid, me int) (whose, fix string) {
	return fmt.Sprintf("%s belongs to uid %d, not to this user (uid %d)", dir, uid, me), fmt.Sprintf("sudo chown -R %d %s", me, vars.Quote(dir))
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
