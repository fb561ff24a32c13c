// Command cairn-stop is Cairn's Stop hook: Claude Code runs it after every turn. It is
// hook.Stop (internal/hook) with the YAML reader (internal/yamldoc) linked in, so a project's
// own workflow definitions are read in this process, under the hook's deadline.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func main() {
	hook.Stop(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
}
