package engine

import (
	"slices"

	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// shared is the mirror's state for the report when this clone shares its workflow through a
// remote (cairn remote enable), read from the state directory only: a hook never touches the
// network. Unreadable settings are a warning, not a failure of the report.
func (e *Engine) shared(r *workflow.Record, out *Resume) *report.Shared {
	s, err := mirror.Load(e.st)
	if err != nil {
		out.Warnings = append(out.Warnings, err.Error())
		return nil
	}
	id, rev := "", int64(0)
	if r != nil {
		id, rev = r.WorkflowID, r.Revision
	}
	sh := mirror.Shared(s, id, rev, e.now())
	if sh != nil {
		out.Shared = report.SharedLine(*sh)
	}
	return sh
}

// runsElsewhere is, when this clone shares r through a remote, which of r's running tasks run
// on another machine (mirror.RunsElsewhere), with the claim as last read: recovery leaves them
// running, since their session is not this machine's to take as ended. nil when no task runs
// or sharing is off.
func (e *Engine) runsElsewhere(r *workflow.Record) func(task string) (mirror.Claim, bool) {
	if !running(r) {
		return nil
	}
	return mirror.RunsElsewhere(e.st, r, mirror.Lease(e.cfg.Getenv), e.now())
}

// running says whether any of r's tasks is running: the only ones a recovery or another
// machine's claim concerns.
func running(r *workflow.Record) bool {
	return slices.ContainsFunc(r.Tasks, func(t workflow.Task) bool { return t.Status == workflow.TaskRunning })
}

// elsewhereOnly is runs without the claim; nil when runs is.
func elsewhereOnly(runs func(string) (mirror.Claim, bool)) func(task string) bool {
	if runs == nil {
		return nil
	}
	return func(task string) bool { _, ok := runs(task); return ok }
}

// heldElsewhere is runs for the tasks another machine's claim, as last read, holds and has not
// lapsed: not this machine's to run (one lapsed, it may take over; one with no claim read may
// be this machine's, unclaimed on a host that refuses claims); nil when runs is.
func heldElsewhere(runs func(string) (mirror.Claim, bool)) func(task string) bool {
	if runs == nil {
		return nil
	}
	return func(task string) bool { k, ok := runs(task); return ok && k.Holder != "" && !k.Lapsed() }
}

// RunningElsewhere words, for the views, each of r's running tasks another machine's claim
// holds, as last read (workflow.RunningElsewhere, as the status and the report say it), and
// "" for any other task; nil when none runs or r is not the workflow this clone shares.
func (e *Engine) RunningElsewhere(r *workflow.Record) func(task string) string {
	if r == nil || r.Status != workflow.StatusActive {
		return nil
	}
	runs := e.runsElsewhere(r)
	if runs == nil {
		return nil
	}
	return func(task string) string {
		if k, ok := runs(task); ok && k.Holder != "" {
			return workflow.RunningElsewhere(k.Lapsed())
		}
		return ""
	}
}
