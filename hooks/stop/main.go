// Command cairn-stop is Cairn's Stop hook: Claude Code runs it after every turn. It is
// hook.Stop (internal/hook) in a binary that links no YAML library, for start-up time; a
// project that needs YAML read is handed to `cairn hook stop` (hook.HandOff) before stdin is
// read.
package main

import (
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/internal/hook"
)

func main() {
	if note := hook.HandOff(hook.EventStop, os.Getenv); note != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", hook.StopName, note)
	}
	os.Exit(hook.Stop(os.Stdin, os.Stdout, os.Stderr, os.Getenv, nil))
}
