package workflow

import (
	"fmt"
	"time"
)

// DefaultLiveWindow is how recent an owner's heartbeat must be for its session to count as
// live: the Stop hook refreshes it after every turn, so ten minutes of silence means the
// session is most likely gone.
const DefaultLiveWindow = 10 * time.Minute

// heldBy reports whether o records by: the same session and, when both pids are known, the
// same Claude Code client. `claude --continue` in a second terminal runs the session of a live
// client in another one, which is another holder as much as another session is.
func (o *Owner) heldBy(by Actor) bool {
	return o.SessionID == by.SessionID && (o.PID <= 0 || by.PID <= 0 || o.PID == by.PID)
}

// OwnerLive reports whether r is owned by a session other than by's, or by by's session in
// another client, whose heartbeat is within live of now (a heartbeat up to maxAhead in the
// future counts as live) or whose client the caller knows runs in it (Owner.ClientRuns).
func OwnerLive(r *Record, by Actor, now time.Time, live time.Duration) bool {
	if r == nil || r.Owner == nil || r.Owner.SessionID == "" || r.Owner.heldBy(by) {
		return false
	}
	age := now.Sub(r.Owner.Heartbeat)
	return !r.Owner.Heartbeat.IsZero() && (r.Owner.ClientRuns || age <= live && age >= -maxAhead)
}

// maxAhead is how far in the future a heartbeat is still proof of life: a clock off by its
// time zone (local time taken for UTC) is up to 14 hours ahead, the largest offset (UTC+14).
// Further ahead it is no clock a live owner keeps, and would keep an owner that never comes
// back live for as long (for ever, in a record saying year 9999).
const maxAhead = 14 * time.Hour

// OwnershipWarning is the warning for session by touching a workflow that another live
// session owns; empty when there is nothing to warn about.
func OwnershipWarning(r *Record, by Actor, now time.Time, live time.Duration) string {
	if !OwnerLive(r, by, now, live) {
		return ""
	}
	// No session id or pid: the reader can do nothing with them.
	return fmt.Sprintf("Another live session last changed this workflow %s; "+ownedAskAs+"changes from both may cross.", Ago(now.Sub(r.Owner.Heartbeat)))
}

// ownedAskAs is OwnedAsk as the ownership warning says it, before why: a report whose step
// asks it already leaves it out.
const ownedAskAs = OwnedAsk + ", as "

// OwnedAsk is the ownership warning's step for the agent, which cannot reach the other
// session: the user can. A view for a person gives the person's own step in its place.
const OwnedAsk = "ask the user which session goes on with it"

// Heartbeat refreshes the owner's heartbeat when by is the owning session (or there is no
// owner yet). It never takes a workflow from another session: that happens only when the
// session changes it. updated_at is not touched, so a heartbeat does not postpone expiry.
func Heartbeat(r *Record, by Actor, now time.Time) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	if by.SessionID == "" || (r.Owner != nil && r.Owner.SessionID != "" && r.Owner.SessionID != by.SessionID) {
		return unchanged(r), nil
	}
	n := r.Clone()
	// To the second, all a heartbeat refreshed every few minutes needs: its time then takes
	// no more room than the one before, and a record at its 1 MiB cap still takes it.
	setOwner(n, by, now.UTC().Truncate(time.Second))
	return Result{Record: n, Changed: true, Event: EventHeartbeat, From: r.State, To: r.State}, nil
}

// ConflictDecision says which of two copies of one workflow to keep.
type ConflictDecision struct {
	// KeepIndex is 0 when the first copy given wins, 1 when the second; the other is archived.
	KeepIndex int
	// Tie is true when neither copy is newer (same updated_at and revision): the first was
	// kept, and the user should be asked to confirm.
	Tie    bool
	Reason string
}

// ResolveConflict decides between two copies of one workflow (two sources found on resume):
// the newer updated_at wins; on equal times the higher revision; the loser is archived with a
// "conflict-" prefix, never deleted.
func ResolveConflict(a, b *Record) ConflictDecision {
	ta, tb := a.LastActivity(), b.LastActivity()
	switch {
	case ta.After(tb):
		return ConflictDecision{Reason: fmt.Sprintf("kept the copy updated at %s, newer than %s", fmtTime(ta), fmtTime(tb))}
	case tb.After(ta):
		return ConflictDecision{KeepIndex: 1, Reason: fmt.Sprintf("kept the copy updated at %s, newer than %s", fmtTime(tb), fmtTime(ta))}
	case a.Revision > b.Revision:
		return ConflictDecision{Reason: fmt.Sprintf("both updated at %s; kept revision %d over %d", fmtTime(ta), a.Revision, b.Revision)}
	case b.Revision > a.Revision:
		return ConflictDecision{KeepIndex: 1, Reason: fmt.Sprintf("both updated at %s; kept revision %d over %d", fmtTime(ta), b.Revision, a.Revision)}
	}
	return ConflictDecision{Tie: true, Reason: fmt.Sprintf("both copies updated at %s with revision %d; kept the first, archived the other: confirm with the user which to keep", fmtTime(ta), a.Revision)}
}

// Ago words how long ago a time d before now was ("just now" under a minute, "5m ago"), or
// that it is InTheFuture.
func Ago(d time.Duration) string {
	switch {
	case d < 0:
		return InTheFuture
	case d < time.Minute:
		return "just now"
	}
	return Age(d) + " ago"
}

// InTheFuture words the age of a time after now, where an age in words (Age) would be wrong.
const InTheFuture = "in the future (clock skew?)"

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Age words a duration for people in its two largest units, the second left out when it is
// zero: "45s", "12m", "2h 5m", "3h", "2d 4h", "8d" (days from 48 hours on). A negative
// duration counts as 0. It is the one age formatter: the report, the CLI and the messages
// here all use it.
func Age(d time.Duration) string {
	d = max(d, 0)
	two := func(a int, au string, b int, bu string) string {
		if b == 0 {
			return fmt.Sprintf("%d%s", a, au)
		}
		return fmt.Sprintf("%d%s %d%s", a, au, b, bu)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return two(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	}
	return two(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h")
}
