// Command cairn-event is Cairn's hook for Claude Code's own events: TaskCreated and
// TaskCompleted (Claude Code's task list, mirrored into the active workflow so that a new
// session still has it), PreCompact (an anchor for the compaction summary) and StopFailure
// (the Stop hook's work after a turn that ended in an API error). It is
// hook.Events (internal/hook), dispatching on hook_event_name, with the YAML reader
// (internal/yamldoc) linked in for a project's own workflow definitions.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func main() {
	hook.Events(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
}
