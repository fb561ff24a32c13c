package cli

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/store"
)

// l2MarkFile is the engine's record of what Cairn last wrote to auto-memory (engine's
// l2-mark document), from which a session restores lines another writer dropped.
const l2MarkFile = "l2-mark.json"

// uninstallPlan is what `cairn uninstall` removes (and, with --json, says).
type uninstallPlan struct {
	MemoryDir   string   `json:"memory_dir,omitempty"`
	MemoryLines []string `json:"memory_lines"`
	MemoryFiles []string `json:"memory_files"`
	DataDirs    []string `json:"data_dirs"`
	Links       []string `json:"links"`
	Mark        string   `json:"mark,omitempty"` // the state dir's record of Cairn's memory lines, which would put them back
	StateDir    string   `json:"state_dir,omitempty"`
	KeepState   bool     `json:"keep_state"`
	Removed     bool     `json:"removed"`
	Notes       []string `json:"notes,omitempty"`
	Next        string   `json:"next,omitempty"` // the one step after this, what the text output ends with
}

// pluginNext is the step after Cairn's files are out: the plugin itself.
const pluginNext = "claude plugin uninstall cairn@cairn, then claude plugin marketplace remove cairn"

func (p *uninstallPlan) empty() bool {
	return len(p.MemoryLines) == 0 && len(p.MemoryFiles) == 0 && len(p.DataDirs) == 0 && len(p.Links) == 0 && p.Mark == "" &&
		(p.KeepState || p.StateDir == "")
}

func runUninstall(a *app, _ []string, _ *engine.Engine) error {
	wd, err := a.workDir()
	if err != nil {
		return fmt.Errorf("finding the working directory: %w", err)
	}
	// The Memory is never nil: when Open fails, Footprint returns Open's error.
	mem, _ := memory.Open(memory.Env{Getenv: a.getenv, WorkDir: wd, EvenOff: true}, memory.Options{})
	plan := uninstallPlan{KeepState: !a.opt.withState, MemoryLines: []string{}, MemoryFiles: []string{}}
	// What could not be looked at in auto-memory (a linked MEMORY.md, say) may hold Cairn's line
	// and files still: not removed, whatever else is.
	unread := ""
	left := "" // the step after which Cairn touches a memory file it leaves as it is (memory.LeftAlone)
	// The step before --yes can take Cairn's lines out of a MEMORY.md it reads but leaves as it
	// is (read-only): the plan shows them, and --yes alone would fail on them.
	ahead := ""
	mark := "" // the state dir's memory mark, removed first (removeMark), whether shown or in the state removed

	// What is removed from auto-memory, no more: what the person is shown.
	var shown memory.Footprint
	switch fp, err := mem.Footprint(); {
	case err == nil:
		shown = fp
		plan.MemoryDir, plan.MemoryLines, plan.MemoryFiles = fp.Dir, orEmpty(fp.Lines), orEmpty(fp.Files)
		if fp.IndexLeft != "" {
			plan.Notes = append(plan.Notes, "auto-memory: "+fp.IndexLeft+", so it holds no line of Cairn's: left as it is")
		}
		for _, n := range fp.Edited {
			plan.Notes = append(plan.Notes, "auto-memory: "+n+" was changed since Cairn wrote it, so it is a memory of yours now: kept, with its line in MEMORY.md")
		}
		for _, n := range fp.Unproven {
			plan.Notes = append(plan.Notes, "auto-memory: "+n+" was written by an older Cairn, which kept no record to tell whether it was changed since, so it may hold lines of yours: kept, with its line in MEMORY.md")
		}
		if err := mem.IndexLeftAlone(); len(fp.Lines) > 0 && memory.LeftAlone(err) {
			ahead = "auto-memory: " + memoryFailure(err) + "; " + memory.LeftAloneStep(err)
		}
	case memory.IsUnavailable(err) && mem.Location().Disabled:
		// Found even where it is off (EvenOff): only Cairn's refusal of the directory is left.
		plan.Notes = append(plan.Notes, "auto-memory: "+mem.Location().Reason)
	default:
		unread = "auto-memory: " + memoryFailure(err)
		plan.Notes = append(plan.Notes, unread)
		if memory.LeftAlone(err) {
			left = memory.LeftAloneStep(err)
		}
	}
	home := a.home()
	if home == "" {
		// What was not looked for would be said to be not there.
		what := "~/.local/bin/cairn"
		if pluginsDir(a.getenv, home) == "" {
			what = "Claude Code's plugin data and " + what
		}
		return &codeError{code: ExitRefused, msg: "HOME is not set to an absolute path, so " + what + " cannot be found; set HOME, then run cairn uninstall again"}
	}
	plan.DataDirs = orEmpty(dataDirs(a.getenv, home))
	exe, _ := a.executable()
	plan.Links = orEmpty(cairnLinks(home, exe, runtime.GOOS))
	if dir, err := project.StateDir(a.getenv, wd); err == nil && isDir(dir) {
		root, _ := project.Root(a.getenv, wd)
		switch {
		case durable.CheckBeneath(root, dir) != nil:
			// A linked .claude leads to another project's state, which the store refuses to
			// use from here: it is not this project's to remove, nor is its memory mark.
			plan.Notes = append(plan.Notes, dir+" is reached through a symlink, so it is not this project's state (Cairn does not use it from here): left alone")
			dir = ""
		case a.opt.withState && !ownStateDir(dir):
			plan.Notes = append(plan.Notes, dir+" is not a project's .claude/cairn (CAIRN_STATE_DIR?): remove it yourself if you mean to")
		default:
			plan.StateDir = dir
		}
		if m := filepath.Join(dir, l2MarkFile); dir != "" && fileExists(m) {
			mark = m
			if !(a.opt.withState && plan.StateDir != "") {
				plan.Mark = m
			}
		}
	}

	if plan.empty() && unread != "" {
		if a.json {
			if err := a.printJSON(plan); err != nil {
				return err
			}
		} else {
			a.say(slices.DeleteFunc(slices.Clone(plan.Notes), func(n string) bool { return n == unread })...) // the error says it
		}
		return uninstallFailed([]string{unread}, left)
	}
	if plan.empty() {
		tidyMemory(mem, &shown)
		if a.json {
			plan.Next = pluginNext
			return a.printJSON(plan)
		}
		a.say(plan.Notes...)
		fmt.Fprintln(a.stdout, "Nothing of Cairn's to remove here.")
		if plan.StateDir != "" {
			fmt.Fprintf(a.stdout, "It keeps the workflow state in %s (--with-state removes it too).\n", clean(plan.StateDir))
		}
		a.uninstallNext()
		return nil
	}
	if !a.json {
		a.showPlan(&plan)
	}
	if !a.opt.yes {
		if ahead == "" {
			ahead = left
		}
		plan.Next = "cairn uninstall --yes removes it"
		if ahead != "" {
			// --yes alone would leave what auto-memory holds: the step comes first.
			plan.Next = ahead + ", then cairn uninstall --yes removes it all"
		}
		// --json never asks: the plan it would ask about is not shown as text, and the
		// answer's message would not be JSON. A script says --yes.
		if a.json {
			return a.printJSON(plan)
		}
		if !a.interactive() {
			fmt.Fprintf(a.stdout, "Nothing was removed: %s.\n", plan.Next)
			return nil
		}
		plan.Next = ""
		fmt.Fprint(a.stderr, "Remove all of this? [y/N] ")
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
			fmt.Fprintln(a.stdout, "Nothing was removed.")
			return nil
		}
	}

	var failed, later []string
	full := false // a write the full disk refused: a retry fails the same way until space is freed
	// A removal refused by the file system (another user's files, a read-only mount): so is a
	// retry, until they are made writable.
	denied := false
	check := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, err.Error())
			denied = denied || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
		}
	}
	// The mark goes first: with Cairn's lines gone and the mark still there, a session's Stop
	// would put them back from it. While it cannot go, nothing in auto-memory does.
	markErr := error(nil)
	if mark != "" {
		markErr = removeMark(mark)
		check(markErr)
	}
	if len(plan.MemoryLines)+len(plan.MemoryFiles) > 0 && markErr == nil {
		done, err := mem.RemoveCairn(&shown)
		if err != nil {
			failed = append(failed, "auto-memory: "+memoryFailure(err))
			full = errors.Is(err, syscall.ENOSPC)
			if memory.LeftAlone(err) {
				left = memory.LeftAloneStep(err)
			}
		} else {
			// What was removed, as it was: a file changed since it was shown is kept.
			plan.MemoryLines, plan.MemoryFiles = orEmpty(done.Lines), orEmpty(done.Files)
			for _, n := range done.Edited {
				later = append(later, "auto-memory: "+n+" was changed while cairn uninstall ran, so it is a memory of yours now: kept, with its line in MEMORY.md")
			}
			for _, n := range done.Later {
				later = append(later, "auto-memory: "+n+" was recorded after the list was shown, so it was kept; cairn uninstall again removes it")
			}
			removeMemoryLock(plan.MemoryDir)
			removeEmptyDir(plan.MemoryDir)
		}
	} else if markErr == nil && unread == "" {
		tidyMemory(mem, &shown)
	}
	// Claude Code's data directories are Cairn's whole; another (the cache, a CLAUDE_PLUGIN_DATA
	// of the user's) holds the user's files too.
	claudes := filepath.Join(pluginsDir(a.getenv, home), "data")
	for _, d := range plan.DataDirs {
		if filepath.Dir(d) != claudes {
			check(removeOwn(d))
			continue
		}
		check(os.RemoveAll(d))
	}
	for _, l := range plan.Links {
		check(os.Remove(l))
	}
	if !plan.KeepState && plan.StateDir != "" {
		check(os.RemoveAll(plan.StateDir))
	}
	plan.Notes = append(plan.Notes, later...)
	plan.Notes = append(plan.Notes, failed...)
	if unread != "" {
		failed = append([]string{unread}, failed...) // a note already
	}
	plan.Removed = len(failed) == 0
	if plan.Removed {
		plan.Next = pluginNext
	}
	if a.json {
		if err := a.printJSON(plan); err != nil {
			return err
		}
	} else if len(failed) == 0 {
		a.say(later...)
		fmt.Fprintln(a.stdout, "Removed.")
		a.uninstallNext()
	}
	if len(failed) > 0 && full {
		what, step := noRoom(durable.NoFreeInodes(plan.MemoryDir))
		return &codeError{code: ExitInternal, msg: fmt.Sprintf("not everything was removed: %s: %s; %s, then run cairn uninstall again", strings.Join(failed, "; "), what, step)}
	}
	if len(failed) > 0 && denied && left == "" {
		left = "make it writable"
	}
	if len(failed) > 0 {
		return uninstallFailed(failed, left)
	}
	return nil
}

// uninstallFailed is the error of an uninstall that left some of Cairn's things where they are:
// what failed, and step, the one after which the same command removes them ("" to retry).
func uninstallFailed(failed []string, step string) error {
	if step == "" {
		return fmt.Errorf("not everything was removed: %s; run cairn uninstall again to retry", strings.Join(failed, "; "))
	}
	return fmt.Errorf("not everything was removed: %s; %s, then run cairn uninstall again", strings.Join(failed, "; "), step)
}

// memoryFailure is what failed in the memory directory, without the memory's warning that
// learnings will not persist: a session's words, not an uninstall's.
func memoryFailure(err error) string {
	if ue, ok := errors.AsType[*memory.UnavailableError](err); ok {
		return ue.Cause()
	}
	return err.Error()
}

// l2MarkDoc is the mark's document name in the store (engine's l2MarkDoc).
const l2MarkDoc = "l2-mark"

// markLockWait bounds the wait for the mark's lock; a variable for tests.
var markLockWait = store.DefaultLockWait

// removeMark removes the memory mark at path under its lock, which a session's Stop holds while
// it restores Cairn's lines from the mark: a restore under way ends first (and what it put back
// is removed after), and one after it finds no mark. A lock held longer than markLockWait is an
// error that says so, and the mark stays. A state directory the store cannot open (a symlinked
// one) has its mark removed without the lock, as before.
func removeMark(path string) error {
	st, err := store.Open(filepath.Dir(path), store.WithNoCreate(), store.WithLockWait(markLockWait))
	if err != nil {
		return os.Remove(path)
	}
	defer st.Close()
	_, _, err = st.UpdateOwn(l2MarkDoc, func([]byte) ([]byte, error) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, nil
	})
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		said := te.GaveUp()
		if r := te.Resume(); r != "" { // a stopped holder keeps the lock until resumed
			said += "; " + r
		}
		return errors.New("memory mark: a Cairn session is restoring its auto-memory lines from it, so they were left too: " + said)
	}
	return err
}

// writtenRecordFile is the memory package's record of the learnings Cairn wrote (its writtenFile).
const writtenRecordFile = ".cairn-written.json"

// tidyMemory takes Cairn's record and lock out of the memory directory where none of its lines
// or files are left there (removed by hand, or a workflow's line by its end): uninstall has
// nothing to show there, and they stayed for good. A file shown is never touched here: with
// shown empty, RemoveCairn only drops the record's names that are no longer Cairn's.
func tidyMemory(mem *memory.Memory, shown *memory.Footprint) {
	if shown.Dir == "" || !slices.ContainsFunc([]string{memory.LockFile, writtenRecordFile}, func(n string) bool {
		_, err := os.Lstat(filepath.Join(shown.Dir, n))
		return err == nil
	}) {
		return
	}
	if _, err := mem.RemoveCairn(shown); err == nil {
		removeMemoryLock(shown.Dir)
		removeEmptyDir(shown.Dir)
	}
}

// removeMemoryLock removes the memory directory's lock file, once Cairn's lines and files are
// out, under the lock itself and without waiting: while a Cairn process holds it, removing
// it would let the next writer lock a new file beside the holder's, so it is left. Like the
// memory package, it locks a symlinked directory where it really is.
func removeMemoryLock(dir string) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	d, err := durable.OpenDir(dir)
	if err != nil {
		return
	}
	defer d.Close()
	if fi, err := d.Lstat(memory.LockFile); err != nil || !fi.Mode().IsRegular() {
		return
	}
	unlock, err := d.Lock(memory.LockFile, 0)
	if err != nil {
		return
	}
	_ = d.Remove(memory.LockFile)
	_ = unlock()
}

// removeEmptyDir removes the memory directory once Cairn's lines, files and lock are out and
// nothing else is in it (Cairn made it for its line; Claude Code makes it again at a session's
// start). Anything in it, put there at any moment, makes the removal fail: it stays. A
// symbolic link (a moved ~/.claude) stays, and so does the directory it leads to.
func removeEmptyDir(dir string) {
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		_ = os.Remove(dir)
	}
}

func (a *app) showPlan(p *uninstallPlan) {
	w := a.stdout
	fmt.Fprintln(w, "cairn uninstall removes:")
	each := func(format string, items []string) {
		for _, s := range items {
			fmt.Fprintf(w, format, clean(s))
		}
	}
	if len(p.MemoryLines)+len(p.MemoryFiles) > 0 {
		fmt.Fprintf(w, "  from auto-memory %s:\n", clean(p.MemoryDir))
		each("    line in MEMORY.md: %s\n", p.MemoryLines)
		each("    file %s\n", p.MemoryFiles)
	}
	if p.Mark != "" {
		fmt.Fprintf(w, "  memory mark: %s (with it, the next session would write the lines back)\n", clean(p.Mark))
	}
	each("  binaries: %s\n", p.DataDirs)
	each("  link: %s\n", p.Links)
	if p.StateDir != "" {
		if p.KeepState {
			fmt.Fprintf(w, "It keeps the workflow state in %s (--with-state removes it too).\n", clean(p.StateDir))
		} else {
			fmt.Fprintf(w, "  workflow state: %s (active workflow, archives, checkpoints, logs)\n", clean(p.StateDir))
		}
	}
	a.say(p.Notes...)
}

// say prints notes on stderr, one line each.
func (a *app) say(notes ...string) {
	for _, n := range notes {
		fmt.Fprintf(a.stderr, "cairn %s: %s\n", a.name, textsafe.OneLine(n))
	}
}

func (a *app) uninstallNext() {
	fmt.Fprintln(a.stdout, "To remove the plugin from Claude Code too: "+pluginNext+".")
}

// home is the user's home directory, from the environment cairn was given; "" when it is not an
// absolute path (HOME=foo names a directory under wherever cairn runs, not the user's).
func (a *app) home() string {
	h := a.getenv("HOME")
	if h == "" {
		h, _ = os.UserHomeDir()
	}
	if !filepath.IsAbs(h) {
		return ""
	}
	return h
}

// pluginsDir is Claude Code's plugin directory.
var pluginsDir = project.PluginsDir

// dataDirs are the directories Cairn's launcher builds or downloads binaries into: Claude
// Code's per-plugin data directories for Cairn (plugins/data/cairn-<marketplace>, named from
// the plugin id with every character outside [A-Za-z0-9_-] turned into '-', and cairn-inline
// for --plugin-dir), $CLAUDE_PLUGIN_DATA when it is one of those, and the launcher's own
// fallback outside Claude Code (project.CacheDir).
func dataDirs(getenv func(string) string, home string) []string {
	var out []string
	add := func(d string) {
		// Only absolute paths: a relative one names a directory under wherever uninstall runs.
		if filepath.IsAbs(d) && isDir(d) && !slices.Contains(out, filepath.Clean(d)) {
			out = append(out, filepath.Clean(d))
		}
	}
	if d := getenv("CLAUDE_PLUGIN_DATA"); d != "" && strings.HasPrefix(strings.ToLower(filepath.Base(d)), "cairn-") && launcherData(d) {
		add(d)
	}
	if p := pluginsDir(getenv, home); p != "" {
		ents, _ := os.ReadDir(filepath.Join(p, "data"))
		for _, e := range ents {
			if d := filepath.Join(p, "data", e.Name()); e.IsDir() && strings.HasPrefix(strings.ToLower(e.Name()), "cairn-") && launcherData(d) {
				add(d)
			}
		}
	}
	// The Stop hook's mark is Cairn's there too (a user's cache may hold another cairn).
	if d := project.CacheDir(getenv, home); d != "" && (launcherData(d) || fileExists(filepath.Join(d, hook.StopMarkFile))) {
		add(d)
	}
	return out
}

// launcherData: dir holds what Cairn's launcher (hooks/launch, hooks/install) writes there:
// its .install-lock-V or .download-failed-V, or a bin-VERSION holding Cairn's cairn-mcp or the
// stamp the launcher writes (.checksums); or nothing but bin-V, build-*.log, cairn (the link
// to the newest set), .cairn-link and .cairn-link-doctor (that link made aside, left by an
// install or doctor --link killed before its rename) and .install-said (the install failures each session was shown) entries (a build that failed, a set from an older Cairn), or nothing. A cairn-* data directory with
// none of Cairn's own and anything else is another plugin's whose name starts with cairn-,
// which may keep a bin-* or build log of its own.
func launcherData(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	foreign := false
	for _, e := range ents {
		n := e.Name()
		d := filepath.Join(dir, n)
		switch {
		case strings.HasPrefix(n, ".install-lock-") || strings.HasPrefix(n, ".download-failed-"):
			return true
		case strings.HasPrefix(n, "bin-") && cairnSet(d):
			return true
		case !launcherName(n):
			foreign = true
		}
	}
	return !foreign
}

// launcherName: n is a name the launcher writes in its data directory (see launcherData); a
// set is named after a version (bin-V, bin-V.tmp), as hooks/install takes them: another bin-*
// is not the launcher's.
func launcherName(n string) bool {
	v := strings.TrimSuffix(strings.TrimPrefix(n, "bin-"), ".tmp")
	return strings.HasPrefix(n, ".install-lock-") || strings.HasPrefix(n, ".download-failed-") || strings.HasPrefix(n, "bin-") && (v == "dev" || v != "" && v[0] >= '0' && v[0] <= '9') ||
		strings.HasPrefix(n, "build-") && strings.HasSuffix(n, ".log") || slices.Contains([]string{"cairn", ".cairn-link", doctorLinkAside, ".install-said"}, n)
}

// removeOwn removes from dir (the user's cache, project.CacheDir, or a CLAUDE_PLUGIN_DATA of
// theirs) what the launcher and the Stop hook write there, then dir once that leaves it empty:
// anything else is the user's or another program's, and stays.
func removeOwn(dir string) error {
	ents, err := os.ReadDir(dir)
	var errs []error
	for _, e := range ents {
		n, d := e.Name(), filepath.Join(dir, e.Name())
		// The launcher's cairn is its link (launcherLink). A set is its own as hooks/install
		// takes them: named after a version and holding Cairn's binaries or what an install cut
		// short left (a download's .part or .http, a build's .link), or stamped whatever
		// plugin.json named its version; another bin- directory is the other program's.
		// Of the rest, only the install lock is a directory the launcher makes: at a file's name
		// (a failure record, a build log) a directory is the user's, and only an empty one goes,
		// as does an empty bin-V or bin-V.tmp (an install killed right after making it).
		set, lock := strings.HasPrefix(n, "bin-"), strings.HasPrefix(n, ".install-lock-")
		switch {
		case set && (launcherName(n) && (cairnSet(d) || fileExists(filepath.Join(d, ".part")) || fileExists(filepath.Join(d, ".http")) || isDir(filepath.Join(d, ".link"))) || fileExists(filepath.Join(d, ".checksums"))) || lock:
			errs = append(errs, os.RemoveAll(d))
		case n == hook.StopMarkFile || launcherName(n) && (n != "cairn" || launcherLink(d)):
			if ents, _ := os.ReadDir(d); len(ents) == 0 {
				errs = append(errs, os.Remove(d))
			}
		}
	}
	_ = os.Remove(dir)
	return errors.Join(append(errs, err)...)
}

// cairnLinks are the links to cairn that `make install` or `cairn doctor --link` made:
// linkPath when it is a symbolic link to a file named cairn (cairn.exe on Windows)
// that is this cairn (exe) or has Cairn's cairn-mcp beside it (as the plugin's bin/ and the launcher's
// bin-VERSION have), or that is gone (the plugin was removed first). A link to another
// program called cairn is not Cairn's.
func cairnLinks(home, exe, goos string) []string {
	if home == "" {
		return nil
	}
	l := linkPath(home, goos)
	t, err := os.Readlink(l)
	if err != nil || filepath.Base(t) != "cairn" && filepath.Base(t) != engine.Exe("windows", "cairn") {
		return nil
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(l), t)
	}
	// Through the launcher's DATA/cairn (see stableCairn) to the set it names.
	if p, err := filepath.EvalSymlinks(t); err == nil {
		t = p
	}
	if fi, err := os.Stat(t); err == nil && !hasCairnMCP(filepath.Dir(t)) {
		if self, err := os.Stat(exe); err != nil || !os.SameFile(fi, self) {
			return nil
		}
	}
	return []string{l}
}

// cairnSet: dir, a launcher's bin-VERSION, holds a set of Cairn's binaries or its stamp.
func cairnSet(dir string) bool {
	return hasCairnMCP(dir) || fileExists(filepath.Join(dir, ".checksums"))
}

// hasCairnMCP: dir holds Cairn's cairn-mcp, as a set for Windows names it or as any other.
func hasCairnMCP(dir string) bool {
	return fileExists(filepath.Join(dir, "cairn-mcp")) || fileExists(filepath.Join(dir, engine.Exe("windows", "cairn-mcp")))
}

// ownStateDir: a state directory uninstall may remove is a project's .claude/cairn, never a
// directory CAIRN_STATE_DIR names elsewhere.
func ownStateDir(dir string) bool {
	return filepath.Base(dir) == "cairn" && filepath.Base(filepath.Dir(dir)) == ".claude"
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// interactive: stdin and stdout are terminals, so a question can be asked and answered.
func (a *app) interactive() bool {
	return isTerminal(a.stdin) && isTerminal(a.stdout)
}

// isTerminal: v is a terminal (terminal_*.go), not a pipe, a file or another device.
func isTerminal(v any) bool {
	f, ok := stream(v).(*os.File)
	return ok && terminal(f)
}
