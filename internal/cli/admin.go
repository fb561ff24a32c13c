package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func runArchive(a *app, _ []string, e *engine.Engine) error { return a.told(e.Archive(a.opt.reason)) }

func runExpire(a *app, _ []string, e *engine.Engine) error { return a.told(e.ExpireTTL(a.opt.dryRun)) }

// doctorReport is `cairn doctor --json`.
type doctorReport struct {
	OK         bool           `json:"ok"`
	PluginRoot string         `json:"plugin_root,omitempty"`
	StateDir   string         `json:"state_dir,omitempty"`
	MemoryDir  string         `json:"memory_dir,omitempty"`
	Checks     []engine.Check `json:"checks"`
}

func runDoctor(a *app, _ []string, _ *engine.Engine) error {
	rep := doctorReport{OK: true}
	root, bin, how := locatePlugin(a.executable, a.getenv, dirExists)
	var own *engine.Check
	recorded := ""
	if root == "" {
		r, b, h := a.recordedPlugin(runtime.GOOS)
		switch {
		case a.getenv("CLAUDE_PLUGIN_ROOT") != "":
			recorded = r // the step names it: the variable is in the way
		case r != "":
			root, bin, how = r, b, h
			own = a.ownSetCheck(bin, runtime.GOOS)
		default:
			if r, b, h := builtFromPlugin(a.executable, dirExists); r != "" {
				root, bin, how = r, b, h
			}
		}
	}
	rep.PluginRoot = root
	if root == "" {
		// One step: a CLAUDE_PLUGIN_ROOT set by hand names the wrong directory; else the
		// plugin is not installed (the README's two commands: adding a marketplace that is
		// already there succeeds).
		fix := "install the plugin: claude plugin marketplace add cairn-dev/cairn && claude plugin install cairn@cairn"
		switch {
		case recorded != "":
			fix = "unset CLAUDE_PLUGIN_ROOT, then run cairn doctor again: Claude Code's installed plugins name " + recorded
		case a.getenv("CLAUDE_PLUGIN_ROOT") != "":
			fix = "set CLAUDE_PLUGIN_ROOT to the plugin's directory, the one that holds .claude-plugin/"
		case pluginsDir(a.getenv, a.home()) == "":
			// Claude Code's records were not looked at: the variable naming their directory
			// (project.PluginsDir) is unset or relative.
			v := "HOME"
			for _, k := range []string{"CLAUDE_CODE_PLUGIN_CACHE_DIR", "CLAUDE_CONFIG_DIR"} {
				if a.getenv(k) != "" {
					v = k
					break
				}
			}
			how = "no Cairn plugin found: " + v + " is not set to an absolute path, so Claude Code's installed plugins cannot be read; " + notInAPlugin
			fix = "set " + v + " to an absolute path, then run cairn doctor again"
		}
		rep.Checks = append(rep.Checks, engine.Check{Name: "plugin root", Detail: how, Fix: fix})
	} else {
		rep.Checks = append(rep.Checks, engine.Check{Name: "plugin root", OK: true, Detail: root + " (" + how + ")"})
		// A marketplace update under a running session (project.Superseded): the session's
		// hooks and tools run the old version until Claude Code restarts.
		if installed, running := project.Superseded(a.getenv, root); installed != "" {
			rep.Checks = append(rep.Checks, engine.Check{Name: "plugin version",
				Detail: fmt.Sprintf("%s is version %s, and Claude Code has since installed %s in its place: a session started before the update runs %s", root, running, installed, running),
				Fix:    "restart Claude Code to use version " + installed})
		}
	}
	if own != nil {
		rep.Checks = append(rep.Checks, *own)
	}
	rep.Checks = append(rep.Checks, a.linkCheck(a.opt.link, runtime.GOOS))
	e, err := a.engine()
	if err != nil {
		wd, werr := a.workDir()
		dir, derr := project.StateDir(a.getenv, wd)
		if c, other := engine.OwnerCheck(dir, nil); derr == nil && other {
			rep.Checks = append(rep.Checks, c) // the reason it cannot be opened
		} else {
			detail := err.Error()
			if se, ok := errors.AsType[*stateError](err); ok {
				detail = se.err.Error() // without "cairn doctor says what to fix": this is doctor
			}
			fix := "check that the project directory exists and is writable by this user, and that .claude/cairn is a real directory, not a symlink"
			// A link refused: the one step is the link made a directory, its state kept.
			if t, lerr := os.Readlink(dir); derr == nil && lerr == nil && errors.Is(err, durable.ErrSymlinkDir) {
				if !filepath.IsAbs(t) {
					t = filepath.Join(filepath.Dir(dir), t)
				}
				fix = "replace the link with a copy of the directory it names, then run cairn doctor again: rm " + vars.Quote(dir) + " && cp -R " + vars.Quote(t) + " " + vars.Quote(dir)
			}
			// The working directory removed under the shell: the state directory is not at fault.
			if werr != nil {
				detail, fix = wdFailed(werr), "cd into the project, then run cairn doctor again"
			}
			// A file in the way: the refusal's own step, for a person who then runs doctor again.
			if what, step, ok := strings.Cut(detail, " "+engine.InTheWayLeft); ok && strings.HasSuffix(step, "; "+engine.InTheWayStep) {
				detail, fix = what, engine.InTheWayLeft+strings.TrimSuffix(step, "; "+engine.InTheWayStep)+", then run cairn doctor again"
			}
			rep.Checks = append(rep.Checks, engine.Check{Name: "state directory", Detail: detail, Fix: fix})
		}
	} else {
		rep.StateDir, rep.MemoryDir = e.StateDir(), e.MemoryDir()
		_, outside := a.outsideProject()
		rep.Checks = append(rep.Checks, e.Doctor(engine.DoctorOptions{PluginRoot: root, BinDir: bin, Foreign: foreignBinary, Outside: outside})...)
		rep.Checks = append(rep.Checks, a.remoteChecks(e)...)
	}
	failed := 0
	for _, c := range rep.Checks {
		if !c.OK {
			failed++
		}
	}
	rep.OK = failed == 0
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		// Columns padded here, not by a tabwriter: it would count a coloured mark's escape
		// codes as columns, and push the fix lines out of line.
		markW, nameW := len("ok"), 0
		if failed > 0 {
			markW = len("FAIL")
		}
		for _, c := range rep.Checks {
			nameW = max(nameW, utf8.RuneCountInString(clean(c.Name)))
		}
		for _, c := range rep.Checks {
			mark, colour := "ok", green
			if !c.OK {
				mark, colour = "FAIL", red
			}
			fmt.Fprintf(a.stdout, "%s%*s  %-*s  %s\n", a.style(colour, mark), markW-len(mark), "", nameW, clean(c.Name), clean(c.Detail))
			if !c.OK && c.Fix != "" {
				fmt.Fprintf(a.stdout, "%*s  %*s  fix: %s\n", markW, "", nameW, "", clean(c.Fix))
			}
		}
		if failed == 0 {
			fmt.Fprintln(a.stdout, "All checks passed.")
		}
	}
	switch {
	case err != nil:
		return &codeError{code: ExitInternal, msg: err.Error(), silent: true}
	case failed > 0:
		return &codeError{code: ExitRefused, msg: fmt.Sprintf("%d check%s failed", failed, workflow.Plural(failed))}
	}
	return nil
}

// locatePlugin finds the installed plugin: the directory above the executable's bin/ when it
// holds .claude-plugin/, else $CLAUDE_PLUGIN_ROOT (an absolute path). It returns the root, the directory the
// binaries should be in, and how it was found (or why not).
func locatePlugin(executable func() (string, error), getenv func(string) string, isDir func(string) bool) (root, bin, how string) {
	dir := ""
	if exe, err := executable(); err == nil {
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			exe = p
		}
		dir = filepath.Dir(exe)
		if filepath.Base(dir) == "bin" && isDir(filepath.Join(filepath.Dir(dir), ".claude-plugin")) {
			return filepath.Dir(dir), dir, "above this executable's bin/"
		}
	}
	if r := getenv("CLAUDE_PLUGIN_ROOT"); r != "" {
		switch {
		case project.AbsDir(r) == "": // a directory under wherever doctor runs
			return "", "", fmt.Sprintf("CLAUDE_PLUGIN_ROOT=%s is not an absolute path", r)
		case !isDir(filepath.Join(r, ".claude-plugin")):
			return "", "", fmt.Sprintf("CLAUDE_PLUGIN_ROOT=%s holds no .claude-plugin/", r)
		}
		// The launcher's download or build (DATA/bin-VERSION; a marketplace install has no
		// bin/) is the set this executable runs from.
		if strings.HasPrefix(filepath.Base(dir), "bin-") {
			return r, dir, "from CLAUDE_PLUGIN_ROOT"
		}
		return r, filepath.Join(r, "bin"), "from CLAUDE_PLUGIN_ROOT"
	}
	// The agent's Bash has no CLAUDE_PLUGIN_ROOT, and a release's set (shared by every plugin
	// with the same checksums) names no plugin: SessionStart's line in CLAUDE_ENV_FILE (see
	// hooks/launch) names the session's, for the set it put on that PATH. One an update removed
	// is passed over.
	if r := project.AbsDir(getenv("CAIRN_PLUGIN_ROOT")); r != "" && strings.HasPrefix(filepath.Base(dir), "bin-") && isDir(filepath.Join(r, ".claude-plugin")) {
		return r, dir, "from CAIRN_PLUGIN_ROOT, the plugin this session started"
	}
	return "", "", "no Cairn plugin found: not in Claude Code's installed plugins, " + notInAPlugin
}

// recordedPlugin is installedPlugin for the project of the working directory.
func (a *app) recordedPlugin(goos string) (root, bin, how string) {
	wd, _ := a.workDir()
	if p, err := project.Root(a.getenv, wd); err == nil {
		wd = p
	}
	return installedPlugin(a.getenv, a.home(), wd, goos)
}

// notInAPlugin ends doctor's line for no plugin found: what else was looked at.
const notInAPlugin = "this executable is not in a plugin's bin/, CLAUDE_PLUGIN_ROOT is not set"

// builtFromPlugin finds the plugin a cairn of the launcher's Go build (DATA/bin-VERSION) was
// built from: its .built-from names it (see cairn_build in hooks/install). A checkout loaded
// with --plugin-dir is in no record of Claude Code's, and where it has no bin/ that set is what
// its hooks run and its agent finds on PATH.
func builtFromPlugin(executable func() (string, error), isDir func(string) bool) (root, bin, how string) {
	exe, err := realExecutable(executable)
	if err != nil {
		return
	}
	dir := filepath.Dir(exe)
	if !strings.HasPrefix(filepath.Base(dir), "bin-") {
		return
	}
	from := filepath.Join(dir, ".built-from")
	data, err := durable.ReadPath(from, 1<<16, true)
	r := strings.TrimSuffix(string(data), "\n")
	if err != nil || !filepath.IsAbs(r) || !isDir(filepath.Join(r, ".claude-plugin")) {
		return
	}
	return r, dir, "named by " + from + ", the checkout Go built this cairn from"
}

// ownSetCheck fails when this cairn runs from a launcher's set (DATA/bin-VERSION) other than
// bin, the installed plugin's: the set of the version before an update, which the launcher
// leaves for a day and a ~/.local/bin/cairn made by cairn doctor --link still runs. Nil when
// this cairn is elsewhere (a checkout's bin/, go run, a test binary). goos is the system the
// binaries are for.
func (a *app) ownSetCheck(bin, goos string) *engine.Check {
	exe, err := realExecutable(a.executable)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(exe)
	if !strings.HasPrefix(filepath.Base(dir), "bin-") || sameSet(dir, bin) {
		return nil
	}
	fix := vars.Quote(filepath.Join(bin, "cairn")) + " doctor --link"
	if !fileExists(filepath.Join(bin, engine.Exe(goos, "cairn"))) {
		fix = "start a Claude Code session (the plugin installs its binaries), then " + fix
		// Linked through the launcher's DATA/cairn (stableCairn), which that install points at
		// the new set: nothing to link again. Not after a downgrade: the install keeps it on
		// this newer set, and the installed plugin's doctor --link moves it.
		if home := a.home(); home != "" && !newerVersion(strings.TrimPrefix(filepath.Base(dir), "bin-"), strings.TrimPrefix(filepath.Base(bin), "bin-")) {
			if t, err := os.Readlink(linkPath(home, goos)); err == nil && t == filepath.Join(filepath.Dir(bin), "cairn") {
				fix = "start a Claude Code session: the plugin installs its binaries, and " + linkPath(home, goos) + " runs them from then on"
			}
		}
	}
	return &engine.Check{Name: "this cairn", Detail: exe + " is not the installed plugin's cairn: its binaries are in " + bin, Fix: fix}
}

// staleSet refuses to run this cairn when it is in a set of binaries that names its plugin (the
// plugin's bin/, or a set Go built from it) and was made from other sources than that plugin
// now holds: run by its path, by the agent (whose PATH names bin/, or the data dir's set) or a
// person, after a git pull and until make build or the launcher installs the plugin's, it
// would run an older build where the launcher never does. doctor, version, help and uninstall
// run all the same: they say what is installed, or remove it; so does completion, whose
// script a shell's rc file sources at every start and which only calls `cairn __complete`.
func (a *app) staleSet() error {
	switch a.name {
	case "doctor", "version", "help", "uninstall", "completion":
		return nil
	}
	exe, err := realExecutable(a.executable)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(exe)
	if _, err := os.Lstat(filepath.Join(dir, ".checksums")); err != nil {
		return nil // not a set the launcher or make build stamped (go build, go run, a test)
	}
	root, bin, _ := locatePlugin(a.executable, a.getenv, dirExists)
	if root == "" || filepath.Clean(bin) != dir {
		root, bin, _ = builtFromPlugin(a.executable, dirExists)
	}
	if root == "" || filepath.Clean(bin) != dir {
		return nil
	}
	why := engine.StaleSet(root, dir)
	if why == "" {
		return nil
	}
	step := engine.RefreshCommand(root, dir, "") + ", then run it again"
	if dir == filepath.Join(root, "bin") && engine.BuildCommand(root) == "" {
		// No checkout to build bin/ again: the launcher passes over it for good, and this
		// cairn would refuse again; the one to run is the set it installs.
		run := "the cairn there (a session's PATH names it), not this one"
		if set := recordedDataSet(a.getenv, a.home(), root); set != "" {
			run = vars.Quote(filepath.Join(set, "cairn"))
		}
		step = engine.RefreshCommand(root, dir, "") + ", then run " + run
	}
	// A set of the version before a pull that changed it: the launcher installs the plugin's
	// beside it, and this one stays as it is.
	if cur := filepath.Join(filepath.Dir(dir), "bin-"+launchVersion(root)); dir != filepath.Join(root, "bin") && cur != dir {
		step = "run the plugin's, " + vars.Quote(filepath.Join(cur, "cairn")) + "; where it is not there yet, " + engine.RefreshCommand(root, cur, "")
	}
	return fmt.Errorf("this cairn (%s) was built from other sources than the plugin at %s (%s), so it does not run: %s", exe, root, why, step)
}

// realExecutable is this cairn's path, through any symbolic link to it (~/.local/bin/cairn).
func realExecutable(executable func() (string, error)) (string, error) {
	exe, err := executable()
	if err != nil {
		return "", err
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return exe, nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// versionInfo is `cairn version --json`.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Go       string `json:"go"`
}

func runVersion(a *app, _ []string, _ *engine.Engine) error {
	v := versionInfo{Version: cairn.Version(), Revision: cairn.Commit(), Go: runtime.Version()}
	return a.answer(v, "cairn %s %s", cairn.Describe(), v.Go)
}
