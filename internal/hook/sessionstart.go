package hook

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// SessionStartName is the SessionStart hook's binary, and the prefix of its stderr lines.
const SessionStartName = "cairn-session-start"

// SessionStart is Cairn's SessionStart hook. Claude Code runs it at every session start,
// whatever the source (startup, resume, clear, compact, fork), and holds the first model
// request until it ends, so it is quick and it never fails the session.
//
// It records the session (sessions/<claude_pid>.json), runs the read protocol with Apply
// (TTL expiry, integrity checks, recovery, the degradation tier) and prints the resume report
// as additionalContext, with a systemMessage when something needs the user's eye. With nothing
// to report it prints nothing. Bad state, bad stdin, internal errors and a hard deadline all
// end the same way: a line on stderr, at most a one-line systemMessage, and the process exits 0.
//
// yaml reads the project's own workflow definitions and seed 001's milestone files
// (yamldoc.Codec in the binary); nil leaves them unread, each one reported.
func SessionStart(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML) {
	runHook(SessionStartName, stdin, stdout, stderr, getenv, yaml, sessionStart, sessionStartEarly)
}

// sessionStartEarly is SessionStart's answer when it stops early, its %s the reason. Like every
// hook's answer it names no stderr: Claude Code shows a hook's stderr to no one when it exits 0.
const sessionStartEarly = "Cairn: the session-start check stopped early (%s); workflow state was not read this time: run `cairn status` to see it."

func sessionStart(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte {
	ev := r.event(stdin)
	sessionID := sessionOf(ev, getenv)
	pid := r.claudePID(getenv, true)

	e, err := openState(ctx, r, getenv, yaml, engine.Config{SessionID: sessionID, PID: pid, Actor: "session-start"}, true, "")
	if err != nil {
		saidBefore(getenv, sessionID, openFailure(err)) // marked as said, for the turns' Stop hooks
		return MessageOutput("Cairn: workflow state could not be opened; the session goes on without it: " + unusableMessage(err))
	}
	defer closeState(r, e)
	// The session record is an atomic but unsynced write (advisory, rewritten every start),
	// cheap enough to do first; without a session id a record would only hide the last good
	// one from the MCP server.
	var recordErr error
	if sessionID == "" {
		r.Logf("no session id on stdin or in CLAUDE_CODE_SESSION_ID; the session is not recorded")
	} else {
		now := time.Now().UTC()
		recordErr = e.RecordSession(engine.Session{
			SessionID: sessionID,
			Source:    ev.Source,
			PID:       pid,
			StartedAt: now,
			Heartbeat: now,
		})
	}

	// Put back Cairn's memory line if a background memory writer dropped it (engine.RestoreL2),
	// before the read protocol settles the lines owed: written onto the rewrite, they would
	// mark it as Cairn's own, and an owed line older than the one shown would stand alone as the
	// latest in a topic file the writer emptied.
	restored, deferred, w := e.RestoreL2()
	switch {
	case w != "":
		r.Logf("%s", w)
	case deferred:
		r.Logf("auto-memory consolidation holds its lock; Cairn's memory line is checked again later")
	case len(restored) > 0:
		r.Logf("wrote %s", strings.Join(restored, ", "))
	}
	// ReportOnly: the hook prints the report, never the whole record.
	// Compaction: the session's own compaction (same session id) does not expire the
	// workflow it owns, mid-work.
	// Task events kept earlier are recorded after the read and the repair it makes, which they
	// may have waited for, and before the report, so it has them; one failed look when none.
	var keptNotes []string
	res := e.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Compaction: ev.Source == "compact",
		AfterRead: func() bool {
			if !e.HasKeptClaudeTasks() {
				return false
			}
			var err error
			keptNotes, err = applyKept(ctx, r, e, 0)
			sayKeptWait(r, err)
			return true
		}})
	for _, w := range e.Warnings() {
		r.Logf("warning: %s", w)
	}
	if recordErr != nil {
		r.Logf("recording the session (pid %d): %v", pid, recordErr)
	}
	msg := res.SystemMessage
	if msg == "" && recordErr != nil {
		msg = "Cairn: this session could not be recorded, so Cairn's tools may not know it after /clear: " + recordErr.Error()
	}
	msg = engine.WithNotes(msg, keptNotes)
	r.Logf("%s", sessionStartSummary(ev.Source, sessionID, pid, res))
	// A new session or a fork gets a title; a resumed one keeps the name it has, which may be
	// one its user gave it.
	title := ""
	if ev.Source == "startup" || ev.Source == "fork" {
		title = engine.Title(res)
	}
	return sessionTitleOutput(res.Report, msg, title)
}

// claudePID is Claude Code's pid: $CLAUDE_PID, which Claude Code gives hooks, else this
// process's parent (Claude Code itself when launched without a shell in between). A CLAUDE_PID
// that is not a pid is noted on stderr when note is true.
func (r *Runner) claudePID(getenv func(string) string, note bool) int {
	v := getenv("CLAUDE_PID")
	if pid, err := strconv.Atoi(v); err == nil && pid > 0 {
		return pid
	}
	if v != "" && note {
		r.Logf("CLAUDE_PID is not a pid; using the parent pid %d", os.Getppid())
	}
	return os.Getppid()
}

// sessionStartSummary is the one stderr line that says what happened.
func sessionStartSummary(source, sessionID string, pid int, res *engine.Resume) string {
	var b strings.Builder
	fmt.Fprintf(&b, "source=%s session=%s pid=%d tier=%s", cmp.Or(source, "-"), logSession(sessionID), pid, cmp.Or(res.Tier, "-"))
	if res.WorkflowID != "" {
		fmt.Fprintf(&b, " workflow=%s phase=%s", res.WorkflowID, res.Phase)
	}
	for _, n := range res.Notices {
		fmt.Fprintf(&b, "; %s", n)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "; warning: %s", w)
	}
	if res.Report == "" {
		b.WriteString("; nothing to report")
	} else {
		fmt.Fprintf(&b, "; report of %d characters", textsafe.Units(res.Report))
	}
	return b.String()
}

// projectDirGiven reports whether the hook knows its project for sure: an absolute
// CLAUDE_PROJECT_DIR (as Claude Code sets it), or an explicit CAIRN_STATE_DIR. Without one the
// hook guesses from its working directory, and then creates nothing (a run from / must not
// make /.claude/cairn).
func projectDirGiven(getenv func(string) string) bool {
	d := getenv("CLAUDE_PROJECT_DIR")
	return d != "" && filepath.IsAbs(d) || getenv("CAIRN_STATE_DIR") != ""
}

// logSession is the session id as the hooks' stderr shows it: a UUID (what Claude Code
// sends, and no secret's shape), or an id of the shape Cairn stores (store.ValidWorkflowID,
// which also refuses a secret's shape), never a refused one. A UUID skips the secret scan,
// whose first use costs a hook about 0.1 ms.
func logSession(id string) string {
	switch {
	case id == "":
		return "-"
	case secrets.UUID(id):
		return id
	case store.ValidWorkflowID(id) != nil:
		return "(not a valid session id, not shown)"
	}
	return id
}
