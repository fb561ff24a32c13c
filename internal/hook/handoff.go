package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cairn-dev/cairn/internal/fsx"
	"github.com/cairn-dev/cairn/internal/project"
)

// The hook binaries link no YAML library: its package initialisation and size cost every
// session start a measurable share of its time, and most projects never need one. A project
// that does (its own workflow definitions, or seed 001's milestone files) is handed to the
// cairn binary installed beside the hooks, which runs the same hook code with a YAML reader:
// `cairn hook session-start` or `cairn hook stop`. The handoff happens before stdin is read, so
// the cairn binary gets the event as Claude Code wrote it.

// EnvHandOff is set for the cairn binary by a hook that handed over to it: why it did.
const EnvHandOff = "CAIRN_HOOK_HANDOFF"

// Events, as `cairn hook EVENT` names them.
const (
	EventSessionStart = "session-start"
	EventStop         = "stop"
)

// NeedsYAML says why the project at root needs a YAML reader for event, or "" when it does
// not: workflow definitions of its own (.claude/workflows/*.md) or, at session start, seed
// 001's milestone files (documentation/milestones/_active/*.md, whose front matter the read
// protocol's last resort reads).
func NeedsYAML(root, event string) string {
	if hasMarkdown(filepath.Join(root, ".claude", "workflows")) {
		return "the project defines workflows in .claude/workflows"
	}
	if event == EventSessionStart && hasMarkdown(filepath.Join(root, "documentation", "milestones", "_active")) {
		return "the project has milestone files in documentation/milestones/_active"
	}
	return ""
}

func hasMarkdown(dir string) bool {
	ents, err := fsx.ReadDirPath(dir)
	if err != nil {
		// Unreadable but present: the engine will fail on it too, and say so; a YAML reader
		// would not help.
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			return true
		}
	}
	return false
}

// HandOff runs `cairn hook EVENT` in this process's place when the project needs a YAML
// reader (NeedsYAML). It returns only when there was nothing to hand off (note is "") or the
// handoff failed: then note says why, for stderr, and the hook goes on without a YAML reader
// (the engine reports each file it could not read).
func HandOff(event string, getenv func(string) string) (note string) {
	wd, err := os.Getwd()
	if err != nil {
		return "" // the engine cannot open the project either, and says so
	}
	root, err := project.Root(getenv, wd)
	if err != nil {
		return ""
	}
	why := NeedsYAML(root, event)
	if why == "" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Sprintf("%s, but this binary cannot find where it is installed (%v), so it cannot hand over to the cairn binary: YAML files are not read this time", why, err)
	}
	full := filepath.Join(filepath.Dir(exe), "cairn")
	if runtime.GOOS == "windows" {
		full += ".exe"
	}
	err = execInPlace(full, []string{"cairn", "hook", event}, append(os.Environ(), EnvHandOff+"="+why))
	return fmt.Sprintf("%s, but handing over to %s failed (%v): YAML files are not read this time; make build (or reinstalling the plugin) puts the cairn binary beside the hooks", why, full, err)
}
