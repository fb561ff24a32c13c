// Command cairn-session-start is Cairn's SessionStart hook: Claude Code runs it at every
// session start and holds the first model request until it ends. It is hook.SessionStart
// (internal/hook) with the YAML reader (internal/yamldoc) linked in, so a project's own
// workflow definitions are read in this process, under the hook's deadline.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func main() {
	hook.SessionStart(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
}
