package cli

import (
	"flag"
	"io"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// The hooks, with a YAML reader. They speak Claude Code's hook protocol, not the CLI's: the
// answer is on stdout, diagnostics on stderr, and the exit status is always 0.

func runHookSessionStart(a *app, args []string) error { return a.runHook(args, hook.SessionStart) }

func runHookStop(a *app, args []string) error { return a.runHook(args, hook.Stop) }

func (a *app) runHook(args []string, run func(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML) int) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return flag.ErrHelp
	}
	if len(args) > 0 {
		return &usageError{msg: "takes no arguments: the hook event comes on stdin", cmd: a.name, usage: a.name}
	}
	if code := run(a.stdin, a.stdout, a.stderr, a.getenv, yamldoc.Codec{}); code != 0 {
		return &codeError{code: code, silent: true}
	}
	return nil
}
