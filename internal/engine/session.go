package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Session is what the SessionStart hook records about a running Claude Code client.
type Session struct {
	SessionID string    `json:"session_id"`
	Source    string    `json:"source,omitempty"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat"`
	// Replaced are the sessions this client ran before this one, newest first (at most
	// maxReplaced): a client runs one session at a time, so /clear or /resume ended them.
	// RecordSession keeps them; older files have none.
	Replaced []string `json:"replaced,omitempty"`
	// ClientStart is when the client of PID started, as store.ProcessStart tells it (0: not known,
	// and in older files): a process of that pid that started at another time took the pid
	// after the client exited (clientRunning). RecordSession fills it in.
	ClientStart uint64 `json:"client_start,omitempty"`
}

// maxReplaced bounds Session.Replaced. Only an owner recorded without a pid needs the list,
// and only until this client's first turn end after that owner's last change (heartbeatEvery
// on) stamps the client's pid on it: a client replaces few sessions in that time, however
// many it replaces in its life (TestLongLivedClientReplacedListLosesNothing).
const maxReplaced = 8

// StopInput is what the Stop hook knows.
type StopInput struct {
	SessionID      string
	StopHookActive bool
	// NoAsk: the turn ended in an API error (Claude Code's StopFailure, which fires instead
	// of Stop), so the agent cannot answer, or the Stop event could not be read, so whether
	// this turn is already an answer is not known. Nothing is asked, and nothing about asking
	// is recorded: the next turn's Stop decides as if this one had not happened.
	NoAsk bool
	// Late, when set, reports whether the hook is past its deadline, when a block it would
	// print may never be printed: nothing is asked then, nor recorded as asked, so a later
	// turn asks.
	Late func() bool
}

// StopOutcome says what the Stop hook should print.
type StopOutcome struct {
	Block         bool   // ask the agent to continue and deal with Reason
	Reason        string // names the blocking violations
	SystemMessage string // one line for the user, or ""
	Wrote         []string
	Owed          int // L2 lines still owed after this turn (retried after the next), for the log
	// RestoreFailed is why Cairn's L2, changed by another writer, was not put back (retried
	// after the next turn), for the log: said or not in SystemMessage.
	RestoreFailed string
	// Heartbeat: the turn's end recorded the owner's heartbeat (a journaled change of the
	// workflow), so a failure after it cannot be said as leaving the workflow unchanged.
	Heartbeat bool
	// HeartbeatErr is why the owner's heartbeat, due, was not recorded (retried after the
	// next turn), for the log.
	HeartbeatErr error
	// Followed counts what the turn's end changed of this session's tasks to follow its Claude
	// Code task list (followClaudeTasks: deleted, reopened, renamed there), a journaled change
	// like the heartbeat; DroppedErr is why that failed (tried again after the next turn), for
	// the log.
	Followed   TasksFollowed
	DroppedErr error
}

// heartbeatEvery throttles the owner heartbeat the Stop hook refreshes: a journaled write at
// most this often, well inside workflow.DefaultLiveWindow.
const heartbeatEvery = 2 * time.Minute

// stopStateDoc remembers which set of blocking violations the Stop hook already asked the
// agent about, so it asks once per set and never twice in a row.
const stopStateDoc = "stop-state"

type stopState struct {
	WorkflowID  string `json:"workflow_id"`
	Fingerprint string `json:"fingerprint"`
	At          string `json:"at"`
	// Answering is the session Cairn asked, from the ask until that session's next ordinary
	// Stop: the continuations ending between are its answer. Older files have none.
	Answering string `json:"answering,omitempty"`
}

// RecordSession writes sessions/<pid>.json: which Claude Code session the client with that pid
// is in now. The MCP server (whose parent is that client) reads it to learn the session after
// /clear. The session the record named before, if another, has ended (a client runs one at a
// time: /clear, /resume), and is kept in Replaced, so that an owner of it recorded without a
// pid (the agent's cairn in its Bash tool without a live CLAUDE_PID, or an older Cairn's) is taken as
// ended by this client's engines, as one with this pid is (ownerEnded).
func (e *Engine) RecordSession(s Session) error {
	if s.PID <= 0 {
		return fmt.Errorf("recording the session: no Claude Code pid (pid %d)", s.PID)
	}
	s.Replaced = nil
	if s.ClientStart == 0 {
		s.ClientStart, _ = store.ProcessStart(s.PID)
	}
	prev, ok, err := e.readSession(s.PID)
	if err != nil {
		// Taken as none, it would be rewritten without the sessions this client ran before.
		// The error says what to do at its end; the caller says the session was not recorded.
		return err
	}
	// A record another client left with this pid (it exited, this one took the pid) names
	// sessions this client never ran.
	if ok && (prev.ClientStart == 0 || s.ClientStart == 0 || prev.ClientStart == s.ClientStart) {
		if prev.SessionID != s.SessionID {
			s.Replaced = []string{prev.SessionID}
		}
		for _, id := range prev.Replaced {
			// One resumed again is live again.
			if id != s.SessionID && id != prev.SessionID && len(s.Replaced) < maxReplaced {
				s.Replaced = append(s.Replaced, id)
			}
		}
	}
	now := e.now()
	if s.StartedAt.IsZero() {
		s.StartedAt = now
	}
	if s.Heartbeat.IsZero() {
		s.Heartbeat = now
	}
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if s.checked() {
		return e.st.WriteOwnSession(s.PID, doc)
	}
	return e.st.WriteSession(strconv.Itoa(s.PID), doc) // scanned: text from outside
}

// checked reports whether the record holds no text from outside that could hold a secret: its
// session ids are UUIDs (as Claude Code sends them) and its source one of Claude Code's. Its
// other fields are a pid and times. Anything else is scanned when it is written.
func (s Session) checked() bool {
	if !secrets.UUID(s.SessionID) || !KnownSource(s.Source) {
		return false
	}
	for _, id := range s.Replaced {
		if !secrets.UUID(id) {
			return false
		}
	}
	return true
}

// sessionSources are the SessionStart sources Claude Code sends, and none.
var sessionSources = []string{"", "startup", "resume", "clear", "compact", "fork"}

// KnownSource reports whether s is a SessionStart source Claude Code sends, or none: text
// from outside that needs no scan for a secret.
func KnownSource(s string) bool { return slices.Contains(sessionSources, s) }

// sessionClient is what the session records (sessions/<pid>.json) say of the Claude Code
// session id, for an owner recorded without a pid or a client that has exited: running is the
// pid of a running client whose record names it as its session (another than this one first), else of one that ran it
// before its session now (Session.Replaced: /clear, /resume), which goes on with its work
// (this client first); 0: none. ended says the session has ended: a client ran it before the
// one it is in now, or the client whose record names it has exited, and no client still
// running names it as its session. A session no record names is not known to have ended.
// Every record of a process that runs, and this client's, is read; of the others (exited
// clients') at most maxSessionsRead, which only say a session ended.
func (e *Engine) sessionClient(id string) (running int, ended bool) {
	names, err := e.st.Sessions()
	if err != nil {
		return 0, false
	}
	exited, self := 0, false
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if pid != e.cfg.PID && !processAlive(pid) {
			if exited++; exited > maxSessionsRead {
				continue
			}
		}
		s, ok := e.CurrentSession(pid)
		if !ok || s.SessionID != id && !slices.Contains(s.Replaced, id) {
			continue
		}
		// This client runs, but a record of its pid is its own only if it started then: one
		// an exited client left (this client's SessionStart hook has not replaced it) is not.
		runs := (pid == e.cfg.PID || processAlive(pid)) && !store.PIDTaken(pid, s.ClientStart)
		switch {
		case s.SessionID == id && runs && pid != e.cfg.PID:
			return pid, false // live as its heartbeat says
		case s.SessionID == id && runs:
			// This client's session: another client may run it too (`claude --continue`).
			running, self = pid, true
			continue
		case runs && (running == 0 || pid == e.cfg.PID):
			running = pid
		}
		ended = true
	}
	if self {
		return e.cfg.PID, false
	}
	return running, ended
}

// maxSessionsRead bounds the records of exited clients sessionClient reads: cairn-mcp
// removes them after an hour, but a script running claude in a loop leaves many in that hour.
const maxSessionsRead = 64

// CurrentSession returns what the SessionStart hook last recorded for a Claude Code pid.
func (e *Engine) CurrentSession(pid int) (Session, bool) {
	s, ok, _ := e.readSession(pid)
	return s, ok
}

// readSession is CurrentSession with why a record there could not be read (an I/O error, not
// a missing or damaged one).
func (e *Engine) readSession(pid int) (Session, bool, error) {
	var s Session
	if pid <= 0 {
		return s, false, nil
	}
	data, err := e.st.ReadSession(strconv.Itoa(pid))
	if _, ok := errors.AsType[*fs.PathError](err); ok && !errors.Is(err, fs.ErrNotExist) {
		return Session{}, false, err
	}
	if err != nil || json.Unmarshal(data, &s) != nil || s.SessionID == "" {
		return Session{}, false, nil
	}
	return s, true, nil
}

// Stop is the Stop hook's work after every turn: tell the user what the store repaired
// reading the workflow, put back Cairn's L2 where another writer changed it, settle the L2
// lines owed, refresh this session's heartbeat on the workflow it owns (throttled), and decide
// whether to ask the agent to deal with blocking violations: once per set of violations, never
// while stop_hook_active, never when the definition or the configuration turned blocking off,
// never another session beside the workflow's live owner (besideLiveOwner), whose own Stop
// asks.
func (e *Engine) Stop(in StopInput) (*StopOutcome, error) {
	if in.SessionID != "" {
		e.cfg.SessionID = in.SessionID
	}
	out := &StopOutcome{}
	r, notices, err := e.active()
	if errors.Is(err, store.ErrRepairLeft) {
		// Opened NoRepair: the whole turn's end is the next hook's, after its repair.
		return out, err
	}
	// Undo a background memory writer's rewrite of Cairn's L2 (l2mark.go) before settling:
	// lines written onto the rewrite would mark it as Cairn's own, and an owed line older than
	// the one shown, written into a topic file the writer emptied, would stand there as the
	// latest.
	restored, _, w, failed := e.restoreL2(true)
	wrote, owed, warn := e.settleL2(r)
	out.Owed, out.RestoreFailed = owed, failed
	// What the store did reading the workflow (a damaged snapshot set aside) is said only by
	// the read that did it: after a turn, often this one.
	out.Wrote = append(restored, wrote...)
	if _, ok := errors.AsType[*store.DamagedError](err); ok {
		// Its text is the one line to say: it names the snapshots quarantine/ keeps, the one
		// this read set aside too, and the step, as every later read's does.
		return out, err
	}
	if failed == "" || warn == "" {
		// What the restore says once (lines it pushed out, a mark set aside) is said beside
		// the settling's; a failed restore only where the settling says nothing, which would
		// say the same cause, and it is retried after the next turn.
		warn = also(w, warn)
	}
	if warn = withNotices(warn, notices); warn != "" {
		out.SystemMessage = "Cairn: " + warn
	}
	if err != nil || r == nil || r.Status != workflow.StatusActive {
		return out, err
	}
	out.Followed, out.DroppedErr = e.followClaudeTasks(r)
	now := e.now()
	// The owner's heartbeat is this client's to keep while the owner's session runs here, or
	// ran here until /clear replaced it: the client goes on with the workflow, and a second
	// terminal is to be warned of it as before. The replaced owner keeps it (a heartbeat never
	// takes a workflow: a change does). One in the future (a clock put right since) is due, or
	// it would stay live until then, for ever at year 9999.
	due := in.SessionID != "" && r.Owner != nil && (now.Sub(r.Owner.Heartbeat) >= heartbeatEvery || r.Owner.Heartbeat.After(now))
	var by workflow.Actor
	if due { // the actor's host and client start are asked of the system: not every turn
		by = e.actor()
	}
	// Asked only when due: an owner without a pid is looked for in the session records. One
	// resumed in another client since is that client's to keep.
	replaced := due && r.Owner.SessionID != "" && r.Owner.SessionID != in.SessionID && e.ranInThisClient(r.Owner) &&
		!e.otherClientIn(r.Owner.SessionID)
	if replaced {
		by.SessionID = r.Owner.SessionID
	}
	if due && (replaced || r.Owner.SessionID == in.SessionID && !e.inOtherLiveClient(r.Owner)) {
		res, _, err := e.change(func(cur *workflow.Record) (workflow.Result, error) {
			if cur == nil || cur.WorkflowID != r.WorkflowID || replaced && (cur.Owner == nil || !e.ranInThisClient(cur.Owner)) {
				return workflow.Result{Event: workflow.EventNone}, nil
			}
			return workflow.Heartbeat(cur, by, now)
		}, "")
		out.Heartbeat, out.HeartbeatErr = err == nil && res.Changed, err
		if err == nil {
			// What its locked read did (a change the snapshot missed brought in from the
			// journal, revisions a damaged line cut off) no later read says again.
			out.SystemMessage = WithNotes(out.SystemMessage, res.Warnings)
		}
	}
	if !out.Heartbeat {
		e.endBreak(notices) // said above; a heartbeat ends it too
	}
	if i := slices.IndexFunc(notices, func(n store.Notice) bool { return n.Lost }); i >= 0 && !in.NoAsk && !in.StopHookActive && (in.Late == nil || !in.Late()) {
		// No later read says it, and the model holds the changes lost as made: it is told
		// too, once (the break is ended), before any other ask.
		out.Block = true
		out.Reason = "Cairn: " + notices[i].Message + ". Changes made to the workflow after that revision are not in its state: call " + ToolPrefix + "resume_check to see where it stands, tell the user, and make again those still needed."
		return out, nil
	}
	// Cheap checks first: most turns end with nothing blocking, and need no definition.
	// Another session beside the live owner (a fork, a second terminal) is not asked, nor is
	// the ask recorded: the owner's next Stop asks. (The owner's own session, in whichever
	// client, is the one stop-state knows.)
	if in.NoAsk || !r.Blocking() || !e.stopBlocking() || r.Owner != nil && r.Owner.SessionID != e.cfg.SessionID && e.besideLiveOwner(r) {
		return out, nil
	}
	if def, _ := e.definitionFor(r); !workflow.StopShouldBlock(def, r) {
		return out, nil
	}
	vs := r.BlockingViolations()
	fp := fingerprint(r.WorkflowID, vs)
	var asked bool
	var aside *store.Notice
	// The session Cairn asks, as it names its answer; "-" when not known.
	session := cmp.Or(e.cfg.SessionID, "-")
	_, aside, err = e.st.UpdateOwn(stopStateDoc, func(cur []byte) ([]byte, error) {
		s := decodeLenient[stopState](cur)
		ours := s.WorkflowID == r.WorkflowID
		answering := ours && s.Answering == session
		if ours && s.Fingerprint == fp {
			asked = true
			if answering && !in.StopHookActive {
				// This session's first ordinary Stop after its answer: the answer is over.
				s.Answering = ""
				return json.Marshal(s)
			}
			return nil, nil
		}
		if in.StopHookActive {
			// Never asked while stop_hook_active. When Cairn asked this session and this is
			// the continuation ending, it is the agent's answer, and the list it left (the
			// reason says to take what was fixed out of it) is the one it dealt with: the next
			// turn is not asked about it again. Otherwise another hook made the continuation
			// (or another session's): keep the list for a later turn.
			asked = true
			if !answering {
				return nil, nil
			}
		}
		if in.Late != nil && in.Late() {
			asked = true
			return nil, nil
		}
		return json.Marshal(stopState{WorkflowID: r.WorkflowID, Fingerprint: fp, At: now.Format(time.RFC3339), Answering: session})
	})
	if aside != nil {
		if out.SystemMessage == "" {
			out.SystemMessage = "Cairn: " + aside.Message
		} else {
			out.SystemMessage += "; " + aside.Message
		}
	}
	if err != nil || asked {
		return out, err
	}
	out.Block = true
	out.Reason = blockReason(r, vs)
	return out, nil
}

// WithNotes is msg, a systemMessage or "", with notes said after it, each once: one it says
// already (a notice two reads of the same state both made) is not said again.
func WithNotes(msg string, notes []string) string {
	for _, n := range notes {
		switch {
		case n == "" || strings.Contains(msg, n):
		case msg == "":
			msg = "Cairn: " + n
		default:
			msg += "; " + n
		}
	}
	return msg
}

func fingerprint(id string, vs []workflow.Violation) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, string(v.Severity)+"\x00"+v.Code+"\x00"+v.Details)
	}
	sort.Strings(parts)
	h := sha256.Sum256([]byte(id + "\x01" + strings.Join(parts, "\x01")))
	return hex.EncodeToString(h[:8])
}

// blockReason is what the Stop hook asks the agent: the workflow and its blocking violations,
// stored text all, fenced as the resume report fences it (report.Render: one clean line each,
// at most five and "+N more", report.MaxLen bytes in all), then Cairn's one instruction and
// the tool that lists them all.
func blockReason(r *workflow.Record, vs []workflow.Violation) string {
	blocking := make([]Violation, len(vs))
	for i, v := range vs {
		blocking[i] = Violation{Code: v.Code, Severity: string(v.Severity), Details: v.Details}
	}
	// The tools by the names the model sees them under: this text is no Cairn tool's result.
	// set_enforcement replaces the whole list, LOW ones and all: what was fixed comes out.
	next := fmt.Sprintf("Fix the blocking violation%s above, or tell the user why you cannot; then, before finishing, take what you fixed out of the list with %sset_enforcement. Cairn asks once for this set of violations",
		workflow.Plural(len(vs)), ToolPrefix)
	reason, _ := report.Render(report.Input{Tier: "Full", WorkflowID: r.WorkflowID, Type: r.Type, Context: r.Context,
		Phase: r.State, PhaseStatus: string(r.PhaseStatus), Blocking: blocking, Next: next, Nonce: report.NewNonce(),
		Tool: ToolPrefix + "resume_check"}) // where the violations past the first five are
	return reason
}
