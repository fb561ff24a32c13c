// Command cairn-session-start is Cairn's SessionStart hook: Claude Code runs it at every
// session start and holds the first model request until it ends. It is hook.SessionStart
// (internal/hook) in a binary that links no YAML library, for start-up time; a project that
// needs YAML read is handed to `cairn hook session-start` (hook.HandOff) before stdin is read.
package main

import (
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/internal/hook"
)

func main() {
	if note := hook.HandOff(hook.EventSessionStart, os.Getenv); note != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", hook.SessionStartName, note)
	}
	os.Exit(hook.SessionStart(os.Stdin, os.Stdout, os.Stderr, os.Getenv, nil))
}
