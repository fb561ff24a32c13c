package engine

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// ownerEnded reports whether the session recorded as r's owner has certainly ended even though
// its heartbeat is recent, so that it must not be reported as another live session: the owner
// ran in this same Claude Code client under another session id (a client runs one session at a
// time, so /clear or /resume replaced it), or the owner's client process has exited (a new
// session started right after the last one closed, or this session resumed in a new client
// after its old one exited). Without a pid to go on it answers false and the heartbeat alone
// decides, as before, unless the session records say the owner's session has ended
// (sessionClient: this client ran it before the one it is in now, or its client has exited);
// a client still running that ran it goes on with its work, as one of its pid does. The
// caller's own session in its own client is no other owner at all.
func (e *Engine) ownerEnded(r *workflow.Record) bool {
	if r == nil || r.Owner == nil {
		return false
	}
	o := r.Owner
	if o.PID <= 0 && o.SessionID != "" && o.SessionID != e.cfg.SessionID && !e.onOtherHost(o) {
		// A client that ran it and runs still goes on with its work: ended for that client's
		// engines, as an owner of its pid is, and live by its heartbeat for the others'.
		pid, ended := e.sessionClient(o.SessionID)
		return ended && (pid == 0 || pid == e.cfg.PID)
	}
	if o.SessionID == "" || o.PID <= 0 || e.onOtherHost(o) || (o.SessionID == e.cfg.SessionID && (e.cfg.PID <= 0 || o.PID == e.cfg.PID)) {
		return false
	}
	// A client exited, but its session resumed in another that runs (`claude --resume` after
	// a kill -9) is live there before its first change records that client's pid. So is one
	// this client /cleared, resumed in another client since (otherClientIn).
	return o.PID == e.cfg.PID && !e.otherClientIn(o.SessionID) || e.clientExited(o) && !e.inOtherRunningClient(o.SessionID) ||
		e.resumedHere(o)
}

// otherClientIn reports whether a running Claude Code client other than this engine's is in
// session id now: its session record names id as its session, not one it ran before.
func (e *Engine) otherClientIn(id string) bool {
	pid, ended := e.sessionClient(id)
	return pid > 0 && !ended && pid != e.cfg.PID
}

// resumedHere reports whether o's session, last in another client of this machine that runs
// another session now (its record says: /clear or /resume there), is this engine's session
// now (`claude --resume` here): o is then this session, continued in this client, which keeps
// its heartbeat from here on.
func (e *Engine) resumedHere(o *workflow.Owner) bool {
	if o.SessionID == "" || o.SessionID != e.cfg.SessionID || o.PID <= 0 || e.cfg.PID <= 0 || o.PID == e.cfg.PID || e.onOtherHost(o) {
		return false
	}
	s, ok := e.CurrentSession(o.PID)
	return ok && s.SessionID != o.SessionID && (o.ClientStart == 0 || s.ClientStart == 0 || o.ClientStart == s.ClientStart)
}

// inOtherRunningClient reports whether a running Claude Code client other than this engine's is in
// session id now, or ran it before the session it is in now (/clear, /resume) and goes on with
// its work, as its session record says (sessionClient); otherClientIn is the first alone.
func (e *Engine) inOtherRunningClient(id string) bool {
	pid, _ := e.sessionClient(id)
	return pid > 0 && pid != e.cfg.PID
}

// otherClientsSessions returns the sessions other Claude Code clients on this machine run, as
// their session records say; a record of an exited client is not read.
func (e *Engine) otherClientsSessions() []string {
	names, err := e.st.Sessions()
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == e.cfg.PID || !processAlive(pid) {
			continue
		}
		if s, ok := e.CurrentSession(pid); ok && s.SessionID != "" && s.SessionID != e.cfg.SessionID && clientRunning(pid, s.ClientStart) {
			out = append(out, s.SessionID)
		}
	}
	return out
}

// clientExited reports whether o's Claude Code client has exited, as clientRunning tells it from
// the start o records, else from its pid's session record; an unknown pid (0) answers false.
func (e *Engine) clientExited(o *workflow.Owner) bool {
	if o.PID <= 0 {
		return false
	}
	start := o.ClientStart
	if start == 0 {
		s, _ := e.CurrentSession(o.PID)
		start = s.ClientStart
	}
	return !clientRunning(o.PID, start)
}

// clientRunning reports whether the Claude Code client of pid that started at start (0: not
// known) still runs: a process of that pid runs, and started then where the platform tells
// (store.PIDTaken). Another start is another process that took the pid after the client exited,
// which would otherwise keep the client's session looking live for as long as it runs.
func clientRunning(pid int, start uint64) bool {
	if !processAlive(pid) {
		return false
	}
	return !store.PIDTaken(pid, start)
}

// OwnerExited reports whether r's owner ran in a Claude Code client of this machine that has
// exited: its pid has a session record here (a SessionStart hook on this machine wrote it;
// another machine's pid, in a workflow shared through a remote, has none) and no process of
// that pid runs.
func (e *Engine) OwnerExited(r *workflow.Record) bool {
	if r == nil || r.Owner == nil || r.Owner.PID <= 0 {
		return false
	}
	_, here := e.CurrentSession(r.Owner.PID)
	return here && e.clientExited(r.Owner)
}

// inOtherLiveClient reports whether o runs in another Claude Code client than this engine's
// that is still alive (the same session continued in a second terminal, say), or on another
// machine sharing the workflow, whose client's life only its heartbeat tells. An owner
// recorded without a pid (the agent's cairn in its Bash tool without a live CLAUDE_PID, or an
// older Cairn's) runs where another running client's session record names its session, as its
// session now or one it ran before /clear (sessionClient); so does one of this engine's own
// session, which is not known to be this client's. Unknown pids answer false.
func (e *Engine) inOtherLiveClient(o *workflow.Owner) bool {
	if o.PID <= 0 && o.SessionID != "" && e.cfg.PID > 0 && o.Host == "" {
		return e.inOtherRunningClient(o.SessionID)
	}
	return e.onOtherHost(o) || o.PID > 0 && e.cfg.PID > 0 && o.PID != e.cfg.PID &&
		(!e.clientExited(o) && !e.resumedHere(o) || o.SessionID != "" && e.inOtherRunningClient(o.SessionID))
}

// inThisClient reports whether o ran in this engine's Claude Code client: its pid, on this
// machine, and its start where both are known (another start is a client that had the pid
// before this one).
func (e *Engine) inThisClient(o *workflow.Owner) bool {
	return e.cfg.PID > 0 && o.PID == e.cfg.PID && !e.onOtherHost(o) &&
		(o.ClientStart == 0 || e.clientStart() == 0 || o.ClientStart == e.clientStart())
}

// ranInThisClient reports whether o's session ran in this engine's Claude Code client: o has
// its pid (inThisClient), or o, recorded without a pid on this machine, is of a session this
// client's record names (sessionClient: the one it runs, or one it ran before /clear). Its
// heartbeat then stamps the pid.
func (e *Engine) ranInThisClient(o *workflow.Owner) bool {
	if e.inThisClient(o) {
		return true
	}
	if o.PID > 0 || o.SessionID == "" || o.Host != "" || e.cfg.PID <= 0 {
		return false
	}
	pid, _ := e.sessionClient(o.SessionID)
	return pid == e.cfg.PID
}

// onOtherHost reports whether o was recorded on another machine than this engine's (through
// a remote, cairn remote enable), where its pid names no process of its session's.
func (e *Engine) onOtherHost(o *workflow.Owner) bool {
	if o.Host == "" || e.cfg.Host == "" && o.Host == hostName() {
		// The name recorded passed the scan when it was: the same one here needs none.
		return false
	}
	h := e.host()
	return h != "" && o.Host != h
}

// host is this machine's name as Config.Host gives it, else thisHost. It is asked for only
// where a host is recorded, or an owner's differs from hostName: thisHost's scan is the first
// of a process's secret scans, which a Stop with nothing to write never makes (it cost that
// hook 0.3 ms), a second terminal's beside the live owner included.
func (e *Engine) host() string { return cmp.Or(e.cfg.Host, thisHost()) }

// thisHost is this machine's name as an owner records it: one line, "" when unknown or of a
// secret's shape (every stored document refuses one).
var thisHost = sync.OnceValue(func() string {
	if h := hostName(); secrets.ScanString(h) == nil {
		return h
	}
	return ""
})

// hostName is this machine's name as thisHost records it, before its scan for a secret's shape.
var hostName = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return textsafe.Line(h, 64)
})

// ownerClientRuns reports whether o's session is, now, the one a Claude Code client of this
// machine other than this engine's is in, and that client runs: the session record of o's pid
// (the SessionStart hook's, which /clear and /resume replace) names o's session, of the same
// client start where both are known; for an owner recorded without a pid, a running client's
// record names it as its session (sessionClient), as it does for one whose client recorded has
// left the session since (`claude --resume` elsewhere). Such an owner is live however old its
// heartbeat: the Stop hook keeps that at turn ends, and one long turn (a 15-minute build) ends
// none. Without a record to go on (a pid not known, another machine's owner) it answers false,
// and the heartbeat alone decides.
func (e *Engine) ownerClientRuns(o *workflow.Owner) bool {
	if o == nil || o.SessionID == "" || e.onOtherHost(o) {
		return false
	}
	if o.PID > 0 && o.PID != e.cfg.PID { // this client's own pid: its session, or one it ran before /clear
		s, ok := e.CurrentSession(o.PID)
		if ok && s.SessionID == o.SessionID && (o.ClientStart == 0 || s.ClientStart == 0 || o.ClientStart == s.ClientStart) &&
			clientRunning(o.PID, cmp.Or(o.ClientStart, s.ClientStart)) {
			return true
		}
	}
	// The session resumed in another client (after /clear or a crash in the one recorded),
	// whose first turn there has not ended yet to stamp its pid.
	return e.otherClientIn(o.SessionID)
}

// liveWindow is how recent r's owner's heartbeat must be, at now, for the owner to count as
// live: workflow.DefaultLiveWindow, or its heartbeat's age when its client runs in its session
// still (ownerClientRuns), which is looked for only past the default window.
func (e *Engine) liveWindow(r *workflow.Record, now time.Time) time.Duration {
	if r == nil || r.Owner == nil || r.Owner.Heartbeat.IsZero() {
		return workflow.DefaultLiveWindow
	}
	if age := now.Sub(r.Owner.Heartbeat); age > workflow.DefaultLiveWindow && e.ownerClientRuns(r.Owner) {
		return age
	}
	return workflow.DefaultLiveWindow
}

// besideLiveOwner reports whether this engine's session works beside r's owner: a Claude Code
// client still running (inOtherLiveClient) that changed r within the live window (liveWindow). Such a
// session (a fork, a second terminal) keeps to itself what would make the workflow its own
// (its task list) or take the owner's turn (the Stop hook's one ask about a set of blocking
// violations).
func (e *Engine) besideLiveOwner(r *workflow.Record) bool {
	// The heartbeat first: inOtherLiveClient may read the session records.
	return r != nil && r.Owner != nil && workflow.OwnerLive(r, e.holder(), e.now(), e.liveWindow(r, e.now())) &&
		e.inOtherLiveClient(r.Owner)
}

// dropEndedOwner removes the owned-by-a-live-session finding when the owner has ended.
func (e *Engine) dropEndedOwner(r *workflow.Record, fs []workflow.Finding) []workflow.Finding {
	if !e.ownerEnded(r) {
		return fs
	}
	return slices.DeleteFunc(fs, func(f workflow.Finding) bool { return f.Code == workflow.FindingOwnedElsewhere })
}

// hideEndedOwner hides the heartbeat of an ended owner from the workflow domain, which judges
// liveness by the heartbeat alone, so a change does not warn about that session. The returned
// function puts the heartbeat back on the changed record if the change kept that owner (it
// replaces the owner whenever the caller is a session or a client).
func (e *Engine) hideEndedOwner(r *workflow.Record) (restore func(*workflow.Record)) {
	if !e.ownerEnded(r) {
		return func(*workflow.Record) {}
	}
	sid, hb := r.Owner.SessionID, r.Owner.Heartbeat
	r.Owner.Heartbeat = time.Time{}
	return func(n *workflow.Record) {
		if n != nil && n.Owner != nil && n.Owner.SessionID == sid && n.Owner.Heartbeat.IsZero() {
			n.Owner.Heartbeat = hb
		}
	}
}

// liveOwnerWarning is the warning that another live session owns r, for a call that leaves r
// as it is (and so does not go through the domain's change, which warns of it): empty when
// the owner is this session or has ended.
func (e *Engine) liveOwnerWarning(r *workflow.Record) string {
	if e.ownerEnded(r) {
		return ""
	}
	return workflow.OwnershipWarning(r, e.actor(), e.now(), e.liveWindow(r, e.now()))
}

// archivedUnderLiveOwner is the warning for a call that archived r while another live session
// owned it (a start with replace, expire_ttl), which its caller is to pass on: none otherwise.
func (e *Engine) archivedUnderLiveOwner(r *workflow.Record) []string {
	if e.liveOwnerWarning(r) == "" {
		return nil
	}
	return []string{fmt.Sprintf("Another live session was working in %s (it last changed it %s); tell the user it was archived, as that session may still be working in it.", r.WorkflowID, workflow.Ago(e.now().Sub(r.Owner.Heartbeat)))}
}

// ClientPID is the Claude Code client a CLAUDE_PID value names, which Claude Code 2.1.330 gives
// its hooks and the agent's Bash tool alike (the client's own pid, an ancestor of the shell):
// the pid when it is one of a running process that is this process's ancestor, else 0 (a
// person's terminal has none; a CLAUDE_PID left from an exited client names no client, nor
// does one a terminal kept from a tmux or an editor the Bash tool started: the client it
// names runs another session, or one not of this terminal).
func ClientPID(v string) int {
	if pid, err := strconv.Atoi(v); err == nil && pid > 0 && processAlive(pid) && isAncestor(pid) {
		return pid
	}
	return 0
}

// maxAncestors bounds the walk up isAncestor makes: a shell in Claude Code's Bash tool is a
// few processes below it.
const maxAncestors = 64
