package cli

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Shell completion is cobra's: its bash, zsh and fish scripts call `cairn __complete WORDS`,
// which cobra answers from a command tree built here from the commands table. Only completion
// goes through cobra; the commands parse their own arguments (flags anywhere, negative
// numbers as values), so every leaf is DisableFlagParsing and completes its own flags and
// arguments: flags from its usage line, arguments from the state (phases, types, workflow
// ids, checkpoint, variable and log names).

var completionShells = []string{"bash", "zsh", "fish"}

func runCompletion(a *app, pos []string, _ *engine.Engine) error {
	if a.json {
		return a.usageErr("a completion script is a shell script; it has no --json form")
	}
	root := a.cobraTree()
	switch pos[0] {
	case "bash":
		return root.GenBashCompletionV2(a.stdout, true)
	case "zsh":
		return root.GenZshCompletion(a.stdout)
	case "fish":
		return root.GenFishCompletion(a.stdout, true)
	}
	return a.usageErr("no completion for shell%s%s", named(pos[0]), hint(pos[0], completionShells, "cairn completes bash, zsh and fish"))
}

// isCompletionRequest: the hidden commands the completion scripts run.
func isCompletionRequest(arg string) bool {
	return arg == cobra.ShellCompRequestCmd || arg == cobra.ShellCompNoDescRequestCmd
}

// complete answers a completion script: cobra finds the command and prints the candidates.
func (a *app) complete(args []string) int {
	// The flags that may come before a command (cairn --json status) or between a noun and its
	// verb (cairn checkpoint --json load) are skipped as lookup skips them; cobra would take
	// them for the root's or the noun's and complete nothing. The last word is the one being
	// completed.
	words := args[1:]
	for len(words) > 1 && isGlobalFlag(words[0]) {
		words = words[1:]
	}
	if len(words) > 2 && nouns[words[0]] {
		rest := words[1:]
		for len(rest) > 1 && isGlobalFlag(rest[0]) {
			rest = rest[1:]
		}
		words = append([]string{words[0]}, rest...)
	}
	root := a.cobraTree()
	root.SetArgs(append([]string{args[0]}, words...))
	if err := root.Execute(); err != nil {
		return ExitUsage
	}
	return ExitOK
}

// cobraTree builds cobra's view of the commands table: nouns (checkpoint, vars, log) become
// parents of their verbs.
func (a *app) cobraTree() *cobra.Command {
	root := &cobra.Command{Use: "cairn", Short: "durable, resumable state for Claude Code workflows",
		SilenceErrors: true, SilenceUsage: true}
	root.CompletionOptions.DisableDefaultCmd = true
	// The flags main takes before a command, so that Tab offers them there; complete skips
	// --json before the command, and -v's --version is main's own.
	root.Flags().Bool("json", false, "print JSON, for scripts (also after the command)")
	root.Flags().Bool("version", false, "print cairn's version")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	parents := map[string]*cobra.Command{}
	for noun := range nouns {
		parents[noun] = &cobra.Command{Use: noun, Short: noun + ": " + strings.Join(verbs(noun), ", ")}
		root.AddCommand(parents[noun])
	}
	for _, name := range order {
		c := commands[name]
		noun, verb, isVerb := strings.Cut(name, " ")
		cmd := &cobra.Command{Use: cmp.Or(verb, name), Short: c.summary, DisableFlagParsing: true,
			ValidArgsFunction: a.completeArgs(c), Run: func(*cobra.Command, []string) {}}
		switch {
		case isVerb:
			parents[noun].AddCommand(cmd)
		case name == "help":
			root.SetHelpCommand(cmd)
		default:
			root.AddCommand(cmd)
		}
	}
	return root
}

// usageFlag finds the flags a usage line names.
var usageFlag = lazyre.New(`--[a-z][a-z-]*`)

// usageValue finds the flags a usage line gives a value, with the value's name: --reason TEXT.
var usageValue = lazyre.New(`--([a-z][a-z-]*) ([A-Z][A-Z|]*)`)

// completeArgs completes a leaf's flags (from its usage line) and its arguments.
func (a *app) completeArgs(c *command) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		const done = cobra.ShellCompDirectiveNoFileComp
		if strings.HasPrefix(toComplete, "-") {
			flags := usageFlag().FindAllString(c.usage, -1)
			return append(flags, "--help"), done
		}
		var pos []string // the arguments before the one being completed, flags and their values skipped
		for i := 0; i < len(args); i++ {
			if strings.HasPrefix(args[i], "-") && args[i] != "-" {
				if takesValue(c.usage, args[i]) && !strings.Contains(args[i], "=") {
					i++
				}
				continue
			}
			pos = append(pos, args[i])
		}
		if len(args) > 0 && takesValue(c.usage, args[len(args)-1]) {
			return a.flagValues(c.name, args[len(args)-1]), done
		}
		return a.argValues(c.name, pos), done
	}
}

// takesValue: the usage line shows the flag with a value (--reason TEXT), not alone.
func takesValue(usage, flag string) bool {
	_, rest, ok := strings.Cut(usage, flag+" ")
	return ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}

func (a *app) flagValues(cmd, flag string) []string {
	switch {
	case cmd == "transition" && flag == "--from":
		return a.phases()
	case cmd == "start" && flag == "--ttl":
		return []string{"24h", "72h", "168h"}
	}
	return nil
}

// stateEngine is the engine for completion, only where a state directory already exists:
// pressing Tab must not create one.
func (a *app) stateEngine() (*engine.Engine, error) {
	wd, err := a.workDir()
	if err != nil {
		return nil, err
	}
	dir, err := project.StateDir(a.getenv, wd)
	if err != nil {
		return nil, err
	}
	if !isDir(dir) {
		return nil, os.ErrNotExist
	}
	return a.engine()
}

// argValues completes the argument after pos of a command from the state; nothing on any
// error.
func (a *app) argValues(cmd string, pos []string) []string {
	n := len(pos)
	switch {
	case cmd == "help" && n == 0:
		return topNames()
	case cmd == "help" && n == 1 && nouns[pos[0]]:
		return verbs(pos[0]) // cairn help checkpoint load
	case cmd == "completion" && n == 0:
		return completionShells
	case (cmd == "start" || cmd == "types") && n == 0:
		if e, err := a.stateEngine(); err == nil {
			return e.Definitions()
		}
		return workflow.BuiltinNames()
	case cmd == "transition" && n <= 1:
		return a.phases()
	case cmd == "task" && n == 1:
		return []string{"pending", "running", "done", "failed"}
	case (cmd == "show" || cmd == "history") && n == 0:
		if e, err := a.stateEngine(); err == nil {
			all, _, _ := e.ListRecent(0)
			var ids []string
			for _, s := range all {
				ids = append(ids, s.WorkflowID)
			}
			return ids
		}
	case (cmd == "checkpoint load" || cmd == "checkpoint delete" || cmd == "checkpoint save") && n == 0:
		if e, err := a.stateEngine(); err == nil {
			names, _ := e.ListCheckpoints("")
			return names
		}
	case cmd == "vars get" && n == 0, cmd == "vars set" && n == 0, cmd == "vars unset":
		if e, err := a.stateEngine(); err == nil {
			kv, _ := e.GetVars(nil)
			for _, k := range pos { // vars unset A B: the names given already are not offered again
				delete(kv, k)
			}
			return slices.Sorted(maps.Keys(kv))
		}
	case (cmd == "log show" || cmd == "log append") && n == 0:
		if e, err := a.stateEngine(); err == nil {
			return logNames(e.StateDir())
		}
	}
	return nil
}

// phases are the active workflow's phases, the moves allowed from where it is first.
func (a *app) phases() []string {
	d, phase := a.active()
	if d == nil {
		return nil
	}
	out := d.Allowed(phase)
	for _, p := range d.Phases {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// active is the definition of the active workflow's type and its phase; nil when there is
// none.
func (a *app) active() (*workflow.Definition, string) {
	e, err := a.stateEngine()
	if err != nil {
		return nil, ""
	}
	s, err := e.Snapshot()
	if err != nil || s.WorkflowID == "" {
		return nil, ""
	}
	r, err := readRecord(e, s.WorkflowID)
	if err != nil {
		return nil, ""
	}
	d, _ := e.Definition(r.Type)
	return d, s.Phase
}

// logNames lists the logs in the state directory (logs/NAME.jsonl): names log show takes,
// not a file of another name planted there (a repository may commit one).
func logNames(stateDir string) []string {
	ents, _ := durable.ReadDirPath(filepath.Join(stateDir, "logs"))
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && e.Type().IsRegular() && store.ValidName(n) == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
