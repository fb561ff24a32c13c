package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// statuslineWait bounds the wait for the first bytes of Claude Code's statusLine JSON: it
// writes it and closes stdin at once; a person running the command at a terminal gets the
// line after this. Once they have come, the rest is read for up to statuslineWhole in all.
const statuslineWait, statuslineWhole = 300 * time.Millisecond, 2 * time.Second

// statusInput is what `cairn statusline` reads of Claude Code's statusLine JSON.
type statusInput struct {
	CWD       string `json:"cwd"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
}

// runStatusline prints one short line for Claude Code's statusLine setting. Like a hook it
// never fails the client: a problem is a line on stderr, an empty stdout and exit 0, a
// line it could not write too.
func runStatusline(a *app, _ []string, _ *engine.Engine) error {
	defer pipeErrors()()
	if err := statusline(a); err != nil {
		a.say(err.Error())
	}
	a.outputDone()
	return nil
}

// statusline prints the line; its only error is the write's.
func statusline(a *app) error {
	data, err := hook.ReadStarted(a.stdin, 1<<20, statuslineWait, statuslineWhole)
	var in statusInput
	// A person at a terminal sends nothing, and nothing is said of it; what did come is read.
	if err == nil || errors.Is(err, hook.ErrInputTimeout) {
		err = nil
		if len(strings.TrimSpace(string(data))) > 0 {
			err = strictjson.ExplainIn(data, json.Unmarshal(data, &in))
		}
	}
	if err != nil {
		a.say("stdin is not Claude Code's statusLine JSON (" + err.Error() + "); using the working directory")
	}
	// The project is where Claude Code was started (workspace.project_dir), as for the hooks.
	dir := cmp.Or(in.Workspace.ProjectDir, in.Workspace.CurrentDir, in.CWD)
	if dir != "" && !filepath.IsAbs(dir) {
		dir = ""
	}
	// Nothing to show prints nothing, or with --json JSON's nothing, null.
	none := func() error {
		if a.json {
			return a.printJSON(nil)
		}
		return nil
	}
	// NoRepair: a repair's notice is said once, and Claude Code shows nothing of stderr.
	e, err := engine.Open(engine.Config{Getenv: a.getenv, WorkDir: dir, Actor: "cli", YAML: yamldoc.Codec{}, NoCreate: true, NoLockWait: true, NoRepair: true, ReadInMemory: true})
	if err != nil {
		a.say(err.Error())
		return none()
	}
	a.eng = e // closed by main
	s, ok, err := e.QuickStatus()
	if err != nil {
		a.say(err.Error())
	}
	if errors.Is(err, store.ErrRepairLeft) && !a.json {
		_, err := fmt.Fprintln(a.stdout, "cairn: the state needs a repair · run cairn status")
		return err
	}
	if !ok {
		return none()
	}
	return a.answer(map[string]any{"type": s.Type, "phase": s.Phase, "phase_status": s.PhaseStatus,
		"phases_done": s.Done, "phases_total": s.Total, "age_seconds": int64(s.Age / time.Second)}, "%s", statusLine(s))
}

// statusLine words a status: "apex · plan 2/5 · 12m"; a phase that is not in progress says
// so ("plan (blocked)").
func statusLine(s engine.Status) string {
	line := secrets.Clip(clean(s.Type), 24) + " · " + secrets.Clip(clean(s.Phase), 32)
	if s.PhaseStatus != "" && s.PhaseStatus != "in_progress" {
		line += " (" + secrets.Clip(clean(s.PhaseStatus), 16) + ")"
	}
	if s.Total > 0 {
		line += fmt.Sprintf(" %d/%d", s.Done, s.Total)
	} else if s.Done > 0 {
		line += fmt.Sprintf(" %d done", s.Done)
	}
	if s.Age > 0 {
		line += " · " + workflow.Age(s.Age)
	}
	return line
}
