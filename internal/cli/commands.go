package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
)

// command is one cairn command. Nouns with verbs (checkpoint save) are registered under
// their two-word name.
type command struct {
	name    string
	usage   string // after "cairn "
	summary string // one line for the overview
	doc     string // the rest of `cairn help NAME`
	// min and max are how many arguments it takes (max -1: any number); its flags are those
	// its usage line names, and --json.
	min, max int
	noEngine bool // run gets no engine: it opens it itself, after checking its input, or needs none
	readOnly bool // it only reads: run anywhere ($HOME, /), it creates nothing
	// onState: it acts on state already there (removes, expires, watches or syncs it) or
	// needs a git project (remote enable), so outside a project, where there is none, it
	// creates no state directory either.
	onState bool
	// noState: the engine opens without making the state directory: the command makes it
	// itself once its checks pass (remote enable), or needs one there already (remote
	// disable, sync), so a refusal leaves no .claude/cairn behind.
	noState bool
	// existing: it changes only what is already there (the active workflow, a checkpoint, a
	// variable): in a project with no state directory it finds nothing and refuses, and so
	// makes none, unless a seed's state file waits there to be migrated.
	existing bool
	// lookup, for a command whose argument is only looked up (sync's ID): why one of a
	// secret's shape finds nothing, said in its place of the advice for a value being stored.
	lookup string
	run    func(a *app, pos []string, e *engine.Engine) error
}

func (c *command) help() string {
	s := "usage: cairn " + c.usage + "\n\n" + c.summary + "\n"
	if c.doc != "" {
		s += "\n" + strings.TrimSpace(c.doc) + "\n"
	}
	return s
}

// commands is filled in init so the run functions can refer to the table (help does). order is
// the table's order, which the overview keeps: the person's commands, then the shell API. nouns
// are the first words of two-word commands, which take a verb.
var (
	commands = map[string]*command{}
	order    []string
	nouns    = map[string]bool{}
)

func init() {
	register([]*command{
		{name: "status", usage: "status [--json]", run: runStatus, readOnly: true,
			summary: "Show the active workflow: phase, age, completed phases, next phases, warnings.",
			doc: `Reads the state as the next session would (the read protocol), changing only what
that read repairs, and saying so: a corrupt snapshot is set aside in quarantine/ and rebuilt
from the journal; an older one is migrated, the original kept. An expired workflow is reported,
not archived. With --json prints the engine's resume answer, without the agent's next step;
outside a git repository project_root names the directory taken as the project root.`},
		{name: "approve", usage: "approve [NOTE] [--json]", max: 1, existing: true, run: runApprove,
			summary: "Approve the phase the workflow waits in, so the agent may move on.",
			doc: `Phases such as apex's plan need a person's yes before the agent may leave them. Claude
Code asks for it in the session when it can; where it cannot (claude -p), a person runs
this, in a terminal of their own: inside a shell Claude Code started (CLAUDECODE,
CLAUDE_CODE_SESSION_ID or CLAUDE_CODE_CHILD_SESSION set, as in the agent's Bash tool) it is
refused. The approval, its time and NOTE are recorded and shown
by cairn status. To let agents leave approval phases alone in this project, set
"approvals": false in .claude/cairn/config.json.`},
		{name: "statusline", usage: "statusline [--json]", noEngine: true, run: runStatusline, readOnly: true,
			summary: "One short line for Claude Code's statusLine: type, phase, phases done, age.",
			doc: `Reads Claude Code's statusLine JSON on stdin (its workspace.project_dir names the
project) and prints, for the active workflow, e.g. "apex · plan 2/5 · 12m"; nothing when none
is active (null with --json). It reads the state without a lock or a repair, in a few
milliseconds, and never fails the status bar: problems go to stderr, exit 0. In
~/.claude/settings.json:
  "statusLine": {"type": "command", "command": "cairn statusline"}`},
		{name: "watch", usage: "watch [--json]", run: runWatch, onState: true,
			summary: "Follow the active workflow live; one line per change, until interrupted.",
			doc: `Prints the current position, then a line each time any process (the agent, a hook, another
cairn) changes the workflow, saying what changed (phase, status, approvals, tasks, variable
names, artifacts, checkpoints saved or deleted) and who changed it (actor and session, from
the journal). Stops on Ctrl-C (SIGINT) or SIGTERM, or when the reader of its piped output
has gone (cairn watch | head -1), and exits 0. With --json each line is one JSON object: at,
workflow_id, revision, phase, session_id, updated_at, changes, by, on every line (changes is
[] on the first; with no workflow active the texts are empty, updated_at null). Outside a
project (no git repository, CLAUDE_PROJECT_DIR unset) there is no state to watch and none is
created: exit 1.`},
		{name: "list", usage: "list [--all] [--json]", run: runList, readOnly: true,
			summary: "List the active workflow and the archived ones, newest first.",
			doc:     `The table shows the newest 20 archives; --all and --json give every one.`},
		{name: "show", usage: "show [ID] [--json]", max: 1, run: runShow, readOnly: true,
			summary: "Show one workflow, active or archived (default: the active one).",
			doc:     `With --json prints the stored record itself.`},
		{name: "history", usage: "history [ID] [--json]", max: 1, run: runHistory, readOnly: true,
			summary: "Show a workflow's journal: time, revision, event, who, from -> to.",
			doc:     `ID defaults to the active workflow. Archived workflows keep their journal.`},
		{name: "types", usage: "types [TYPE] [--json]", max: 1, run: runTypes, readOnly: true,
			summary: "List the workflow types: phases, moves, approval phases, TTL.",
			doc: `Built-in types and the project's own (.claude/workflows/*.md), each with its phases in
order, the moves allowed from each phase, the phases that need an approval, the terminal
phases and the TTL after which an idle workflow expires.`},
		{name: "archive", usage: "archive [--reason TEXT] [--json]", existing: true, run: runArchive, onState: true,
			summary: "Abandon the active workflow: archive it unfinished (kept, not deleted).",
			doc: `For work that will not be finished; cairn complete OUTCOME ends finished work. The
reason is free text, kept in the workflow's history (cairn history ID); a one-word reason
such as superseded is also the status cairn list shows (default archived); completed,
expired and replaced, which Cairn files on its own, are kept as the note.`},
		{name: "expire", usage: "expire [--dry-run] [--json]", existing: true, run: runExpire, onState: true,
			summary: "Archive the active workflow if its TTL has passed (--dry-run: only say).",
			doc: `An expired workflow is archived, never deleted, and an expiry line is written to
auto-memory. A workflow that has not expired is left alone and exit is 0.`},
		{name: "doctor", usage: "doctor [--link] [--json]", noEngine: true, run: runDoctor, readOnly: true,
			summary: "Check the install and the state; say what to fix.",
			doc: `Checks the binaries and plugin files, the state directory's permissions, the
auto-memory directory, the locks, stale temp files and the workflow definitions, and names
the files set aside in quarantine/ (how many, the newest by full path). The plugin
is the directory above this executable's bin/ when it holds .claude-plugin/, else
$CLAUDE_PLUGIN_ROOT, else the Cairn plugin Claude Code has installed (for this project or
for the user). --link makes ~/.local/bin/cairn (cairn.exe on Windows) a link to this
cairn. Exit 1 when a check fails, 3 when the state cannot be opened.`},
		{name: "start", usage: "start TYPE CONTEXT [--id ID] [--scope S] [--ttl T] [--replace] [--json]", min: 2, max: 2, noEngine: true, run: runStart,
			summary: "Start a workflow of TYPE (apex, debug, ...) in its first phase.",
			doc: `CONTEXT is a one-line summary of the work. An active workflow is refused (exit 1)
unless --replace, which archives it first (kept, not lost). --ttl is a duration like 24h.`},
		{name: "transition", usage: "transition [FROM] TO [--from FROM] [--note N] [--output PATH]... [--checkpoint JSON] [--json]", min: 1, max: 2, noEngine: true, existing: true, run: runTransition,
			summary: "Move the active workflow to phase TO.",
			doc: `Already in TO: nothing changes, an INFO line goes to stderr and exit is 0, so a retry
is safe. With FROM (as --from or a first argument) the move happens only if the workflow is
in FROM; otherwise exit 1 says where it is and who moved it. --output records an output of
the phase being left (repeatable); --checkpoint keeps a JSON object in that phase's
metadata, in the same write. Entering a terminal phase completes and archives the workflow.`},
		{name: "complete", usage: "complete OUTCOME [--json]", min: 1, max: 1, noEngine: true, existing: true, run: runComplete,
			summary: "Complete the active workflow with a one-line OUTCOME and archive it.",
			doc: `In an approval phase that waits for a person's yes, only a person completes it: inside
a shell Claude Code started (the agent's Bash tool; cairn help approve says how it is told)
it is refused until cairn approve has been run from a terminal of their own.`},
		{name: "task", usage: "task ID STATUS [--output P] [--note N] [--json]", min: 2, max: 2, existing: true, run: runTask,
			summary: "Add a task to the current phase, or move one: pending, running, done, failed.",
			doc: `A new task starts pending, running or done (work finished before it was added). With
sharing on (cairn remote enable), running, or done for a new task, first claims the task on
the remote, so one machine holds it: refused when another does (named, with how long
ago). Offline running goes ahead, and the next cairn sync confirms the claim or sets the
task back to pending; a new task done is refused until the remote can be reached.`},
		{name: "outputs drop", usage: "outputs drop [PATH]... [--json]", max: -1, existing: true, onState: true,
			run:     func(a *app, pos []string, e *engine.Engine) error { return a.told(e.DropOutputs(pos)) },
			summary: "Go on without recorded outputs missing on disk: take them off the record.",
			doc: `Each session start asks about an output or artifact the workflow recorded that the
project does not hold, until it is written again or dropped. This drops the PATHs named, or
every missing one; a PATH that is not one is refused, nothing dropped. No file is touched,
and cairn history keeps what was dropped.`},
		{name: "checkpoint save", usage: "checkpoint save NAME [JSON|-] [--json]", min: 1, max: 2, noEngine: true,
			run:     jsonWrite("the checkpoint", `'{"step": 2, "plan": "plans/001.md"}'`, (*engine.Engine).SaveCheckpoint),
			summary: "Save a named JSON checkpoint (from stdin when JSON is - or absent).",
			doc: `NAME is 1 to 64 lowercase letters, digits, '.', '_' or '-'. The JSON is checked
(strict, at most 1 MiB) and refused if it holds a secret. Prints nothing on success.`},
		{name: "checkpoint load", usage: "checkpoint load NAME [--or-empty] [--json]", min: 1, max: 1, run: runCheckpointLoad, readOnly: true,
			summary: "Print a checkpoint's JSON; missing: exit 1, or {} with --or-empty.",
			doc: `With --or-empty a missing checkpoint prints {} and exits 0, for scripts that start fresh.
The checkpoint's JSON is the output with --json too.`},
		{name: "checkpoint list", usage: "checkpoint list [PATTERN] [--json]", max: 1, run: runCheckpointList, readOnly: true,
			summary: "List checkpoint names matching a glob PATTERN (default all), one a line."},
		{name: "checkpoint delete", usage: "checkpoint delete NAME [--json]", min: 1, max: 1, existing: true, run: runCheckpointDelete, onState: true,
			summary: "Delete a checkpoint for good (no copy is kept); missing: exit 1.",
			doc: `Prints nothing on success. Run again after it deleted the checkpoint, it exits 0 and
changes nothing (--json says the checkpoint was already deleted, and when).`},
		{name: "vars set", usage: "vars set KEY VALUE [--json]", min: 2, max: 2, existing: true, run: runVarsSet,
			summary: "Set a workflow variable of the active workflow.",
			doc: `KEY is upper-case words joined by _, the first WF_ or a workflow word (PLAN, RESEARCH,
REPORT, TASK, REVIEW, ...), such as PLAN_PATH or WF_BRANCH, so that no other program reads it
(PATH, LD_PRELOAD, GIT_SSH_COMMAND are refused). A negative number is a VALUE
(cairn vars set WF_COUNT -1); any other VALUE starting with - goes after --:
cairn vars set WF_OPTS -- --fast. Prints nothing on success.`},
		{name: "vars get", usage: "vars get KEY [--json]", min: 1, max: 1, run: runVarsGet, readOnly: true,
			summary: "Print a workflow variable's value; not set: exit 1.",
			doc: `The value as stored, for $(cairn vars get KEY). On a terminal, where a person reads it,
control and invisible characters (escape sequences) show as ?, said on stderr.`},
		{name: "vars unset", usage: "vars unset KEY... [--json]", min: 1, max: -1, existing: true, run: runVarsUnset, onState: true,
			summary: "Remove workflow variables; one not set is no change. Prints nothing on success."},
		{name: "vars export", usage: "vars export [--json]", run: runVarsExport, readOnly: true,
			summary: "Print the variables as export lines: eval \"$(cairn vars export)\".",
			doc: `Every value is single-quoted, so any content (quotes, $, newlines) comes back byte
for byte and nothing in it runs (on a terminal control characters show as ?, as for vars
get). With --json prints the variables as one JSON object.`},
		{name: "log append", usage: "log append NAME [JSON|-] [--json]", min: 1, max: 2, noEngine: true,
			run:     jsonWrite("the log entry", `'{"note": "text"}', or a quoted string, '"text"'`, (*engine.Engine).AppendLog),
			summary: "Append one JSON value as a line to the log NAME (from stdin when - or absent)."},
		{name: "log show", usage: "log show NAME [--tail N] [--json]", min: 1, max: 1, noEngine: true, run: runLogShow, readOnly: true,
			summary: "Print the log NAME, one JSON value a line (--tail N: the last N).",
			doc:     `With --json prints the entries as one JSON array.`},
		{name: "version", usage: "version [--json]", noEngine: true, run: runVersion,
			summary: "Print cairn's version."},
		{name: "help", usage: "help [COMMAND] [--json]", max: 2, noEngine: true, run: runHelp, readOnly: true,
			summary: "Show this overview, or one command's help."},
		{name: "completion", usage: "completion bash|zsh|fish", min: 1, max: 1, noEngine: true, run: runCompletion, readOnly: true,
			summary: "Print a shell completion script (commands, flags, phases, types, names).",
			doc: `bash:  source <(cairn completion bash)     (needs the bash-completion package; or save it
       in ~/.local/share/bash-completion/completions/cairn)
zsh:   autoload -U compinit && compinit; source <(cairn completion zsh)  (in ~/.zshrc)
fish:  cairn completion fish > ~/.config/fish/completions/cairn.fish`},
		{name: "uninstall", usage: "uninstall [--yes] [--with-state] [--json]", noEngine: true, run: runUninstall,
			summary: "Remove Cairn's lines and files from auto-memory, its binaries and its link.",
			doc: `Shows what it removes, then asks (on a terminal) or needs --yes; without either it only
shows. It removes the MEMORY.md lines pointing at cairn-workflow.md and cairn-learning-*.md
(every other line is kept byte for byte), those files (a learning changed since Cairn wrote
it is kept, with its line), the binaries in Claude Code's plugin data directories for Cairn
(~/.claude/plugins/data/cairn-*) and ~/.cache/cairn, and a ~/.local/bin/cairn link. The
project's workflow state (.claude/cairn) is kept unless --with-state. Run it in each project
whose memory should forget Cairn, before claude plugin uninstall cairn@cairn (which removes
the cairn command with the plugin).`},
	})
}

func register(cs []*command) {
	for _, c := range cs {
		commands[c.name] = c
		order = append(order, c.name)
		if noun, _, ok := strings.Cut(c.name, " "); ok {
			nouns[noun] = true
		}
	}
}

// lookup finds the command args name and returns the arguments after its name. A mistyped
// name is answered with the nearest ones.
func lookup(args []string) (*command, []string, error) {
	name := args[0]
	if nouns[name] {
		// Flags every command takes may come between the noun and its verb too, as before
		// the noun: cairn checkpoint --json list.
		var global []string
		rest := args[1:]
		for len(rest) > 0 && isGlobalFlag(rest[0]) {
			global, rest = append(global, rest[0]), rest[1:]
		}
		// -- ends them here as before the noun (cairn -- status): the verb follows.
		ended := len(rest) > 0 && rest[0] == "--"
		if ended {
			rest = rest[1:]
		}
		if !ended && len(rest) >= 1 && (rest[0] == "-h" || rest[0] == "-help" || rest[0] == "--help") {
			return commands["help"], append(global, name), nil
		}
		if !ended && len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			// A verb's flag put before it (cairn checkpoint --or-empty load plan): the verb
			// is there, the flag is out of place.
			if i := slices.IndexFunc(rest, func(w string) bool { return commands[name+" "+w] != nil }); i > 0 {
				return nil, nil, &usageError{msg: "a verb's flags go after it: cairn " + commands[name+" "+rest[i]].usage}
			}
		}
		if len(rest) < 1 || !ended && strings.HasPrefix(rest[0], "-") {
			return nil, nil, &usageError{msg: fmt.Sprintf("%s needs a verb: %s", name, strings.Join(verbs(name), ", ")),
				cmd: name, usage: strings.Join(usages(name), "\n       cairn ")}
		}
		c, ok := commands[name+" "+rest[0]]
		if !ok {
			return nil, nil, noSuchVerb("unknown command", name, rest[0])
		}
		return c, append(global, rest[1:]...), nil
	}
	c, ok := commands[name]
	if !ok {
		return nil, nil, noSuchCommand("unknown command", name)
	}
	return c, args[1:], nil
}

// noSuchCommand is msg with the name as typed when it is plain enough to repeat (named), and
// the commands nearest to it, or where to find them.
func noSuchCommand(msg, name string) error {
	return &usageError{msg: msg + named(name) + hint(name, topNames(), "cairn help lists them")}
}

// noSuchVerb is msg with "noun verb" as typed when the verb is plain enough to repeat, and
// noun's verbs nearest to verb, or all of them.
func noSuchVerb(msg, noun, verb string) error {
	if named(verb) != "" {
		msg += " " + strconv.Quote(noun+" "+verb)
	}
	if m := meant(noun+" ", verb, verbs(noun)); m != "" {
		return &usageError{msg: msg + "; " + m}
	}
	return &usageError{msg: msg + ": " + noun + " takes " + strings.Join(verbs(noun), ", ")}
}

// topNames are the words that can start a command line: commands and nouns.
func topNames() []string {
	var out []string
	for n := range commands {
		first, _, _ := strings.Cut(n, " ")
		out = append(out, first)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func verbs(noun string) []string {
	var v []string
	for _, n := range order {
		if rest, ok := strings.CutPrefix(n, noun+" "); ok {
			v = append(v, rest)
		}
	}
	return v
}

func usages(noun string) []string {
	var u []string
	for _, v := range verbs(noun) {
		u = append(u, commands[noun+" "+v].usage)
	}
	return u
}

func overview() string {
	var b strings.Builder
	b.WriteString(`cairn: durable, resumable state for Claude Code workflows.

usage: cairn COMMAND [ARGUMENTS] [--json]

`)
	width := 0
	for n := range commands {
		width = max(width, len(n))
	}
	section := func(title string, names []string) {
		b.WriteString(title + ":\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, n, commands[n].summary)
		}
		b.WriteString("\n")
	}
	// Sections start at named commands, so a command added to the table lands in one.
	at := func(n string) int { return slices.Index(order, n) }
	section("Workflows", order[:at("start")])
	section("Shell API (for bash blocks)", order[at("start"):at("version")])
	section("Other", order[at("version"):])
	b.WriteString(`Flags go before or after the arguments; -- ends them. Every command but completion
takes --json for scripts, also before its name (cairn --json status). Data goes to stdout,
errors and warnings to stderr. Colour only on a terminal (or with CLICOLOR_FORCE=1), never
with NO_COLOR set or TERM=dumb.

Exit codes:
  0  done
  1  refused or not found: a move the workflow does not allow, a conflict with another
     session, no active workflow, a missing checkpoint or variable, an invalid name or JSON,
     a secret in the data; or a doctor check failed
  2  usage error: unknown command, missing or extra arguments, a bad flag
  3  the state cannot be used: not writable, no permission, locked by a stuck process,
     written by a newer Cairn, a symlink in place of the state directory, a FIFO, link
     or directory in place of a state file; or the output could not be written (a full
     disk). A reader that leaves early (cairn history | head -1) ends cairn by SIGPIPE, as
     it ends any Unix tool: nothing said, exit 141 in the shell; watch and statusline exit 0

Environment:
  CLAUDE_PROJECT_DIR  the project (else the working directory); state is found at its git
                      root, in .claude/cairn. Outside git, commands that write need it
                      set, or state a session made there
  CAIRN_STATE_DIR     use this state directory instead
  CAIRN_MEMORY_DIR    use this auto-memory directory instead of Claude Code's
  CLAUDE_PLUGIN_ROOT  the plugin, for cairn doctor when cairn is not in its bin/

cairn help COMMAND shows a command's help.
`)
	return b.String()
}

// helpEntry is one command in `cairn help --json`.
type helpEntry struct {
	Name    string `json:"name"`
	Usage   string `json:"usage"`
	Summary string `json:"summary"`
	Doc     string `json:"doc"`
}

// runHelp shows the overview, one command's help or a noun's verbs'; with --json the same
// commands as a JSON array.
func runHelp(a *app, pos []string, _ *engine.Engine) error {
	var cs []*command
	switch name := strings.Join(pos, " "); {
	case len(pos) == 0:
		for _, n := range order {
			cs = append(cs, commands[n])
		}
	case commands[name] != nil:
		cs = []*command{commands[name]}
	case len(pos) == 1 && nouns[name]:
		for _, v := range verbs(name) {
			cs = append(cs, commands[name+" "+v])
		}
	case len(pos) == 2 && nouns[pos[0]]:
		return noSuchVerb("no such command", pos[0], pos[1])
	default:
		return noSuchCommand("no such command", name)
	}
	if a.json {
		out := make([]helpEntry, len(cs))
		for i, c := range cs {
			out[i] = helpEntry{Name: c.name, Usage: c.usage, Summary: c.summary, Doc: strings.TrimSpace(c.doc)}
		}
		return a.printJSON(out)
	}
	if len(pos) == 0 {
		fmt.Fprint(a.stdout, overview())
		return nil
	}
	for i, c := range cs {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		fmt.Fprint(a.stdout, c.help())
	}
	return nil
}
