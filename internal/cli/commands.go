package cli

import (
	"fmt"
	"sort"
	"strings"
)

// command is one cairn command. Nouns with verbs (checkpoint save) are registered under
// their two-word name.
type command struct {
	name    string
	usage   string // after "cairn "
	summary string // one line for the overview
	doc     string // the rest of `cairn help NAME`
	run     func(a *app, args []string) error
}

func (c *command) help() string {
	s := "usage: cairn " + c.usage + "\n\n" + c.summary + "\n"
	if c.doc != "" {
		s += "\n" + strings.TrimSpace(c.doc) + "\n"
	}
	return s
}

// commands is filled in init so the run functions can refer to the table (help does).
var commands map[string]*command

// order is how the overview lists them: the person's commands, then the shell API.
var order = []string{
	"status", "watch", "list", "show", "history", "archive", "expire", "doctor",
	"start", "transition", "complete", "task",
	"checkpoint save", "checkpoint load", "checkpoint list",
	"vars set", "vars get", "vars export", "log append",
	"version", "help",
	"hook session-start", "hook stop",
}

func init() {
	all := []*command{
		{name: "status", usage: "status [--json]", run: runStatus,
			summary: "Show the active workflow: phase, age, completed phases, next step, warnings.",
			doc: `Reads the state as the next session would (the read protocol) without changing
anything: a corrupt state file is set aside and said so, an expired workflow is reported,
not archived. With --json prints the engine's resume answer.`},
		{name: "watch", usage: "watch [--json]", run: runWatch,
			summary: "Follow the active workflow live; one line per change, until interrupted.",
			doc: `Prints the current position, then a line each time any process (the agent, a hook,
another cairn) changes the workflow. Stops on Ctrl-C (SIGINT) or SIGTERM and exits 0.
With --json each line is one JSON object: at, workflow_id, revision, phase, session_id,
updated_at (workflow_id is empty when no workflow is active).`},
		{name: "list", usage: "list [--json]", run: runList,
			summary: "List the active workflow and the archived ones, newest first."},
		{name: "show", usage: "show [ID] [--json]", run: runShow,
			summary: "Show one workflow, active or archived (default: the active one).",
			doc:     `With --json prints the stored record itself.`},
		{name: "history", usage: "history [ID] [--json]", run: runHistory,
			summary: "Show a workflow's journal: time, revision, event, who, from -> to.",
			doc:     `ID defaults to the active workflow. Archived workflows keep their journal.`},
		{name: "archive", usage: "archive [--reason R] [--json]", run: runArchive,
			summary: "Move the active workflow to the archive (kept, not deleted).",
			doc:     `The reason (default "archived") shows in cairn list.`},
		{name: "expire", usage: "expire [--dry-run] [--json]", run: runExpire,
			summary: "Archive the active workflow if its TTL has passed (--dry-run: only say).",
			doc: `An expired workflow is archived, never deleted, and an expiry line is written to
auto-memory. A workflow that has not expired is left alone and exit is 0.`},
		{name: "doctor", usage: "doctor [--json]", run: runDoctor,
			summary: "Check the install and the state; say what to fix. Exit 1 when a check fails.",
			doc: `Checks the binaries and plugin files, the state directory's permissions, the
auto-memory directory, the locks, stale temp files and the workflow definitions. The plugin
is the directory above this executable's bin/ when it holds .claude-plugin/, else
$CLAUDE_PLUGIN_ROOT.`},
		{name: "start", usage: "start TYPE CONTEXT [--id ID] [--scope S] [--ttl T] [--replace] [--json]", run: runStart,
			summary: "Start a workflow of TYPE (apex, debug, ...) in its first phase.",
			doc: `CONTEXT is a one-line summary of the work. An active workflow is refused (exit 1)
unless --replace, which archives it first (kept, not lost). --ttl is a duration like 24h.`},
		{name: "transition", usage: "transition [FROM] TO [--from FROM] [--note N] [--output PATH]... [--checkpoint JSON] [--json]", run: runTransition,
			summary: "Move the active workflow to phase TO (seed 003's sm_transition).",
			doc: `Already in TO: nothing changes, an INFO line goes to stderr and exit is 0, so a retry
is safe. With FROM (as --from or a first argument) the move happens only if the workflow is
in FROM; otherwise exit 1 says where it is and who moved it. --output records an output of
the phase being left (repeatable); --checkpoint keeps a JSON object in that phase's
metadata, in the same write. Entering a terminal phase completes and archives the workflow.`},
		{name: "complete", usage: "complete OUTCOME [--json]", run: runComplete,
			summary: "Complete the active workflow with a one-line OUTCOME and archive it."},
		{name: "task", usage: "task ID STATUS [--output P] [--note N] [--json]", run: runTask,
			summary: "Add or move a task of the current phase (pending, running, done, failed)."},
		{name: "checkpoint save", usage: "checkpoint save NAME [JSON|-] [--json]", run: runCheckpointSave,
			summary: "Save a named JSON checkpoint (from stdin when JSON is - or absent).",
			doc: `NAME is 1 to 64 lowercase letters, digits, '.', '_' or '-'. The JSON is checked
(strict, at most 1 MiB) and refused if it holds a secret. Prints nothing on success.`},
		{name: "checkpoint load", usage: "checkpoint load NAME [--or-empty]", run: runCheckpointLoad,
			summary: "Print a checkpoint's JSON; missing: exit 1, or {} with --or-empty.",
			doc:     `--or-empty is the seeds' graceful default (load_json_checkpoint).`},
		{name: "checkpoint list", usage: "checkpoint list [PATTERN] [--json]", run: runCheckpointList,
			summary: "List checkpoint names matching a glob PATTERN (default all), one a line."},
		{name: "vars set", usage: "vars set KEY VALUE [--json]", run: runVarsSet,
			summary: "Set a workflow variable (the seeds' append_workflow_state).",
			doc: `KEY is letters, digits and _; names the shell gives meaning to (PATH, IFS, LD_*,
CLAUDE_*, ...) are refused. A VALUE starting with - goes after --: cairn vars set N -- -1.
Prints nothing on success.`},
		{name: "vars get", usage: "vars get KEY [--json]", run: runVarsGet,
			summary: "Print a workflow variable's value; not set: exit 1."},
		{name: "vars export", usage: "vars export [--json]", run: runVarsExport,
			summary: "Print the variables as export lines: eval \"$(cairn vars export)\".",
			doc: `Every value is single-quoted, so any content (quotes, $, newlines) comes back byte
for byte and nothing in it runs. With --json prints the variables as one JSON object.`},
		{name: "log append", usage: "log append NAME [JSON|-] [--json]", run: runLogAppend,
			summary: "Append one JSON value as a line to the log NAME (from stdin when - or absent)."},
		{name: "version", usage: "version [--json]", run: runVersion,
			summary: "Print cairn's version."},
		{name: "help", usage: "help [COMMAND]", run: runHelp,
			summary: "Show this overview, or one command's help."},
		{name: "hook session-start", usage: "hook session-start", run: runHookSessionStart,
			summary: "Claude Code's SessionStart hook, with YAML (the hook hands over to it).",
			doc: `Reads the hook event on stdin and prints the hook's answer, exactly as
cairn-session-start does. The hook binaries link no YAML library, for start-up time; when a
project defines its own workflows (.claude/workflows/*.md) or has seed 001's milestone files,
they run this instead. People need not run it.`},
		{name: "hook stop", usage: "hook stop", run: runHookStop,
			summary: "Claude Code's Stop hook, with YAML (the hook hands over to it).",
			doc: `Reads the hook event on stdin and prints the hook's answer, exactly as cairn-stop
does, for projects that define their own workflows. People need not run it.`},
	}
	commands = make(map[string]*command, len(all))
	for _, c := range all {
		commands[c.name] = c
	}
}

// nouns are the commands that take a verb.
var nouns = map[string]bool{"checkpoint": true, "vars": true, "log": true, "hook": true}

// lookup finds the command args name and returns the arguments after its name.
func lookup(args []string) (*command, []string, error) {
	name := args[0]
	if nouns[name] {
		if len(args) >= 2 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help") {
			return commands["help"], []string{name}, nil
		}
		if len(args) < 2 || strings.HasPrefix(args[1], "-") {
			return nil, nil, &usageError{msg: fmt.Sprintf("%s needs a verb: %s", name, strings.Join(verbs(name), ", ")),
				cmd: name, usage: strings.Join(usages(name), "\n       cairn ")}
		}
		name += " " + args[1]
		args = args[1:]
	}
	c, ok := commands[name]
	if !ok {
		return nil, nil, &usageError{msg: "unknown command: cairn help lists them"}
	}
	return c, args[1:], nil
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
	for _, n := range order {
		if strings.HasPrefix(n, noun+" ") {
			u = append(u, commands[n].usage)
		}
	}
	return u
}

func overview() string {
	var b strings.Builder
	b.WriteString(`cairn: durable, resumable state for Claude Code workflows.

usage: cairn COMMAND [ARGUMENTS] [--json]

`)
	width := 0
	for _, n := range order {
		width = max(width, len(n))
	}
	section := func(title string, names []string) {
		b.WriteString(title + ":\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, n, commands[n].summary)
		}
		b.WriteString("\n")
	}
	section("Workflows", order[:8])
	section("Shell API (for bash blocks)", order[8:19])
	section("Other", order[19:])
	b.WriteString(`Flags go before or after the arguments; -- ends them. Every command takes --json
for scripts. Data goes to stdout, errors and warnings to stderr.

Exit codes:
  0  done
  1  refused or not found: a move the workflow does not allow, a conflict with another
     session, no active workflow, a missing checkpoint or variable, an invalid name or JSON,
     a secret in the data; or a doctor check failed
  2  usage error: unknown command, missing or extra arguments, a bad flag
  3  the state cannot be used: not writable, no permission, locked by a stuck process,
     written by a newer Cairn, a symlink in place of the state directory

Environment:
  CLAUDE_PROJECT_DIR  the project (else the working directory); state is found at its git
                      root, in .claude/cairn
  CAIRN_STATE_DIR     use this state directory instead
  CAIRN_MEMORY_DIR    use this auto-memory directory instead of Claude Code's
  CLAUDE_PLUGIN_ROOT  the plugin, for cairn doctor when cairn is not in its bin/

cairn help COMMAND shows a command's help.
`)
	return b.String()
}

func runHelp(a *app, args []string) error {
	fs := a.flags()
	pos, err := a.parse(fs, args, 0, 2)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fmt.Fprint(a.stdout, overview())
		return nil
	}
	name := strings.Join(pos, " ")
	if c, ok := commands[name]; ok {
		fmt.Fprint(a.stdout, c.help())
		return nil
	}
	if len(pos) == 1 && nouns[name] {
		var names []string
		for _, v := range verbs(name) {
			names = append(names, name+" "+v)
		}
		sort.Strings(names)
		for i, n := range names {
			if i > 0 {
				fmt.Fprintln(a.stdout)
			}
			fmt.Fprint(a.stdout, commands[n].help())
		}
		return nil
	}
	return &usageError{msg: "no such command: cairn help lists them"}
}
