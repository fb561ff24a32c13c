package hook

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// sessionOf is the session a hook serves: the event's, else the one every hook's environment
// names.
func sessionOf(ev Event, getenv func(string) string) string {
	return cmp.Or(ev.SessionID, getenv("CLAUDE_CODE_SESSION_ID"))
}

// openState opens Cairn's state for a hook: cfg with getenv, yaml and the lock wait left
// before ctx's deadline, for all the locks it meets; cfg.LockWait, when set and shorter,
// bounds each one (a task event's, taskLockWait). guess: without a project dir it knows for sure (projectDirGiven) the
// hook reads the working directory's project, creates nothing there, and says so on stderr.
// A failure is a line on stderr too, with its step, after lost when not "": what the failure
// costs that no later hook makes up for (a task event Claude Code does not send again).
func openState(ctx context.Context, r *Runner, getenv func(string) string, yaml engine.YAML, cfg engine.Config, guess bool, lost string) (*engine.Engine, error) {
	wait := lockWait(ctx)
	cfg.Getenv, cfg.YAML = getenv, yaml
	cfg.LockUntil = time.Now().Add(wait) // for all the locks the hook meets, not each
	if cfg.LockWait <= 0 || cfg.LockWait > wait {
		cfg.LockWait = wait
	}
	cfg.NoCreate = guess && !projectDirGiven(getenv)
	cfg.NoCreateRoot = true // a project deleted under its session stays deleted
	e, err := engine.Open(cfg)
	switch {
	case err != nil:
		if lost != "" {
			lost += ": "
		}
		r.Logf("%sopening Cairn's state: %s", lost, unusableState(err))
	case cfg.NoCreate:
		r.Logf("CLAUDE_PROJECT_DIR is unset or relative: using %s as the project root, read only (nothing is created there)", OneLine(e.ProjectRoot(), 300))
	}
	return e, err
}

// closeState closes what openState opened; a failure is a line on stderr.
func closeState(r *Runner, e *engine.Engine) {
	if err := e.Close(); err != nil {
		r.Logf("closing Cairn's state: %v", err)
	}
}

// unusableState is engine.UnusableState for a hook's line. Where the fix is a variable set
// again (CAIRN_STATE_DIR naming a path a file is in the way of), no later hook or tool call of
// this session sees it: Claude Code passes them the environment it started with.
func unusableState(err error) string {
	s := engine.UnusableState(err)
	if store.DirVariable(err) != "" {
		s = strings.Replace(s, "; "+engine.InTheWayStep, ", then restart Claude Code: its hooks and tools keep the environment it started with", 1)
	}
	return s
}

// unusableMessage is unusableState for a hook's systemMessage, one line of MaxMessage. Where
// CAIRN_STATE_DIR names a path a file is in the way of, the store's words and their two paths
// never fit it, and the cut took the step ("…y, or unset it"): the line says the step whole,
// cairn doctor which file (stderr has it too).
func unusableMessage(err error) string {
	if v := store.DirVariable(err); v != "" {
		return "a file is in the way of the directory " + v + " names (cairn doctor says which): set " + v + " to a directory, or unset it, then restart Claude Code"
	}
	return unusableState(err)
}
