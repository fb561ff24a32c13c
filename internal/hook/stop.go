package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// StopName is the Stop hook's binary, and the prefix of its stderr lines.
const StopName = "cairn-stop"

// Stop is Cairn's Stop hook. Claude Code runs it after every turn, so it is cheap and
// idempotent when nothing changed.
//
// It asks the engine for what the write protocol owes at the end of a turn (the L2 position
// and completion lines, the owner heartbeat) and whether the active workflow's blocking
// violations warrant asking the agent, once, to deal with them: then it prints
// {"decision":"block","reason":...}. The engine guards that (never twice in a row, never when
// blocking is turned off); this hook adds one more guard of its own: never while
// stop_hook_active is true, so a bug elsewhere cannot trap the session in a loop, nor for an
// event named other than Stop. Errors go to stderr and at most a one-line systemMessage, once
// per session for the same failure; the process exits 0.
//
// yaml reads the project's own workflow definitions (yamldoc.Codec in the binary).
func Stop(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML) {
	runHook(StopName, stdin, stdout, stderr, getenv, yaml, stop, stopEarly)
}

// stopEarly is Stop's answer when it stops early, its %s the reason.
const stopEarly = "Cairn: the end-of-turn check stopped early (%s); what it owed is retried after the next turn."

func stop(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte {
	ev := r.event(stdin)
	if !ev.Read {
		// Without the event, stop_hook_active is unknown: asking the agent to continue could
		// be the second ask in a row, so this turn does not ask; nor does it take the
		// violations as answered (NoAsk), so a later turn still asks about them.
		ev.StopHookActive = true
		r.Logf("the event could not be read; not asking the agent to continue this turn")
	}
	// Wired to another event (SubagentStop, say), a block would make something else
	// continue: not asked, nor taken as asked.
	otherEvent := ev.HookEventName != "" && ev.HookEventName != EventStop
	if otherEvent {
		ev.StopHookActive = true
		r.Logf("the event is %s, not Stop; not asking the agent to continue", eventShown(ev.HookEventName))
	}
	sessionID := sessionOf(ev, getenv)
	pid := r.claudePID(getenv, false) // a bad CLAUDE_PID is SessionStart's to report

	e, err := openState(ctx, r, getenv, yaml, engine.Config{SessionID: sessionID, PID: pid, Actor: "stop"}, true, "")
	if err != nil {
		// SessionStart said it when it was there at the start (openFailure).
		return sayOnce(r, getenv, sessionID, openFailure(err), "Cairn: workflow state could not be opened; nothing was written this turn: "+unusableMessage(err))
	}
	defer closeState(r, e)
	// Task events kept earlier, first (one failed directory read when none); those that wait
	// for a repair, after the one this turn's end makes.
	keptNotes, keptErr := applyKept(ctx, r, e, 0)

	out, err := e.Stop(engine.StopInput{SessionID: sessionID, StopHookActive: ev.StopHookActive, NoAsk: !ev.Read || otherEvent,
		Late: func() bool { return ctx.Err() != nil }})
	if errors.Is(keptErr, store.ErrRepairLeft) && err == nil {
		var more []string
		more, keptErr = applyKept(ctx, r, e, 0)
		keptNotes = append(keptNotes, more...)
	}
	sayKeptWait(r, keptErr) // still waiting: this turn's end made no repair, or failed
	if out != nil {
		// What applying them set aside no later hook says either.
		out.SystemMessage = engine.WithNotes(out.SystemMessage, keptNotes)
	}
	if err != nil {
		r.Logf("end-of-turn protocol: %v", err)
		if engine.IsNewerState(err) || engine.IsForeignSnapshot(err) {
			// State left as it is on purpose, not a failure: SessionStart told the user what
			// it is and the step; each turn would only repeat it.
			return nil
		}
		// The person's line: their own step in the agent's place.
		why := strings.Replace(err.Error(), engine.DamagedStep, "run `cairn doctor`", 1)
		if engine.LockedBy(err) != "" {
			// No one can run the end of a turn again; the next turn's does it.
			why = engine.WithoutRetry(err) + "; retried after the next turn"
		}
		msg := "Cairn: the end-of-turn check failed" + unchangedSoFar(out, err) + why
		// The failure is the error, whatever this turn's end changed before it.
		told := toldBefore(r, getenv, sessionID, e.StateDir()+"\x00stop\x00"+failureOf(err))
		if out != nil && out.SystemMessage != "" {
			// What the turn's end did before it failed (a damaged snapshot set aside) no later
			// read says again: it is said whole, the failure after it in short, within one
			// line (no room for its error, which names a path: a path is never cut); the
			// failure counts as said for this session. A warning that lasts (an owed L2
			// line) is said once with it.
			both := out.SystemMessage + "; then the end-of-turn check failed"
			return sayOnce(r, getenv, sessionID, e.StateDir()+"\x00"+both, both)
		}
		if told {
			return nil
		}
		return MessageOutput(msg)
	}
	block := out.Block
	if block && ev.StopHookActive {
		r.Logf("the engine asked to block while stop_hook_active is true; not blocking, so the session cannot loop")
		block = false
	}
	r.Logf("%s", stopSummary(sessionID, ev.StopHookActive, block, out))
	msg := out.SystemMessage
	if msg != "" && toldBefore(r, getenv, sessionID, e.StateDir()+"\x00"+msg) {
		// The same words after an earlier turn of this session: a failure that lasts (an L2
		// line Cairn cannot write until someone acts) is said once, and retried quietly.
		msg = ""
	}
	return StopOutput(block, out.Reason, msg)
}

// failureOf is what saidBefore knows the failure of a turn's end by: its error, or for a lock
// given up on, the lock and its holder, not how long each turn's end waited.
func failureOf(err error) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		return te.Path + " " + te.Who()
	}
	return err.Error()
}

// unchangedSoFar says, between the failure of a turn's end and its error, what the turn's end
// had changed of the workflow when it failed: nothing, or the owner's heartbeat. A damaged
// workflow's error says itself what was kept where.
func unchangedSoFar(out *engine.StopOutcome, err error) string {
	switch {
	case errors.As(err, new(*store.DamagedError)):
		return ": "
	case out != nil && len(out.Followed.Said()) > 0:
		return "; only the tasks Claude Code deleted, completed, set back from completed or renamed were recorded: "
	case out != nil && out.Heartbeat:
		return "; only this session's heartbeat was recorded: "
	}
	return "; workflow state is unchanged: "
}

func stopSummary(sessionID string, active, block bool, out *engine.StopOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session=%s stop_hook_active=%t; %s", logSession(sessionID), active, wroteSummary(out))
	if block {
		b.WriteString("; asked the agent to deal with blocking violations")
	}
	return b.String()
}

// wroteSummary says for the log what the end of a turn wrote to L2, and what it still owes:
// L2 lines and the owner's heartbeat.
func wroteSummary(out *engine.StopOutcome) string {
	var parts []string
	if len(out.Wrote) > 0 {
		parts = append(parts, "wrote "+strings.Join(out.Wrote, ", "))
	}
	if out.Owed > 0 {
		parts = append(parts, fmt.Sprintf("%d auto-memory line%s still owed, retried after the next turn", out.Owed, workflow.Plural(out.Owed)))
	}
	if out.RestoreFailed != "" {
		parts = append(parts, out.RestoreFailed)
	}
	if out.HeartbeatErr != nil {
		parts = append(parts, fmt.Sprintf("owner heartbeat not recorded, retried after the next turn: %v", out.HeartbeatErr))
	}
	parts = append(parts, out.Followed.Said()...)
	if out.DroppedErr != nil {
		parts = append(parts, fmt.Sprintf("Claude Code's task list not followed, retried after the next turn: %v", out.DroppedErr))
	}
	if len(parts) == 0 {
		return "nothing to write"
	}
	return strings.Join(parts, "; ")
}

// sayOnce is the systemMessage msg about failure, or nil when this session was told of it
// before (saidBefore).
func sayOnce(r *Runner, getenv func(string) string, sessionID, failure, msg string) []byte {
	if toldBefore(r, getenv, sessionID, failure) {
		return nil
	}
	return MessageOutput(msg)
}

// toldBefore is saidBefore, logged when it is so.
func toldBefore(r *Runner, getenv func(string) string, sessionID, failure string) bool {
	if !saidBefore(getenv, sessionID, failure) {
		return false
	}
	r.Logf("the user was told of this failure earlier in this session; not repeated")
	return true
}

// openFailure is how saidBefore knows state that could not be opened: the same for both hooks,
// so that a Stop does not say again what its session's SessionStart said.
func openFailure(err error) string { return "open\x00" + err.Error() }

// StopMarkFile is saidBefore's mark in the user's cache (project.CacheDir).
const StopMarkFile = "stop-failure-said"

// saidBefore reports whether this session was already told of failure (which names its state
// directory, or the state that could not be opened), and when not, records that it is told now, so that a failure that persists
// (damaged state stays damaged until someone acts) is said once per session, not after every
// turn. The mark is not written into the state that just failed (damaged, locked or not
// writable) but into the user's cache, ${XDG_CACHE_HOME:-$HOME/.cache}/cairn/stop-failure-said,
// a line for each failure told: the session id and a hash of the failure, the newest
// markLines of them within markSize bytes, so that sessions open at once do not take each
// other's lines. Concurrent writers may lose one, which at worst says a failure again; a mark
// that cannot be read or written says it every turn.
func saidBefore(getenv func(string) string, sessionID, failure string) bool {
	// The launcher's own directory outside Claude Code, which cairn uninstall removes.
	dir := project.CacheDir(getenv, getenv("HOME"))
	if sessionID == "" || dir == "" {
		return false
	}
	sum := sha256.Sum256([]byte(failure))
	mark := sessionID + " " + hex.EncodeToString(sum[:16]) + "\n"
	file := filepath.Join(dir, StopMarkFile)
	var lines []string
	if old, err := durable.ReadPath(file, markSize, false); err == nil {
		for line := range strings.Lines(string(old)) {
			if line == mark {
				return true
			}
			if strings.HasSuffix(line, "\n") {
				lines = append(lines, line)
			}
		}
	}
	lines = append(lines, mark)
	size := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if size += len(lines[i]); size > markSize || len(lines)-i > markLines {
			lines = lines[i+1:]
			break
		}
	}
	// Made one level at a time: never a missing HOME.
	_ = os.Mkdir(filepath.Dir(dir), 0o755)
	_ = os.Mkdir(dir, 0o755)
	_ = durable.WriteFileAtomic(file, []byte(strings.Join(lines, "")), 0o600)
	return false
}

// The most saidBefore's mark keeps: lines (failures told) and bytes.
const (
	markLines = 32
	markSize  = 4096
)
