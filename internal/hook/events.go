package hook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// EventsName is the binary that serves Claude Code's other events (TaskCreated,
// TaskCompleted, PreCompact, StopFailure), and the prefix of its stderr lines.
const EventsName = "cairn-event"

// The events cairn-event serves, as hook_event_name names them.
const (
	EventTaskCreated   = "TaskCreated"
	EventTaskCompleted = "TaskCompleted"
	EventPreCompact    = "PreCompact"
	EventStopFailure   = "StopFailure"
	EventStop          = "Stop" // cairn-stop's
)

// Events is the hook for Claude Code's own events, one binary dispatching on
// hook_event_name:
//
//   - TaskCreated, TaskCompleted: Claude Code's task list lives per session id, so a new
//     session, /clear or a fork starts without it. The task is mirrored into the active
//     workflow's tasks, in its current phase, through the engine's locked, journaled write;
//     the next session's resume report lists the open ones. Claude Code's own task store is
//     never written. Nothing is printed: these events' output could block the task. So a
//     task event that finds the state needing a repair keeps the event, as one the lock
//     keeps out, and leaves the repair to the next Stop or session start, which says it.
//   - PreCompact: prints a short anchor (workflow, phase, next step) that Claude Code adds to
//     the compaction request, so the summary keeps the position. SessionStart (source
//     compact) then brings the full report back, and makes and says a repair the state
//     needs, which PreCompact leaves (it prints no anchor then).
//   - StopFailure: a turn that ends in an API error (server error, overload, a rejected
//     request) fires it instead of Stop. It does the Stop hook's work (the L2 lines owed, a
//     MEMORY.md line a background writer dropped, the owner heartbeat), so MEMORY.md does not
//     stay stale until the next turn or session, but never asks the agent anything: it cannot
//     answer. Claude Code runs this hook in the background and ignores its output, so nothing
//     is printed, and a repair the state needs (a damaged snapshot or document set aside) is
//     not made: it and the whole turn's end are left to the next Stop or session start,
//     which says it (engine.Config.NoRepair).
//
// Like every Cairn hook it never fails the session: problems go to stderr, the exit code
// is 0, and a hard deadline bounds it.
//
// yaml reads the project's own workflow definitions (yamldoc.Codec in the binary).
func Events(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML) {
	runHook(EventsName, stdin, stdout, stderr, getenv, yaml, events, eventsEarly)
}

// eventsEarly is Events' answer when it stops early, its %s the reason. It cannot say what
// changed: a task event may have recorded those kept before it, and StopFailure part of the
// end-of-turn work.
const eventsEarly = "Cairn: an event hook stopped early (%s)."

func events(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte {
	ev := r.event(stdin)
	switch ev.HookEventName {
	case EventTaskCreated, EventTaskCompleted, EventPreCompact, EventStopFailure:
	case "":
		r.Logf("the event has no hook_event_name; nothing to do")
		return nil
	default:
		r.Logf("event %s is not one this hook serves; nothing to do", eventShown(ev.HookEventName))
		return nil
	}
	sessionID := sessionOf(ev, getenv)
	pid := r.claudePID(getenv, true)
	// Without a usable project dir, as for the other hooks, nothing is created: an event has
	// nothing to record where no workflow is.
	// No event here says a repair: StopFailure's output is discarded, a task event prints
	// nothing, and the compaction drops warnings. A repair the state needs is left to the next
	// Stop or session start, which says it.
	cfg := engine.Config{SessionID: sessionID, PID: pid, Actor: strings.ToLower(ev.HookEventName), NoRepair: true}
	lost := ""
	release := func() {}
	if ev.HookEventName == EventTaskCreated || ev.HookEventName == EventTaskCompleted {
		// Until it is recorded or kept, a signal or the hard stop waits: the process's end
		// would lose it, and no one sends it again.
		release = r.hold()
		defer release()
		cfg.LockWait = time.Millisecond // a held lock is waited for once the event is kept
		// Without the state the event cannot even be kept for a later hook.
		lost = fmt.Sprintf("%s task %s not recorded (Claude Code does not send it again)", ev.HookEventName, stderrShown(ev.TaskID))
		r.stopSays.Store(&lost) // until it is recorded or kept
	}
	e, err := openState(ctx, r, getenv, yaml, cfg, true, lost)
	if err != nil {
		return nil
	}
	defer closeState(r, e)

	switch ev.HookEventName {
	case EventStopFailure, EventPreCompact:
		// Task events kept earlier first, as Stop and SessionStart record them: the end of the
		// turn and the anchor are then the task list's as Claude Code changed it, and no kept
		// event waits past "the next Cairn hook" its keeping promised. Only if the lock is free
		// now, and the state needs no repair (left to the next Stop or session start, which
		// applies them after it); one failed directory read when none is kept.
		_, kerr := applyKept(ctx, r, e, 0)
		sayKeptWait(r, kerr)
	}
	switch ev.HookEventName {
	case EventStopFailure:
		out, err := e.Stop(engine.StopInput{SessionID: sessionID, NoAsk: true})
		if errors.Is(err, store.ErrRepairLeft) {
			r.Logf("session=%s; the turn ended in an API error; the workflow state needs a repair, left with the end-of-turn work to the next Stop or session start, which says it", logSession(sessionID))
			return nil
		}
		if err != nil {
			r.Logf("the turn ended in an API error; end-of-turn protocol: %v", err)
			return nil
		}
		if out.SystemMessage != "" {
			r.Logf("%s", out.SystemMessage)
		}
		r.Logf("session=%s; the turn ended in an API error; %s", logSession(sessionID), wroteSummary(out))
		return nil
	case EventPreCompact:
		// The anchor names the first open task: not one the model deleted this turn, and one it
		// set back from completed, by its subject now.
		if f, err := e.FollowClaudeTasks(); err != nil {
			r.Logf("Claude Code's task list not followed, left to the end of the turn: %v", err)
		} else {
			for _, s := range f.Said() {
				r.Logf("%s", s)
			}
		}
		anchor, problem := e.CompactAnchor()
		switch {
		case problem != "":
			r.Logf("trigger=%s; no anchor: %s", cmp.Or(ev.Trigger, "-"), problem)
			return nil
		case anchor == "":
			r.Logf("trigger=%s; no active workflow, no anchor", cmp.Or(ev.Trigger, "-"))
			return nil
		}
		r.Logf("trigger=%s; anchor of %d characters", cmp.Or(ev.Trigger, "-"), textsafe.Units(anchor))
		return []byte(Context(anchor, MaxReason) + "\n")
	}

	completed := ev.HookEventName == EventTaskCompleted
	t := engine.ClaudeTask{SessionID: sessionID, TaskID: ev.TaskID, Subject: ev.TaskSubject, Description: ev.TaskDescription}
	// At once when none is kept and the workflow lock is free: e waits for no lock.
	if !e.HasKeptClaudeTasks() {
		res, err := e.RecordClaudeTask(t, completed)
		if keptWhy(err) == "" {
			r.stopSays.Store(nil)
			sayTask(r, t, completed, res, err)
			return nil
		}
	}
	// Else kept first, then applied after those kept before it (the order Claude Code changed
	// its list in), with a wait for the lock: a signal or the hard stop in that wait (Esc,
	// Claude Code exiting) ends the process with the event kept for the next hook, not lost.
	keepErr := e.KeepClaudeTask(t, completed)
	if keepErr == nil {
		kept := fmt.Sprintf("%s task %s was kept before the stop: the next Cairn hook records it if this one did not", taskEvent(completed), stderrShown(t.TaskID))
		r.stopSays.Store(&kept)
	}
	release()
	_, err = applyKept(ctx, r, e, taskLockWait)
	switch {
	case keepErr == nil && err != nil:
		sayKept(r, t, completed, err)
	case keepErr == nil: // applied with them, and said
	case err == nil:
		// Not kept (refused, or the write failed): recorded now if the lock lets it.
		res, err := e.RecordClaudeTask(t, completed)
		if keptWhy(err) == "" {
			r.stopSays.Store(nil)
			sayTask(r, t, completed, res, err)
			return nil
		}
		notKept(r, t, completed, err, keepErr)
	default:
		notKept(r, t, completed, err, keepErr)
	}
	return nil
}

// taskLockWait bounds each wait of a task event for a lock. Claude Code holds the model's
// TaskCreate or TaskUpdate call until the hook ends, and a write holds the workflow lock for
// milliseconds: a lock held past this is held by something slow (a sync, a stalled disk), and
// waiting the hook's whole lock wait (3.75 s of its 5 s) for it would only stall the model,
// each task it creates again. The event, kept before the wait, is left kept and recorded by
// the next Cairn hook, in order: nothing is lost.
const taskLockWait = time.Second

// taskEvent is the hook event that carries a task's creation, or its completion.
func taskEvent(completed bool) string {
	if completed {
		return EventTaskCompleted
	}
	return EventTaskCreated
}

// sayTask says on stderr what became of a task event: RecordClaudeTask's answer.
func sayTask(r *Runner, t engine.ClaudeTask, completed bool, res *engine.Result, err error) {
	switch {
	case errors.Is(err, engine.ErrNoActiveWorkflow):
		r.Logf("%s task %s: no active workflow, not recorded", taskEvent(completed), stderrShown(t.TaskID))
	case errors.Is(err, syscall.ENOSPC):
		// No one can try again: Claude Code does not send a hook event twice.
		free := "some space"
		if store.NoInodes(err) {
			free = "some inodes"
		}
		r.Logf("%s task %s not recorded (Claude Code does not send it again): %s; free %s so that the next events are recorded",
			taskEvent(completed), stderrShown(t.TaskID), store.WithoutPersonStep(err), free)
	case isFinding(err) && shapedIDs(t) != "":
		// Claude Code's ids, not the model's text: advice to keep them in an environment
		// variable would make no sense.
		r.Logf("%s task %s not recorded: %s a secret's shape (not stored)", taskEvent(completed), stderrShown(t.TaskID), shapedIDs(t))
	case err != nil:
		r.Logf("%s task %s not recorded: %v", taskEvent(completed), stderrShown(t.TaskID), err)
	default:
		r.Logf("%s", res.Message)
		for _, w := range res.Warnings {
			r.Logf("warning: %s", w)
		}
	}
}

// shapedIDs names the ids of t, Claude Code's, that have a secret's shape, with their verb
// ("the task id has"), or is "".
func shapedIDs(t engine.ClaudeTask) string {
	session, task := secrets.ScanString(t.SessionID) != nil, secrets.ScanString(t.TaskID) != nil
	switch {
	case session && task:
		return "the session id and the task id have"
	case session:
		return "the session id has"
	case task:
		return "the task id has"
	}
	return ""
}

// notKept says on stderr that a task event the lock kept out (locked, keptWhy) could not be
// kept either (keepErr). One refused for Claude Code's ids is said as sayTask says it.
func notKept(r *Runner, t engine.ClaudeTask, completed bool, locked, keepErr error) {
	if isFinding(keepErr) && shapedIDs(t) != "" {
		sayTask(r, t, completed, nil, keepErr)
		return
	}
	r.Logf("%s task %s not recorded (Claude Code does not send it again): %s, and keeping the event failed: %s", taskEvent(completed), stderrShown(t.TaskID), keptWhy(locked), keepFailed(keepErr))
}

// keepFailed is err, a failure to keep or read kept task events, with the store's step ending
// in ", then try again" ended by what it is for: no one can send a hook event again.
func keepFailed(err error) string {
	msg := err.Error()
	if cut, ok := strings.CutSuffix(msg, ", then try again"); ok {
		return cut + " so that the next events are kept"
	}
	return msg
}

// sayKept says on stderr that a task event the lock kept out is kept.
func sayKept(r *Runner, t engine.ClaudeTask, completed bool, locked error) {
	r.Logf("%s task %s kept: %s; it will be recorded by %s", taskEvent(completed), stderrShown(t.TaskID), keptWhy(locked), keptUntil(locked))
}

// keptUntil says which hook records task events kept for err (keptWhy): the next one; when
// they wait for a repair, the first after it (the Stop that makes it applies them first, and
// a task event makes none); when another hook records them now, that one.
func keptUntil(err error) string {
	switch {
	case errors.Is(err, store.ErrRepairLeft):
		return "the first Cairn hook after that repair"
	case store.InTheWay(err):
		return "the first Cairn hook after that"
	case errors.Is(err, engine.ErrKeptBusy): // unless a lock keeps that one out too
		return "that hook or the next"
	}
	return "the next Cairn hook"
}

// keptWhy says why a task event is kept for a later hook: the lock err gave up on, another
// hook recording the kept ones (engine.ErrKeptBusy), the repair the state needs
// (store.ErrRepairLeft), or a state that cannot take it now (engine.StateUnusable: something
// in a state file's place, with the person's step; a read-only directory); "" when err is
// none of them, or a full disk (said as not recorded), or kept-tasks/ itself in the way.
func keptWhy(err error) string {
	switch {
	case errors.Is(err, engine.ErrKeptBusy):
		return err.Error()
	case store.KeptTasksLocked(err): // by a stopped hook
		return "the kept task events are locked " + lockedSaid(err)
	case engine.LockedBy(err) != "":
		return "the workflow is locked " + lockedSaid(err)
	case errors.Is(err, store.ErrRepairLeft):
		return "the workflow state needs a repair, left to the next Stop or session start, which says it"
	case errors.Is(err, syscall.ENOSPC), store.KeptTasksInTheWay(err):
		// Said as not recorded (sayTask), or no event can be kept.
	case engine.Classify(err) == engine.StateUnusable:
		return strings.TrimSuffix(err.Error(), ", then try again")
	}
	return ""
}

// lockedSaid says who holds the lock err gave up on, and, when that process is stopped, the
// step that frees it.
func lockedSaid(err error) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok && te.Resume() != "" {
		return te.Who() + "; " + te.Resume()
	}
	return engine.LockedBy(err)
}

// applyKept records the task events kept by earlier hooks (engine.ApplyKeptClaudeTasks),
// saying on stderr what became of each. It returns the notes of kept events that could not be
// read (moved to quarantine/, or left), said on stderr too, for a hook whose output is read to
// say (no later hook says them), and the lock wait's error when the lock still keeps them
// out, or another hook records them (said by that one). With none kept it costs one directory
// read that finds nothing. wait, each lock wait's bound (engine.ApplyKeptClaudeTasks); 0: only
// if the lock is free now, and for half the time ctx leaves.
func applyKept(ctx context.Context, r *Runner, e *engine.Engine, wait time.Duration) ([]string, error) {
	var until time.Time
	if d, ok := ctx.Deadline(); ok && wait == 0 {
		// Half the time left: the caller's own work (the anchor, the report, the turn's end)
		// comes after, and what is not recorded now stays kept for the next hook.
		until = time.Now().Add(time.Until(d) / 2)
	}
	notes, err := e.ApplyKeptClaudeTasks(wait, until, func(t engine.ClaudeTask, completed bool, res *engine.Result, err error) {
		sayTask(r, t, completed, res, err)
	})
	for _, n := range notes {
		r.Logf("%s", n)
	}
	switch {
	case errors.Is(err, engine.ErrKeptBusy):
		return notes, err
	case keptWhy(err) != "": // said by the caller (sayKeptWait); a task event's own line says it
		return notes, err
	case err != nil:
		r.Logf("task events kept earlier: %s", keepFailed(err))
	}
	return notes, nil
}

// sayKeptWait says on stderr that the task events kept earlier still wait, when err
// (applyKept's) says they do and no other hook is recording them.
func sayKeptWait(r *Runner, err error) {
	if !errors.Is(err, engine.ErrKeptBusy) && keptWhy(err) != "" {
		r.Logf("task events kept earlier wait: %s; they will be recorded by %s", keptWhy(err), keptUntil(err))
	}
}

// eventShown is an event's name as the log repeats it: quoted, or workflow.NotRepeated.
func eventShown(name string) string {
	if s := stderrShown(name); s != workflow.NotRepeated {
		return strconv.Quote(s)
	}
	return workflow.NotRepeated
}

// stderrShown is a field of the event (a task id, an event's name) as the log repeats it: on
// one line, cut, and not at all when it has a secret's shape (Claude Code shows a hook's
// stderr).
func stderrShown(id string) string {
	if secrets.ScanString(id) != nil {
		return workflow.NotRepeated
	}
	return cmp.Or(OneLine(id, 40), "-")
}

// isFinding says whether err is a refusal of a secret (secrets.Finding).
func isFinding(err error) bool {
	_, ok := errors.AsType[*secrets.Finding](err)
	return ok
}
