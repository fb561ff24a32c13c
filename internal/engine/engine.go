// Package engine is Cairn's one core: it joins the L1 store, the workflow domain and the L2
// memory into the operations every binary offers. The MCP server, the hooks and the CLI are thin
// adapters over it; none of them reads or writes state any other way.
//
// Every operation that changes state follows the write protocol: L1 first (durable, under the
// lock, journaled), then the L2 lines the change owes. L1 failing fails the operation; L2
// failing only adds a warning.
package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Config says where and as whom the engine runs. Zero fields take the process's own values.
type Config struct {
	Getenv    func(string) string // default os.Getenv
	WorkDir   string              // default os.Getwd
	Now       func() time.Time    // default time.Now
	SessionID string              // the Claude Code session making the call, if known
	PID       int                 // Claude Code's pid (hooks: $CLAUDE_PID; MCP server: its parent)
	// ClientStart is when PID's process started, recorded with the workflow's owner beside PID
	// so a process that takes the pid after the client exits is not taken for it; default
	// store.ProcessStart (0 where the platform does not tell).
	ClientStart uint64
	// Host is this machine's name, recorded with the workflow's owner beside PID, which means
	// nothing on another machine sharing the workflow; default os.Hostname (see host).
	Host     string
	Actor    string        // "mcp", "session-start", "stop", "cli": recorded in the journal
	LockWait time.Duration // bound on waiting for a lock; default 3s
	// LockUntil, when set, ends every lock wait by then, however many locks one call meets
	// (a hook's deadline).
	LockUntil time.Time
	// NoLockWait is for a read that must never wait (the status line, on every refresh of
	// Claude Code's status bar): a lock another process holds is tried once, not waited for,
	// and the read answers from what it reads without it (store.WithLockWait(0)).
	NoLockWait bool
	// YAML reads and writes the YAML Cairn deals in: the user's workflow definitions, seed
	// 001's milestone front matter and WORKFLOW-STATUS.yaml (yamldoc.Codec). Every
	// binary passes one; nil (some tests) leaves those files unread, each one reported.
	YAML YAML
	// NoCreate is for commands that only read, and for hooks run without a usable
	// CLAUDE_PROJECT_DIR: a missing state directory is not created and reads as empty
	// (store.WithNoCreate).
	NoCreate bool
	// NoCreateRoot is for hooks: a project directory deleted while its session is open is
	// not made again; its state reads as empty (store.WithNoCreateRoot).
	NoCreateRoot bool
	// NoRepair is for a hook whose output no one reads (StopFailure): a one-off repair is
	// not made there, so its notice is not lost; the read that needs one fails with
	// store.ErrRepairLeft, and the next hook the model reads makes it and says it
	// (store.WithNoRepair).
	NoRepair bool
	// ReadInMemory, with NoRepair, answers a read whose snapshot needs a repair from what the
	// journal holds, in memory (store.WithReadInMemory): the status line still shows it.
	ReadInMemory bool
	// WrapFS, when set, wraps the state directory's file operations (store.WithWrapFS): tests
	// that cut no power pass durabletest.NoSync, sparing the fsyncs they never see.
	WrapFS func(durable.FS) durable.FS
}

// YAML is what the engine needs from a YAML library; see Config.YAML.
type YAML interface {
	ParseDefinition(file string, data []byte) (*workflow.Definition, error)
	ParseStatusDoc(data []byte) (*workflow.StatusDoc, error)
	MarshalStatusDoc(d workflow.StatusDoc) ([]byte, error)
	MilestoneFrontMatter(data []byte) (title, name, status string, err error)
}

// errNoYAML says why a YAML file was left alone by a process without a YAML reader.
var errNoYAML = errors.New("this binary reads no YAML (the hooks hand such projects to the cairn binary; run `cairn doctor`)")

// ErrNoActiveWorkflow is returned by operations that need an active workflow when there is none.
var ErrNoActiveWorkflow = workflow.ErrNoWorkflow

// CheckOnRecord ends a refusal that another process's change caused, or the store's step for a
// snapshot it left as it is: the step is to look at what is on record now. It names the
// agent's tool; the CLI puts its own command in its place.
const CheckOnRecord = store.CheckOnRecord

// InTheWayStep ends the refusal to open a state directory that a file stands in the way of,
// after the step of moving it: what follows, for the agent and a hook's user. The CLI puts
// "then run the command again" in its place.
const InTheWayStep = store.InTheWayStep

// InTheWayLeft begins the step of that refusal, after what is wrong.
const InTheWayLeft = store.InTheWayLeft

// IndexTooLargeStep ends what is said of an archive index too large to read: the agent's
// step, which the CLI replaces with the person's.
const IndexTooLargeStep = store.IndexTooLargeStep

// GiveAnID ends the refusal of a start whose id cannot be used. It names start_workflow's
// argument; the CLI puts its --id flag in its place.
const GiveAnID = workflow.GiveAnID

// DefinitionAsk is the agent's step when an active workflow's definition does not load.
const DefinitionAsk = workflow.DefinitionAsk

// DamagedStep ends the refusal over a workflow whose snapshot and journal are both damaged:
// the agent's step. DoctorSetsAside is the person's, which the CLI puts in its place and
// cairn status gives: there is seldom a backup (the state directory is not committed), and
// doctor's fix keeps the files aside, nothing lost.
const (
	DamagedStep     = store.DamagedStep
	DoctorSetsAside = "run `cairn doctor`, whose fix keeps them aside in quarantine/ so that a new workflow can start"
)

// CompleteStep ends the refusal of a move out of a terminal phase the workflow is active in.
// It names complete_workflow; the CLI puts its complete command in its place.
const CompleteStep = workflow.CompleteStep

// NotAProjectStep is the step where cairn runs in no project (no git repository, no Cairn
// state): doctor's fix and the refusal of a command that writes. Running "inside a project" is
// no step for a project without git: only CLAUDE_PROJECT_DIR names that one.
const NotAProjectStep = "run cairn in your project (a git repository), or set CLAUDE_PROJECT_DIR to the project's absolute path, as Claude Code does for a session started outside git"

// NoGit says why no git work tree holds root, the directory taken as the project root: no
// git repository holds it, or it is a bare repository's, which has no work tree.
func NoGit(root string) string {
	if project.Bare(root) {
		return root + " is " + bareRepository
	}
	return "no git repository holds " + root
}

// LaunchRoot is the note beside a project root no git work tree holds (NoGit).
func LaunchRoot(root string) string {
	if projectGone(root) {
		return "(not there: deleted or moved)"
	}
	why := "no git repository found"
	if project.Bare(root) {
		why = bareRepository
	}
	return "(" + why + ": the launch directory is the project root)"
}

const bareRepository = "a bare git repository, which has no work tree"

// ToolPrefix is how the agent sees Cairn's MCP tools (plugin cairn, server cairn).
const ToolPrefix = workflow.ToolPrefix

// Engine runs Cairn's operations for one project. It is safe for concurrent use: every change
// goes through the store's cross-process locks.
type Engine struct {
	cfg      Config
	root     string
	st       *store.Store
	defsMu   sync.Mutex
	defs     *workflow.Definitions // nil until first use
	defErrs  []string
	defsDir  bool // defErrs is about the directory itself (unreadable, a file): none of the user's loaded
	mem      *memory.Memory
	memWarn  string // why L2 cannot be used, "" when it can
	workflow string // .claude/workflows dir
	conf     fileConfig
	confBad  string // why config.json does not read as the settings, "" when it does or is not there
	inGit    bool   // the root is a git repository's, not just the launch directory
	// storeOpts are the options st was opened with, but WithNoCreate: OpenStore's.
	storeOpts []store.Option
	// clientStart is Config.ClientStart, else asked of the platform on first use: only a
	// change, or a check of an owner of this client's pid, needs it.
	clientStart func() uint64
}

// Open finds the project and its state directory and opens them. It fails only when the
// state directory cannot be used at all; everything else (a broken definition, L2 off) is a
// warning.
func Open(cfg Config) (*Engine, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.WorkDir == "" {
		// A working directory deleted since the process started is no matter where an
		// absolute CLAUDE_PROJECT_DIR names the project: the rest, a relative
		// CAIRN_STATE_DIR too, is found from it.
		wd, err := os.Getwd()
		if err != nil && !filepath.IsAbs(cfg.Getenv(project.EnvProjectDir)) {
			return nil, fmt.Errorf("finding the working directory: %w", err)
		}
		cfg.WorkDir = wd
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LockWait <= 0 {
		cfg.LockWait = 3 * time.Second
	}
	cfg.Actor = cmp.Or(cfg.Actor, "cairn")
	found, err := project.Find(cfg.Getenv, cfg.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("finding the project root: %w", err)
	}
	root := found.Root
	dir, err := project.StateDirOf(cfg.Getenv, cfg.WorkDir, found)
	if err != nil {
		return nil, fmt.Errorf("finding the state directory: %w", err)
	}
	if !cfg.NoCreate && !cfg.NoCreateRoot && durable.Beneath(root, dir) && projectGone(root) {
		return nil, &ProjectGoneError{Root: root}
	}
	conf, confBad := readConfig(dir)
	wait := cfg.LockWait
	if cfg.NoLockWait {
		wait = 0
	}
	// An older document migrated on a read takes its type's TTL when it names none; the
	// definitions are read then, not before (e is set before the store reads anything).
	var e *Engine
	typeTTL := func(typ string) (string, bool) {
		if e == nil {
			return "", false
		}
		d, err := e.TypeDefinition(typ)
		if err != nil {
			return "", false
		}
		return d.TTL, true
	}
	opts := []store.Option{store.WithClock(cfg.Now), store.WithLockWait(wait), store.WithLockUntil(cfg.LockUntil), store.WithProjectRoot(root),
		store.WithTypeTTL(typeTTL)}
	if cfg.WrapFS != nil {
		opts = append(opts, store.WithWrapFS(cfg.WrapFS))
	}
	if dir != filepath.Join(root, project.StateSubdir) {
		// Set elsewhere by CAIRN_STATE_DIR: a file there is the variable's mistake.
		opts = append(opts, store.WithDirFromVariable(project.EnvStateDir))
	}
	keep, keepAll := retention(cfg.Getenv, conf, confBad)
	if keep > 0 {
		opts = append(opts, store.WithRetention(keep))
	}
	if confBad != "" {
		// It may ask to keep more than the default: none is removed until it reads.
		_, envSet, _ := envRetention(cfg.Getenv)
		confBad = configWarning(dir, confBad, keepAll && !envSet && conf.ArchiveRetention == nil)
	}
	own := opts
	if cfg.NoCreate {
		own = append(slices.Clip(opts), store.WithNoCreate())
	}
	if cfg.NoCreateRoot {
		own = append(slices.Clip(own), store.WithNoCreateRoot())
	}
	if cfg.NoRepair {
		own = append(slices.Clip(own), store.WithNoRepair())
	}
	if cfg.ReadInMemory {
		own = append(slices.Clip(own), store.WithReadInMemory())
	}
	st, err := store.Open(dir, own...)
	if err != nil {
		return nil, err
	}
	e = &Engine{cfg: cfg, root: root, st: st, conf: conf, confBad: confBad, workflow: filepath.Join(root, ".claude", "workflows"),
		inGit: found.InGit, storeOpts: opts}
	e.clientStart = sync.OnceValue(func() uint64 {
		if cfg.ClientStart != 0 || cfg.PID <= 0 {
			return cfg.ClientStart
		}
		start, _ := store.ProcessStart(cfg.PID)
		return start
	})
	e.openMemory(found)
	return e, nil
}

// OpenStore opens the engine's state directory again, for work done beside the engine (a remote
// sync): with the project's archive retention, clock and lock wait, so an archive made there
// keeps the archives this project keeps; extra options come after them.
func (e *Engine) OpenStore(extra ...store.Option) (*store.Store, error) {
	return store.Open(e.StateDir(), append(slices.Clip(e.storeOpts), extra...)...)
}

// Close releases the state directory.
func (e *Engine) Close() error { return e.st.Close() }

// StateDir is the state directory's absolute path.
func (e *Engine) StateDir() string { return e.st.Dir() }

// InGit reports whether the project root is a git repository's (else it is the launch
// directory, for want of one).
func (e *Engine) InGit() bool { return e.inGit }

// ProjectRoot is the project's root directory.
func (e *Engine) ProjectRoot() string { return e.root }

// DefinitionsDir is where the user's workflow definitions live.
func (e *Engine) DefinitionsDir() string { return e.workflow }

// MemoryDir is the L2 directory, or "" when L2 is off or unavailable.
func (e *Engine) MemoryDir() string {
	if e.memWarn != "" {
		return ""
	}
	return e.mem.Location().Dir
}

// Definitions lists the loaded workflow types.
func (e *Engine) Definitions() []string { return e.definitions().Names() }

// Definition returns the definition of workflow type name, as start and moves use it: ok is
// false when there is none, or when a project file of the type does not load (TypeDefinition).
func (e *Engine) Definition(name string) (*workflow.Definition, bool) {
	d, err := e.TypeDefinition(name)
	return d, err == nil
}

// Warnings are the standing problems: L2 unavailable (not switched off), a config.json that does
// not read, and broken definitions once the
// definitions are loaded (by any operation that needs them; Doctor and Definitions load
// them). Asking does not load them, so a hook with nothing on record parses no YAML.
func (e *Engine) Warnings() []string {
	e.defsMu.Lock()
	w := append([]string(nil), e.defErrs...)
	e.defsMu.Unlock()
	if e.memWarn != "" && !e.memoryOff() {
		w = append(w, e.memWarn)
	}
	if e.confBad != "" {
		w = append(w, e.confBad)
	}
	return w
}

// memoryOff reports whether L2 is off because the user switched auto-memory off: a choice,
// not a fault, so no warning; cairn doctor and record_learning still say why.
func (e *Engine) memoryOff() bool {
	loc := e.mem.Location()
	return loc.Disabled && !loc.Refused
}

// SetSession changes whose session the engine acts for (the MCP server learns it after /clear).
// It is not safe concurrently with other calls; the MCP server serialises them.
func (e *Engine) SetSession(id string) { e.cfg.SessionID = id }

// SessionID is the session the engine acts for.
func (e *Engine) SessionID() string { return e.cfg.SessionID }

// workflow.MaxDefinitionSize bounds a user definition file, maxDefinitionBytes all of them
// together (a few KB each is usual), and maxDefinitionFiles their number: every process, the hooks
// under their deadline included, reads and parses them all, and each file costs an open and
// a parse whatever its size (thousands of tiny ones took a loaded machine's session start past
// its deadline). 500 files of the usual few KB fill about the bytes budget; 500 tiny ones
// take a tenth of a second.
const (
	maxDefinitionBytes = 2 << 20
	maxDefinitionFiles = 500
	// maxFoldersProbed bounds the folders in the definitions directory looked into for .md
	// files (each an open and a listing), in name order.
	maxFoldersProbed = 8
)

// definitions returns the workflow definitions, loading them on first use: a session start
// with no active workflow then parses no YAML at all.
func (e *Engine) definitions() *workflow.Definitions {
	e.defsMu.Lock()
	defer e.defsMu.Unlock()
	if e.defs == nil {
		e.loadDefinitionsLocked()
	}
	return e.defs
}

// WithDefinitionErrors is err, a start refused for its type, with the definitions that do not
// load named by file and line: the type may be defined in one of them.
func (e *Engine) WithDefinitionErrors(err error) error {
	if broken := e.definitionErrors(); len(broken) > 0 {
		return fmt.Errorf("%w; %s (fix the file, then start again)", err, strings.Join(broken, "; "))
	}
	return err
}

// definitionErrors are the broken definitions' reports (file, line, reason).
func (e *Engine) definitionErrors() []string {
	e.definitions()
	e.defsMu.Lock()
	defer e.defsMu.Unlock()
	return append([]string(nil), e.defErrs...)
}

// definitionsDirTrouble reports whether the definitions' errors are about the directory itself
// (unreadable, a file, a link that leads nowhere), so that none of the user's loaded.
func (e *Engine) definitionsDirTrouble() bool {
	e.definitions()
	e.defsMu.Lock()
	defer e.defsMu.Unlock()
	return e.defsDir
}

// definitionDoubts are the loaded definitions' doubts (workflow.Definition.Doubts): file, line
// and reason, by type.
func (e *Engine) definitionDoubts() []string {
	defs := e.definitions()
	var out []string
	for _, n := range defs.Names() {
		d, _ := defs.Lookup(n)
		for _, doubt := range d.Doubts {
			out = append(out, doubt.Error())
		}
	}
	return out
}

// ReloadDefinitions reads the built-in definitions and the user's .claude/workflows/*.md
// again. A broken file becomes a warning naming file, line and reason; the others load.
func (e *Engine) ReloadDefinitions() {
	e.defsMu.Lock()
	defer e.defsMu.Unlock()
	e.loadDefinitionsLocked()
}

// readingDefinitions starts the error of a workflows directory that cannot be read.
const readingDefinitions = "reading workflow definitions in "

func (e *Engine) loadDefinitionsLocked() {
	user := map[string][]byte{}
	var errs []string
	entries, err := durable.ReadDirPath(e.workflow)
	// Something other than a directory in its place (or at the end of a link) is named.
	fi, serr := os.Stat(e.workflow)
	notDir, target, lerr := err != nil && serr == nil && !fi.IsDir(), "", error(nil)
	if notDir {
		target, lerr = os.Readlink(e.workflow)
	}
	// The model reads these too: changing what is in the directory's place is the user's step.
	const pointIt = "; to use them, the user points it at the directory that holds the definitions"
	if notDir && lerr == nil {
		errs = append(errs, fmt.Sprintf(readingDefinitions+"%s: not read: it is a symbolic link to %s, which is %s, not a directory"+pointIt,
			workflow.ShownPath(e.workflow), workflow.ShownPath(target), (&durable.NotRegularError{Mode: fi.Mode()}).Kind()))
	} else if notDir && !fi.Mode().IsRegular() {
		errs = append(errs, fmt.Sprintf(readingDefinitions+"%s: not read: it is %s, not a directory; to use them, the user makes it a directory that holds the definitions",
			workflow.ShownPath(e.workflow), (&durable.NotRegularError{Mode: fi.Mode()}).Kind()))
	} else if notDir {
		// A definition copied to .claude/workflows before the directory was made. The model
		// reads this too: moving the file is the user's step, not one it is sent to take.
		errs = append(errs, fmt.Sprintf("workflow definition %s: is a file, not a directory: Cairn reads definitions from %s; to use it, the user makes it a directory and moves the file into it under that name",
			workflow.ShownPath(e.workflow), filepath.Join(".claude", "workflows", "NAME.md")))
	} else if link := linkTrouble(e.workflow, err); link != "" {
		errs = append(errs, fmt.Sprintf(readingDefinitions+"%s: not read: %s"+pointIt, workflow.ShownPath(e.workflow), link))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Sprintf(readingDefinitions+"%s: %v", workflow.ShownPath(e.workflow), err))
	}
	dirTrouble := len(errs) > 0 // then no file is read, and errs stays this one
	// In name order, so that the files past the budget are always the same ones.
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	total, files := 0, 0
	var unread []string // files not read: each stands for the type its name gives
	// past are the files past the budget (the last ones in name order), said in one warning:
	// byCount when the number of files ran out first, not the bytes.
	var past []string
	byCount := false
	var misnamed []string // files ending in .MD or another case of .md, said in one warning
	probed := 0           // folders looked into for definitions put there
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), ".#") {
			// Emacs's lock file of a definition open in it (a link that leads nowhere): no
			// definition, and there only while the file is edited.
			continue
		}
		// A directory named NAME.md is not passed over: it is read, and told as not a regular
		// file, as a link to a directory is (someone meant the definition there).
		if !strings.HasSuffix(ent.Name(), ".md") && ent.IsDir() && probed < maxFoldersProbed {
			// team/review.md: its author meant a definition, which no reader looks for there.
			// A few folders are looked into, each up to its first .md file. The model reads
			// this too: moving the files is the user's step, not one it is sent to take.
			probed++
			sub := filepath.Join(e.workflow, ent.Name())
			if has, _ := durable.DirHasName(sub, func(n string) bool { return strings.HasSuffix(n, ".md") }); has {
				errs = append(errs, fmt.Sprintf("workflow definition %s: not read: it is a folder, and Cairn reads only the definitions directly in %s; to use them, the user moves its .md files up (or links them there)",
					workflow.ShownPath(sub), filepath.Join(".claude", "workflows")))
			}
			continue
		}
		if !strings.HasSuffix(ent.Name(), ".md") {
			if ext := filepath.Ext(ent.Name()); !ent.IsDir() && strings.EqualFold(ext, ".md") {
				// mine.MD: its author meant a definition; every reader takes only .md.
				misnamed = append(misnamed, ent.Name())
			}
			continue
		}
		p := filepath.Join(e.workflow, ent.Name())
		if len(past) == 0 && files >= maxDefinitionFiles {
			byCount = true
		}
		if len(past) > 0 || byCount {
			past = append(past, p)
			continue
		}
		files++
		data, err := durable.ReadPath(p, workflow.MaxDefinitionSize, true)
		if err != nil {
			// ls lists it: "no such file", or "a symlink, FIFO, device or directory", would
			// leave the person guessing; the path is said once.
			msg := err.Error()
			fi, serr := os.Stat(p)
			switch link := linkTrouble(p, err); {
			case link != "":
				msg = "not read: " + link + ": point it at the definition file"
			case serr == nil && errors.Is(err, durable.ErrTooLarge) && fi.Size() > workflow.MaxDefinitionSize:
				msg = fmt.Sprintf("not read: it is %d bytes, more than the %d a definition may have: shorten it", fi.Size(), workflow.MaxDefinitionSize)
			case serr == nil && errors.Is(err, durable.ErrNotRegular):
				msg = fmt.Sprintf("not read: it is %s, not a regular file: put the definition in a regular file of that name", (&durable.NotRegularError{Mode: fi.Mode()}).Kind())
			}
			errs = append(errs, fmt.Sprintf("workflow definition %s: %s", workflow.ShownPath(p), msg))
			unread = append(unread, p)
			continue
		}
		if total += len(data); total > maxDefinitionBytes {
			past = append(past, p)
			continue
		}
		user[p] = data
	}
	// Each with its step, up to the few a report shows; thousands of them, one line each, took
	// a session start past its deadline, so the rest are told in one.
	const misnamedTold = 5
	for i, f := range misnamed {
		if n := len(misnamed) - i - 1; i == misnamedTold && n > 0 {
			errs = append(errs, fmt.Sprintf("workflow definition %s: not read, nor the %d file%s after it that end in another case of .md: Cairn reads only files ending in .md, in lower case; rename them",
				workflow.ShownPath(filepath.Join(e.workflow, f)), n, workflow.Plural(n)))
			break
		}
		errs = append(errs, fmt.Sprintf("workflow definition %s: not read: Cairn reads only files ending in .md, in lower case; rename it to %s",
			workflow.ShownPath(filepath.Join(e.workflow, f)), workflow.ShownPath(strings.TrimSuffix(f, filepath.Ext(f))+".md")))
	}
	if len(past) > 0 {
		limit := fmt.Sprintf("%d MiB of definitions", maxDefinitionBytes>>20)
		if byCount {
			limit = fmt.Sprintf("%d definition files", maxDefinitionFiles)
		}
		nor := ""
		if n := len(past) - 1; n > 0 {
			nor = fmt.Sprintf(", nor the %d file%s after it in name order", n, workflow.Plural(n))
		}
		errs = append(errs, fmt.Sprintf("workflow definition %s: not read%s: Cairn reads at most %s from %s, in name order; move some elsewhere",
			workflow.ShownPath(past[0]), nor, limit, workflow.ShownPath(e.workflow)))
		unread = append(unread, past...)
	}
	var parse workflow.ParseFunc
	if e.cfg.YAML != nil {
		parse = e.cfg.YAML.ParseDefinition
	}
	defs, derrs := workflow.LoadDefinitions(user, parse)
	for _, d := range derrs {
		errs = append(errs, d.Error())
	}
	for _, p := range unread {
		defs.NotLoaded(p, workflow.FileType(p))
	}
	sort.Strings(errs)
	e.defs, e.defErrs, e.defsDir = defs, errs, dirTrouble
}

// linkTrouble says why path, which err (from opening it) says cannot be opened, leads nowhere
// when it is a symbolic link whose target does not exist or whose links lead round in a loop
// ("it is a symbolic link to TARGET, ..."): the system's "no such file or directory" about a
// path ls lists, or "too many levels of symbolic links", leave the person guessing. "" when
// it is not such a link.
func linkTrouble(path string, err error) string {
	if err == nil {
		return ""
	}
	target, lerr := os.Readlink(path)
	switch {
	case lerr != nil:
		return ""
	case errors.Is(err, syscall.ELOOP):
		return fmt.Sprintf("it is a symbolic link to %s, and the links from there lead round in a loop", workflow.ShownPath(target))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("it is a symbolic link to %s, which does not exist", workflow.ShownPath(target))
	}
	return ""
}

func (e *Engine) openMemory(found project.Found) {
	loc, err := memory.Dir(memory.Env{Getenv: e.cfg.Getenv, WorkDir: e.cfg.WorkDir, Project: &found})
	switch {
	case err != nil:
		e.memWarn = memory.UnavailableMessage + ": " + err.Error()
	case loc.Refused:
		e.memWarn = memory.UnavailableMessage + ": " + loc.Reason // on in Claude Code, refused by Cairn
	case loc.Disabled:
		e.memWarn = "Auto-memory is off (" + loc.Reason + "): Cairn writes no L2 lines"
	}
	// The topic file names the state directory, so that another project writing there tells
	// its lines from this one's.
	opt := memory.Options{Now: e.cfg.Now, LockWait: e.cfg.LockWait, LockUntil: e.cfg.LockUntil, StateDir: e.StateDir()}
	e.mem = memory.New(loc, opt)
}

func (e *Engine) now() time.Time { return e.cfg.Now().UTC() }

// holder is this engine's session and client as workflow.OwnerLive compares an owner with
// them: actor without the host and the client start, which it asks of the system (the host's
// secret scan costs a fresh hook most of a millisecond) and OwnerLive does not compare.
func (e *Engine) holder() workflow.Actor {
	return workflow.Actor{SessionID: e.cfg.SessionID, PID: e.cfg.PID}
}

func (e *Engine) actor() workflow.Actor {
	a := e.holder()
	if a.PID > 0 { // the machine a pid is on, and its process
		a.Host, a.ClientStart = e.host(), e.clientStart()
	}
	return a
}

// decodeLenient decodes one of the engine's small documents (the L2 ledger, the
// configuration, the Stop hook's state) into a zero T. It is lenient on purpose: a member of
// the wrong type leaves that field zero and the rest is used; input that is not JSON gives
// the zero T. Losing a hint must never stop a hook.
func decodeLenient[T any](data []byte) T {
	var v T
	_ = json.Unmarshal(data, &v)
	return v
}

// active reads the active workflow, or nil when there is none. Notices say what the store
// repaired on the way.
func (e *Engine) active() (*workflow.Record, []store.Notice, error) {
	r, w, err := e.activeRead()
	return r, w.Notices, err
}

// activeRead is active with the store's read it came from (its notices, whether it read the
// journal).
func (e *Engine) activeRead() (*workflow.Record, store.Workflow, error) {
	w, err := e.st.ReadWorkflow()
	if errors.Is(err, store.ErrNotFound) {
		return nil, w, nil
	}
	if err != nil {
		return nil, w, stateErr(err)
	}
	r, err := w.Record()
	if err != nil {
		return nil, w, &recordError{id: w.ID, err: err}
	}
	return r, w, nil
}

// recordError is an active workflow whose snapshot is a record of this Cairn's schema by its
// version, id and revision but does not decode as one (a hand edit): on record all the same.
type recordError struct {
	id  string
	err error
}

func (e *recordError) Error() string {
	who := "the active workflow's record"
	if e.id != "" {
		who = "workflow " + e.id + "'s record"
	}
	return fmt.Sprintf("%s does not read as one (%v) and was left as it is; nothing was changed: %s", who, cmp.Or(errors.Unwrap(e.err), e.err), RecordAsk)
}

// RecordAsk ends the refusal of a change to a workflow whose record does not decode (a hand
// edit): doctor names the field. The CLI puts the person's own step in its place.
const RecordAsk = "ask the user to run `cairn doctor`, which names what to correct, then try again"

func (e *recordError) Unwrap() error { return e.err }

// definitionFor finds the definition of a record's type (TypeDefinition).
func (e *Engine) definitionFor(r *workflow.Record) (*workflow.Definition, error) {
	if d := e.builtinOnly(r.Type); d != nil {
		return d, nil
	}
	return e.TypeDefinition(r.Type)
}

// TypeDefinition finds the definition of type typ, or says why there is none: an unknown
// type, or a project file of the type that does not load. A definition that stands in for a
// user file of the type that does not read or parse (workflow.Definitions.Broken), the
// built-in one or a file that file would win against, is not the type's definition: a
// workflow may have run under the broken file, with other phases and gates, so the type has
// none until it loads.
func (e *Engine) TypeDefinition(typ string) (*workflow.Definition, error) {
	defs := e.definitions()
	d, err := defs.Get(typ)
	if err == nil {
		if f := defs.Broken(d.Name); f != "" {
			return nil, fmt.Errorf("the project's %s definition in %s does not load", d.Name, f)
		}
	}
	return d, err
}

// quickDefinition is the definition of type typ as the status line needs it, on every refresh
// of Claude Code's status bar: the built-in fast path, else, before the definitions are
// loaded, the file named after the type, read and parsed alone, when it defines that type.
// Only otherwise (a type defined in a file of another name, or none) are all of them loaded.
// Two files that define one type are a broken setup the full load reports, and the file
// named after it wins there too (workflow.DefinitionFile). nil when the type is not defined.
func (e *Engine) quickDefinition(typ string) *workflow.Definition {
	if d := e.builtinOnly(typ); d != nil {
		return d
	}
	e.defsMu.Lock()
	loaded := e.defs != nil
	e.defsMu.Unlock()
	// A file past the definitions' budget is one the full load skips: it decides, and says why.
	if name := workflow.NormalizeName(typ); !loaded && e.cfg.YAML != nil && workflow.ValidName(name) == nil && e.withinDefinitionBudget(workflow.DefinitionFile(name)) {
		p := filepath.Join(e.workflow, workflow.DefinitionFile(name))
		if data, err := durable.ReadPath(p, workflow.MaxDefinitionSize, true); err == nil {
			if d, err := e.cfg.YAML.ParseDefinition(p, data); err == nil && d.Name == name {
				return d
			}
		}
	}
	d, _ := e.TypeDefinition(typ)
	return d
}

// withinDefinitionBudget reports whether the full load reads the definition file of that base
// name: it reads them in name order, each counted once read, and stops at the first one that
// takes the total past maxDefinitionBytes, or at the maxDefinitionFiles-th. Sizes are taken by
// stat, so that the status line reads no file but its own, and only once the number is
// within the cap, so that it takes no more stats than that.
func (e *Engine) withinDefinitionBudget(file string) bool {
	entries, err := durable.ReadDirPath(e.workflow)
	if err != nil {
		return false
	}
	entries = slices.DeleteFunc(entries, func(ent fs.DirEntry) bool {
		n := ent.Name()
		return !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".#") || n > file
	})
	if len(entries) > maxDefinitionFiles {
		return false
	}
	var total int64
	for _, ent := range entries {
		n := ent.Name()
		// The full load follows a link and counts no file it cannot read.
		if st, err := os.Stat(filepath.Join(e.workflow, n)); err == nil && st.Mode().IsRegular() && st.Size() <= workflow.MaxDefinitionSize {
			total += st.Size()
		}
	}
	return total <= maxDefinitionBytes
}

// builtinOnly is the session-start fast path: before the definitions are loaded, and when
// the project defines no workflows of its own (so nothing can override a built-in), a type is
// looked up in the pre-parsed built-ins, with no YAML parsed. nil means: load them all.
func (e *Engine) builtinOnly(typ string) *workflow.Definition {
	e.defsMu.Lock()
	loaded := e.defs != nil
	e.defsMu.Unlock()
	if loaded || workflow.ValidName(workflow.NormalizeName(typ)) != nil {
		return nil
	}
	// Only a file the full load reads or warns about (NAME.md, NAME.MD) takes it there: stray
	// files (.DS_Store, notes, thousands of them) do not, and the listing stops at the first.
	read, err := durable.DirHasName(e.workflow, func(n string) bool {
		return strings.EqualFold(filepath.Ext(n), ".md") && !strings.HasPrefix(n, ".#")
	})
	if read || err != nil && !errors.Is(err, fs.ErrNotExist) || linkTrouble(e.workflow, err) != "" {
		return nil
	}
	d, _ := workflow.BuiltinDefinition(typ) // nil when there is none
	return d
}
