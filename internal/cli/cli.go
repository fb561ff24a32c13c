// Package cli is cairn, the human command line over Cairn's engine: status, a live watch,
// list, show and history of workflows, types, archive, expire, doctor and uninstall, shell
// completion, and the shell API (start, transition, checkpoint, vars, log) for bash blocks in
// slash commands.
//
// It is an adapter and nothing more: every read and write of workflow state goes through
// internal/engine, so the CLI sees and changes state exactly as the MCP server and the hooks
// do (uninstall, which takes Cairn out of auto-memory, uses internal/memory's own writer). Its
// own work is parsing arguments (flags anywhere, the nearest name for a mistyped one),
// rendering for a person (colour only on a terminal) or as JSON with --json, and mapping
// errors to exit codes: 0 ok, 1 refused or not found, 2 usage error, 3 state unusable or
// internal error. Data goes to stdout, diagnostics to stderr. Commands are registered in one
// table (commands.go); shell completion is cobra's, over a tree built from that table.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// Exit codes, documented in `cairn help`.
const (
	ExitOK       = 0 // done
	ExitRefused  = 1 // the engine refused (invalid move, conflict, no workflow, not found, bad data) or a doctor check failed
	ExitUsage    = 2 // the command line was wrong: unknown command, missing or extra arguments, bad flag
	ExitInternal = 3 // the state cannot be used (unwritable, locked, from a newer Cairn), the output could not be written (a full disk; a reader gone ends cairn by SIGPIPE instead), or something unexpected broke
)

// Main runs cairn with args (without the program name) and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	out := &outWriter{w: stdout}
	a := &app{stdin: stdin, stdout: out, stderr: stderr, getenv: getenv, ctx: context.Background(),
		executable: os.Executable}
	a.color, a.colorErr = colorOn(stdout, getenv), colorOn(stderr, getenv)
	code := a.main(args)
	if code != ExitInternal && out.err != nil {
		// A command that printed without looking at the write (a table, a help text, doctor's
		// report before the exit 1 of a failed check) lost its output all the same (a full
		// disk): that is no success, nor the answer whose words were lost.
		code = a.fail(out.err)
	}
	return code
}

// outWriter is stdout, remembering the first write that failed. Its errors are outputErrors.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		err = &outputError{err: err}
		if o.err == nil {
			o.err = err
		}
	}
	return n, err
}

// outputDone: the command has dealt with its lost output (said it on stderr, or its reader
// has gone) and succeeds all the same.
func (a *app) outputDone() {
	if o, ok := a.stdout.(*outWriter); ok {
		o.err = nil
	}
}

// pipeErrors makes a write to stdout whose reader has gone fail with EPIPE until stop, for
// the commands that promise their exit code then (watch, statusline), where the runtime
// would end cairn by SIGPIPE (exit 141).
func pipeErrors() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// readerLeft: err is a write to stdout that found the reader of the pipe gone.
func readerLeft(err error) bool {
	_, out := errors.AsType[*outputError](err)
	return out && errors.Is(err, syscall.EPIPE)
}

// outputError is a write to stdout that failed (exit 3: something broke, nothing refused).
// made is the report of a change made all the same, which is said with it.
type outputError struct {
	err  error
	made string
}

func (e *outputError) Error() string {
	msg := "the output could not be written: " + e.err.Error()
	if e.made != "" {
		msg += "; the change was made (" + e.made + "): cairn status shows the workflow as it is now"
	}
	return msg
}
func (e *outputError) Unwrap() error { return e.err }

// stream is the stream w writes to, for the checks that need the file itself (a terminal,
// a pipe).
func stream(w any) any {
	if o, ok := w.(*outWriter); ok {
		return o.w
	}
	return w
}

// app is one run of cairn: its streams, environment and, once opened, the engine.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	ctx            context.Context
	executable     func() (string, error)

	name string // the command being run, for messages ("transition", "checkpoint save")
	json bool   // --json was given
	opt  opts   // the other flags
	eng  *engine.Engine

	color, colorErr bool // stdout, stderr take colour (color.go)

	// sig is what remoteContext's signal handler and local share: a signal came, a change
	// is being made here.
	sig struct {
		sync.Mutex
		signaled, local bool
	}
}

func (a *app) main(args []string) int {
	// Flags every command has may come before the command too: cairn --json status.
	var global []string
	for len(args) > 0 && isGlobalFlag(args[0]) {
		global, args = append(global, args[0]), args[1:]
	}
	// -- ends the flags before the command as it does after it: cairn -- status.
	ended := len(args) > 0 && args[0] == "--"
	if ended {
		args = args[1:]
	}
	if len(args) == 0 && len(global) > 0 {
		args = []string{"help"}
	}
	if len(args) == 0 {
		fmt.Fprint(a.stderr, overview())
		return ExitUsage
	}
	switch {
	case ended:
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		args = append([]string{"help"}, args[1:]...)
	case args[0] == "-v" || args[0] == "-version" || args[0] == "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	defer func() {
		if a.eng != nil {
			a.eng.Close()
		}
	}()
	if isCompletionRequest(args[0]) {
		return a.complete(args)
	}
	if len(args[0]) > 1 && args[0][0] == '-' && !ended {
		return a.fail(flagBeforeCommand(args[0]))
	}
	cmd, rest, err := lookup(args)
	if err != nil {
		return a.fail(err)
	}
	a.name = cmd.name
	err = a.run(cmd, append(global, rest...))
	if errors.Is(err, flag.ErrHelp) {
		// -h stops parsing; --json after it still asks for the JSON form.
		a.json = a.json || jsonAsked(rest)
		return a.fail(runHelp(a, strings.Fields(cmd.name), nil))
	}
	return a.fail(err)
}

// jsonAsked: args, a command line not parsed yet, ask for the JSON form, in any form the
// flag package takes (--json, -json=t, --json=1), the last one said winning, as when parsed.
func jsonAsked(args []string) bool {
	asked := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		isJSON, value, hasValue := jsonFlag(arg)
		if !isJSON {
			continue
		}
		b, err := strconv.ParseBool(value)
		if !hasValue {
			b, err = true, nil
		}
		if err == nil {
			asked = b
		}
	}
	return asked
}

// flagBeforeCommand answers a flag before the command that is none of those that go there
// (--json, --help, --version), which would otherwise be taken for a mistyped command. Only a
// flag's shape is repeated (named, not a pasted value).
func flagBeforeCommand(arg string) error {
	if isJSON, _, _ := jsonFlag(arg); isJSON { // a value --json does not take
		return &usageError{msg: "--json: the value is not true or false"}
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if plain(name) {
		if m := meant("--", name, []string{"json", "help", "version"}); m != "" {
			return &usageError{msg: "no flag --" + name + " before a command; " + m}
		}
	}
	return &usageError{msg: "before a command cairn takes only --json, --help and --version; a command's own flags go after its name"}
}

// isGlobalFlag: the flags every command takes, which may also come before its name, in
// any form the command takes them after it (--json, -json, --json=1).
func isGlobalFlag(arg string) bool {
	name, value, hasValue := jsonFlag(arg)
	if !name {
		return false
	}
	_, err := strconv.ParseBool(value)
	return !hasValue || err == nil
}

// jsonFlag: arg is -json or --json, with or without a value.
func jsonFlag(arg string) (isJSON bool, value string, hasValue bool) {
	if !strings.HasPrefix(arg, "-") {
		return false, "", false
	}
	name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
	return name == "json", value, hasValue
}

// fail prints err (if any) on stderr and returns its exit code.
func (a *app) fail(err error) int {
	if err == nil {
		return ExitOK
	}
	if ce, ok := errors.AsType[*codeError](err); ok && ce.silent {
		return ce.code
	}
	prefix := strings.TrimSpace("cairn " + a.name)
	msg := err.Error()
	if errors.Is(err, engine.ErrNoActiveWorkflow) {
		// The engine's hint names the agent's tools; a person at a shell gets the one command
		// that goes on, but not from a command that would have ended or approved a workflow:
		// a new one is not what was asked for.
		switch msg = engine.ErrNoActiveWorkflow.Error(); a.name {
		case "archive":
			msg += "; nothing to archive"
		case "complete":
			msg += "; nothing to complete"
		case "approve":
			msg += "; nothing waits for approval"
		default:
			// Outside a project there is none to start: say why nothing is found here.
			if ne := a.notInProject(); ne != nil {
				msg = ne.Error()
			} else {
				msg += "; cairn start TYPE CONTEXT begins one"
			}
		}
	} else if errors.Is(err, engine.ErrNotFound) {
		// A checkpoint or log not found outside a project: that is why, and the step that
		// would make one (cairn log append) is refused here.
		if ne := a.notInProject(); ne != nil {
			msg = ne.Error()
		}
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", a.styleErr(red, prefix), textsafe.OneLine(shellSteps(msg, a.inClaudeCode())))
	if ue, ok := errors.AsType[*usageError](err); ok && ue.usage != "" {
		fmt.Fprintf(a.stderr, "usage: cairn %s\n(cairn help %s says more)\n", ue.usage, ue.cmd)
	}
	return exitCode(err)
}

// usageError is a wrong command line (exit 2).
type usageError struct {
	msg   string
	cmd   string // the command, for "cairn help CMD"
	usage string // its usage line, "" when unknown
}

func (e *usageError) Error() string { return e.msg }

// codeError carries an exit code chosen by a command (a failed doctor check: 1).
type codeError struct {
	code   int
	msg    string
	silent bool // the command already said why
}

func (e *codeError) Error() string { return e.msg }

// stateError is an engine that could not be opened (exit 3). What failed is the store's
// words; what to do about it depends on the cause, which cairn doctor checks one by one,
// unless those words already say it (store.SaysStep): one step, not two.
type stateError struct{ err error }

func (e *stateError) Error() string {
	return "the state directory cannot be used: " + engine.UnusableState(e.err)
}
func (e *stateError) Unwrap() error { return e.err }

// exitCode maps an error to cairn's exit codes. The engine's refusals (typed or not) and
// what it did not find are 1; what makes the state unusable (engine.StateUnusable, or an
// engine that could not be opened) is 3.
func exitCode(err error) int {
	_, usage := errors.AsType[*usageError](err)
	ce, code := errors.AsType[*codeError](err)
	_, state := errors.AsType[*stateError](err)
	_, output := errors.AsType[*outputError](err)
	switch {
	case err == nil:
		return ExitOK
	case usage:
		return ExitUsage
	case code:
		return ce.code
	case state, output, engine.Classify(err) == engine.StateUnusable:
		return ExitInternal
	}
	return ExitRefused
}

// engine opens the engine on first use. The CLI acts as actor "cli", for the session Claude
// Code names in its environment when run from a bash block.
func (a *app) engine() (*engine.Engine, error) { return a.engineChecked(nil) }

// engineChecked is engine for a command that makes state (start): where the state directory
// is missing, check, the command's refusal, runs first on the state read without making it,
// and its error is returned with nothing made, as an existing command's refusal makes none.
func (a *app) engineChecked(check func(*engine.Engine) error) (*engine.Engine, error) {
	if a.eng != nil {
		return a.eng, nil
	}
	c := commands[a.name]
	// expire --dry-run only reads, so it makes no state directory either.
	noCreate := c != nil && (c.readOnly || c.noState || c.name == "expire" && a.opt.dryRun)
	if c != nil && !c.readOnly {
		if _, outside := a.outsideProject(); outside {
			noCreate = c.onState
			if err := a.notInProject(); err != nil && !c.onState {
				return nil, err
			}
		}
	}
	wd, err := a.workDir()
	if err != nil { // removed under the shell: no state file is at fault
		return nil, &codeError{code: ExitInternal, msg: wdFailed(err) + "; cd into the project and run it again"}
	}
	// A command that only reads waits for no lock: where its read would repair the snapshot
	// while another process holds the lock, it shows what the journal holds instead. In the
	// agent's Bash tool CLAUDE_PID names its client, as for the hooks: a change made there is
	// recorded with that client's pid, as the MCP tools' are.
	open := func(noCreate bool) (*engine.Engine, error) {
		return engine.Open(engine.Config{Getenv: a.getenv, WorkDir: wd, Actor: "cli", SessionID: a.getenv("CLAUDE_CODE_SESSION_ID"),
			PID: engine.ClientPID(a.getenv("CLAUDE_PID")), YAML: yamldoc.Codec{},
			NoCreate: noCreate, NoLockWait: c != nil && c.readOnly})
	}
	var e *engine.Engine
	if c != nil && (c.existing || c.onState || check != nil) && !noCreate && !stateDirThere(a.getenv, wd) {
		// Nothing to change is there: the refusal leaves none behind, unless a seed's state
		// file waits to be migrated, which a command that changes the workflow does.
		if e, err = open(true); err == nil && legacyWaits(e) {
			e.Close()
			e = nil
		} else if err == nil && check != nil {
			refused := check(e)
			e.Close()
			if e = nil; refused != nil {
				return nil, refused
			}
		}
	}
	if e == nil && err == nil {
		e, err = open(noCreate)
	}
	if gone, ok := errors.AsType[*engine.ProjectGoneError](err); ok {
		return nil, &codeError{code: ExitRefused, msg: gone.Error() + ": " + engine.ProjectGoneStep}
	}
	if err != nil {
		return nil, &stateError{err}
	}
	a.eng = e
	return e, nil
}

// stateDirThere: the state directory wd's project takes is there, or whether it is cannot be
// told here (engine.Open says why).
func stateDirThere(getenv func(string) string, wd string) bool {
	dir, err := project.StateDir(getenv, wd)
	if err != nil {
		return true
	}
	_, err = os.Lstat(dir)
	return !errors.Is(err, fs.ErrNotExist)
}

// legacyWaits: a seed's state file is in e's project, which the first command that changes
// the workflow migrates into the state directory.
func legacyWaits(e *engine.Engine) bool {
	st, err := e.OpenStore(store.WithNoCreate())
	if err != nil {
		return true // the open that creates says what is wrong
	}
	defer st.Close()
	_, _, found := st.FindLegacy()
	return found
}

// wdFailed says that the working directory could not be found (removed under the shell).
func wdFailed(err error) string { return "finding the working directory: " + err.Error() }

// outsideProject: no project is named (an absolute CLAUDE_PROJECT_DIR, CAIRN_STATE_DIR) and
// none holds the working directory (no git repository above it), as when cairn is run in
// $HOME or /; root is the directory that would be taken as the project root. The hooks read
// such a directory without creating anything; so do commands that only act on state already
// there, and commands that write refuse unless a session already made state there.
func (a *app) outsideProject() (root string, outside bool) {
	if d := a.getenv(project.EnvProjectDir); d != "" && filepath.IsAbs(d) || a.getenv(project.EnvStateDir) != "" {
		return "", false
	}
	wd, err := a.workDir()
	if err != nil {
		return "", false // engine.Open says why
	}
	root, err = project.Root(a.getenv, wd)
	return root, err == nil && !project.HasGit(root)
}

// notInProject is the refusal of a directory outside any project (see outsideProject) that
// no session made state in, which a command that writes gives and one that finds nothing
// there gives as the reason; nil elsewhere. A directory a session made state in (Claude Code
// run outside git, with CLAUDE_PROJECT_DIR) is a project.
func (a *app) notInProject() error {
	root, outside := a.outsideProject()
	if !outside {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(root, project.StateSubdir)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return &codeError{code: ExitRefused, msg: "not in a project: " + engine.NoGit(root) + ", and no Cairn state is there; " + engine.NotAProjectStep}
}

// workDir is the working directory the project is looked for from: os.Getwd's, which is the
// shell's path ($PWD), or, when no git repository holds that path but one holds the
// directory it leads to (a link into the project from outside it, as cd ~/docs to a link to
// the project's docs/), that directory, as git takes it.
func (a *app) workDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if root, err := project.Root(a.getenv, wd); err != nil || project.HasGit(root) {
		return wd, nil
	}
	real, err := filepath.EvalSymlinks(wd)
	if err != nil || real == wd {
		return wd, nil
	}
	if root, err := project.Root(a.getenv, real); err == nil && project.HasGit(root) {
		return real, nil
	}
	return wd, nil
}

// run parses the command's flags and arguments, opens the engine unless the command opens it
// itself (after checking its input) or needs none, and runs it.
func (a *app) run(c *command, args []string) error {
	pos, err := a.parse(args, c.min, c.max)
	if err != nil {
		return err // -h included: a command's help runs from a stale set too
	}
	if err := a.staleSet(); err != nil {
		// Claude Code shows the status line's stdout alone, and a status line that fails none.
		if a.name == "statusline" && !a.json {
			fmt.Fprintln(a.stdout, "cairn: this cairn was built from other sources than the plugin · run cairn doctor")
			a.say(err.Error())
			return nil
		}
		return err
	}
	var e *engine.Engine
	if !c.noEngine {
		if e, err = a.engine(); err != nil {
			return err
		}
	}
	return c.run(a, pos, e)
}

// opts are the flags besides --json; a command takes those its usage line names.
type opts struct {
	all, dryRun, link, orEmpty, replace, yes, withState bool
	reason, id, scope, ttl, from, note, checkpoint      string
	outputs                                             strs // --output: repeatable for transition, once for task
	tail                                                count
}

// count is a whole-number flag that knows whether it was given: --tail 0 is not --tail unset.
type count struct {
	n   int
	set bool
}

func (c *count) String() string { return strconv.Itoa(c.n) }
func (c *count) Get() any       { return c.n }
func (c *count) Set(s string) error {
	// A whole number past what an int holds is taken at the int's limit (Atoi's value with
	// ErrRange): --tail 99999999999999999999 is every entry, as --tail 999999 is.
	n, err := strconv.Atoi(s)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return err
	}
	c.n, c.set = n, true
	return nil
}

// flags is the flag set of the running command: --json, and the flags its usage line names.
func (a *app) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(a.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &a.opt
	bools := map[string]*bool{"json": &a.json, "all": &o.all, "dry-run": &o.dryRun, "link": &o.link,
		"or-empty": &o.orEmpty, "replace": &o.replace, "yes": &o.yes, "with-state": &o.withState}
	texts := map[string]*string{"reason": &o.reason, "id": &o.id, "scope": &o.scope, "ttl": &o.ttl,
		"from": &o.from, "note": &o.note, "checkpoint": &o.checkpoint}
	usage := commands[a.name].usage
	// A flag's usage is its value's name in the usage line (--reason TEXT), for messages.
	values := map[string]string{}
	for _, m := range usageValue().FindAllStringSubmatch(usage, -1) {
		values[m[1]] = m[2]
	}
	for _, f := range append([]string{"--json"}, usageFlag().FindAllString(usage, -1)...) {
		switch name := f[2:]; {
		case fs.Lookup(name) != nil: // --json, named twice
		case bools[name] != nil:
			fs.BoolVar(bools[name], name, false, "")
		case texts[name] != nil:
			fs.StringVar(texts[name], name, "", values[name])
		case name == "output":
			fs.Var(&o.outputs, name, values[name])
		case name == "tail":
			fs.Var(&o.tail, name, values[name])
		default:
			panic("cairn " + a.name + ": its usage line names --" + name + ", which no command defines")
		}
	}
	return fs
}

// parse parses args, flags before or after positionals ("--" ends flags), and checks the
// number of positionals (max < 0: no limit).
func (a *app) parse(args []string, min, max int) ([]string, error) {
	fs := a.flags()
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, a.usageErr("%s", err)
	}
	switch {
	case len(pos) < min:
		if names := argNames(commands[a.name].usage, a.name, false); len(names) >= min {
			missing := "missing " + strings.Join(names[len(pos):min], " and ")
			if i := len(pos) - 1; i >= 0 && strings.Contains(pos[i], "=") && !strings.ContainsAny(pos[i][:strings.Index(pos[i], "=")], " \t\n") {
				// cairn vars set PLAN_PATH=x, as export takes it (a word, then =; not a
				// sentence that holds one): the value is not repeated.
				missing += fmt.Sprintf(": %s and %s are two arguments, not %[1]s=%[2]s", names[i], names[i+1])
			}
			return nil, a.usageErr("%s", missing)
		}
		return nil, a.usageErr("missing arguments: want %d, got %d", min, len(pos))
	case max == 0 && len(pos) > 0:
		return nil, a.usageErr("too many arguments: it takes none")
	case max >= 0 && len(pos) > max:
		var glob string
		if slices.Contains(argNames(commands[a.name].usage, a.name, true), "PATTERN") {
			// cairn checkpoint list plan* beside plan1.md and plan2.md: the shell's file names.
			glob = "; quote a PATTERN so the shell does not expand it into file names: cairn " + a.name + " 'plan*'"
		}
		return nil, a.usageErr("too many arguments: want at most %d, got %d%s", max, len(pos), glob)
	}
	c := commands[a.name]
	if err := notText(fs, pos, c.usage, a.name); err != nil || c.readOnly {
		return pos, err
	}
	return pos, secretArg(fs, pos, c)
}

// usageErr is a usage error of the running command, shown with its usage line.
func (a *app) usageErr(format string, v ...any) error {
	return &usageError{msg: fmt.Sprintf(format, v...), cmd: a.name, usage: commands[a.name].usage}
}

// optional is the optional positional argument pos[0], else def.
func optional(pos []string, def string) string {
	if len(pos) > 0 {
		return pos[0]
	}
	return def
}

// printJSON writes v as indented JSON on stdout, safe for a terminal (safeJSON).
func (a *app) printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := a.stdout.Write(safeJSON(b.Bytes()))
	return err
}

// answer prints v as JSON with --json, else one line that format and args make.
func (a *app) answer(v any, format string, args ...any) error {
	if a.json {
		return a.printJSON(v)
	}
	_, err := fmt.Fprintf(a.stdout, format+"\n", args...)
	return err
}

// orEmpty is s, or an empty slice for nil: JSON prints [], never null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// warn prints warnings on stderr, one line each.
func (a *app) warn(ws ...string) {
	for _, w := range ws {
		if w != "" {
			fmt.Fprintf(a.stderr, "%s %s\n", a.styleErr(yellow, "cairn: warning:"), textsafe.OneLine(shellSteps(w, a.inClaudeCode())))
		}
	}
}

// shellSteps puts the command a person runs where the engine's errors and warnings name the
// agent's tool, or its parameter, for the next step, and the person's own step where the
// agent's goes through the user. agent says the reader is the agent (a shell Claude Code
// started): a step through the user stays one (agentSteps).
func shellSteps(msg string, agent bool) string {
	for _, r := range [...][2]string{
		{" with update_task ", " with cairn task ID done|failed "},
		{engine.CheckOnRecord, "check it with cairn status"},
		{engine.GiveAnID, "start again with --id set to an id not used before"},
		// A record over its 1 MiB cap.
		{engine.ShortenTasks, "cairn task ID STATUS --note N"},
		{engine.SplitCheckpoint, "cairn checkpoint save NAME JSON, split to fit"},
		{engine.KeepData, "cairn checkpoint save NAME JSON keeps the data"},
		{engine.AskWhichVars, "unset ones no longer needed with `cairn vars unset NAME...`"},
		{engine.AskWhichCheckpoints, "save over one no longer needed (the same name replaces it), or delete one with `cairn checkpoint delete NAME`"},
		{engine.ShortenViolations, "the agent records its review again with shorter details, which replaces them"},
		{engine.ArchiveToGoOn, "cairn archive keeps the workflow whole and another workflow can take over the work"},
		{engine.ShowWhatFills, "run cairn show, which shows what fills it"},
		// workflow.ActiveError: the person is the user the agent is told to ask.
		{startAsk, " to start another instead, start again with --replace "},
		{restoreAsk, " restore the phase "}, // workflow.TransitionError
		{engine.CompleteStep, "finish the workflow with cairn complete OUTCOME"},
		{engine.CompleteAgain, "then run cairn complete OUTCOME again"},
		{engine.ConfirmCopy, "choose which copy to keep"},
		{engine.AncientCheck, engine.AncientCheck}, // the person's own check (cairn status)
		{workflow.OwnedAsk, engine.OwnedOne},       // another live session holds it
		{workflow.ApproveThenMove, "approve it with `cairn approve [NOTE]`, then run the move again"},
		{engine.DamagedStep, engine.DoctorSetsAside}, // store.DamagedError
		{engine.DefinitionAsk, "fix or restore its definition file"},
		{engine.RecordAsk, "run `cairn doctor`, which names what to correct, then run the command again"},
		{"; " + engine.InTheWayStep, ", then run the command again"},
		{claimsync.DoctorStep, "run `cairn doctor`, which says what the host must allow"},
		{claimsync.ClaimStep, "run cairn sync, which claims it or says which machine holds it"},
		{claimsync.DoneStep, "run cairn sync, which brings its done here"},
		{claimsync.InTheWayStep, "look at what it is: it may be someone's"},
		{claimsync.RemoteStep, "run cairn sync, which says what to do there"},
		{remotesync.AskHistory, "list them with cairn history "}, // a take-back's changes not replayed
		{remotesync.AskSync, "run cairn sync "},                  // take back a workflow finished here
		{remotesync.NextSyncTries, "run cairn sync again"},       // only cairn-mcp syncs by itself
		{store.NoRoomStep, "free some room on that file system"}, // a change that stood, its rest refused for want of room
		{store.IndexTooLargeStep, "move it out of the state directory (it may be someone's); the next archive then makes a new index from the archive directories"},
	} {
		to := r[1]
		if s, ok := agentSteps[r[0]]; agent && ok {
			to = s
		}
		msg = strings.Replace(msg, r[0], to, 1)
	}
	return msg
}

// The engine's steps through the user (workflow.ActiveError, workflow.TransitionError).
const (
	startAsk   = " continue or complete it; to start another instead, ask the user first, then start again with replace "
	restoreAsk = " tell the user, who can restore the phase "
)

// agentSteps are shellSteps' replacements for the agent in a shell Claude Code started: the
// user it is told to ask is not the reader, so the ask stays; only a tool's words become the
// command's.
var agentSteps = map[string]string{
	startAsk:                " continue or complete it; to start another instead, ask the user first, then start again with --replace ",
	restoreAsk:              restoreAsk,
	engine.ConfirmCopy:      engine.ConfirmCopy,
	engine.AncientCheck:     workflow.AncientAsk,
	workflow.OwnedAsk:       workflow.OwnedAsk,
	engine.DefinitionAsk:    engine.DefinitionAsk,
	engine.RecordAsk:        engine.RecordAsk,
	store.NoRoomStep:        store.NoRoomStep,
	store.IndexTooLargeStep: store.IndexTooLargeStep,
	claimsync.InTheWayStep:  claimsync.InTheWayStep,
	claimsync.RemoteStep:    claimsync.RemoteStep,
	// The person the agent asks must not run it through Claude Code.
	workflow.ApproveThenMove: workflow.ApproveThenMove,
}

// told and wrote report an engine call's answer: its error, or the message on stdout (wrote:
// nothing on success, as the seeds' shell API prints) or the Result as JSON, warnings on stderr.
func (a *app) told(res *engine.Result, err error) error  { return a.result(res, err, false) }
func (a *app) wrote(res *engine.Result, err error) error { return a.result(res, err, true) }

func (a *app) result(res *engine.Result, err error, quiet bool) error {
	if err != nil {
		return err
	}
	a.warn(res.Warnings...)
	if a.json {
		a.personNext(res)
		a.hideRecord(res.WorkflowID, &res.Workflow)
		err = a.printJSON(res)
	} else if !quiet && res.Message != "" {
		fmt.Fprintln(a.stdout, clean(res.Message))
		a.next(a.stdout, res)
	}
	if o, ok := a.stdout.(*outWriter); ok && o.err != nil && res.Changed {
		// Lost or not, the change stands: said, so that nobody makes it again into a refusal.
		oe, _ := errors.AsType[*outputError](o.err)
		return &outputError{err: oe.err, made: clean(res.Message)}
	}
	return err
}

// next prints the engine's one next step for a move: that leaving the phase it entered needs
// a person's yes.
func (a *app) next(w io.Writer, res *engine.Result) {
	a.personNext(res)
	if res.Next != "" {
		fmt.Fprintln(w, "Next: "+clean(res.Next))
	}
}

// personNext words res.Next, the agent's "ask the user to approve", as the step a person at
// a terminal takes, as cairn status says it. In a shell Claude Code started the reader is the
// agent, where cairn approve is refused: the agent's words stay. A step through a tool is
// worded as the command (shellSteps), as errors are.
func (a *app) personNext(res *engine.Result) {
	if res.Next != "" && res.AwaitingApproval != "" && !a.inClaudeCode() {
		res.Next = textsafe.Line(res.AwaitingApproval, 64) + " waits for a person's approval; approve it with `cairn approve [NOTE]`"
	}
	res.Next = shellSteps(res.Next, a.inClaudeCode())
}
