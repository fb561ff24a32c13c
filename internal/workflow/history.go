package workflow

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// MaxHistory bounds the phase history a record carries, and its approvals (an entry each time
// an approval phase is entered): the newest entries stay in the snapshot, so it, and every
// write of it, stays the same size however long the workflow runs, however often it goes
// round through an approval phase. The journal keeps every change, so the full history is
// read from there (`cairn show`, `cairn history`).
const MaxHistory = 50

// TrimHistory drops the oldest history entries, and the oldest approvals, beyond MaxHistory.
// It never lets a move out of an approval phase through: a yes is added only while the
// workflow is in its phase, with nothing after it, and a phase left with no entry waits for
// a yes (NeedsApproval).
func TrimHistory(r *Record) {
	if r != nil && len(r.History) > MaxHistory {
		r.History = append([]HistoryEntry(nil), r.History[len(r.History)-MaxHistory:]...)
	}
	if r != nil && len(r.Approvals) > MaxHistory {
		r.Approvals = append([]Approval(nil), r.Approvals[len(r.Approvals)-MaxHistory:]...)
	}
}

// EndingRoom is what a record keeps free, of the 1 MiB it may hold, for its ending: a change
// that keeps the workflow active may not grow the record into it (MayTakeEndingRoom says which
// may). Ending it adds its status, an outcome and a note of up to 500 characters each (6 bytes
// each when escaped), a yes with its own note, and a history entry: without the room, a record
// filled to the cap could not be completed, archived, replaced or expired.
const EndingRoom = 16 << 10

// MayTakeEndingRoom reports whether a change that made r, by event ev, may take the room kept
// for the ending: the ending itself (r no longer active), and the bookkeeping a turn's end and
// a session's start make on their own (a heartbeat, running tasks recovered), which the
// agent cannot refuse or shorten.
func MayTakeEndingRoom(r *Record, ev Event) bool {
	return r.Status != StatusActive || ev == EventHeartbeat || ev == EventRecover
}

// FitEnding makes r, a record being ended whose encoding takes size bytes, fit in limit by
// leaving out what no operation shortens and the journal keeps (its line before the ending
// holds the record whole): first its oldest history entries, but the last (the ending's own,
// which a replace retried after a crash reads); then what FitKept leaves out; then the
// checkpoints kept with its phases that was, the record before the ending, kept too (not one
// the ending move carries, which no line before it holds). Records an older Cairn let fill to
// the cap, before they kept room for their ending (EndingRoom), end this way. What an
// operation shortens (variables, tasks, violations, the move's checkpoint) is not left out:
// the refusal names that step. It returns how many entries, outputs, artifacts and
// checkpoints it left out, which the caller says.
func FitEnding(r, was *Record, size, limit int) (moves, outputs, artifacts, checkpoints int) {
	for ; size > limit && moves < len(r.History)-1; moves++ {
		b, _ := json.Marshal(r.History[moves])
		size -= len(b) + 1 // and its comma
	}
	if moves > 0 {
		r.History = append([]HistoryEntry(nil), r.History[moves:]...)
	}
	outputs, artifacts, size = FitKept(r, size, limit)
	for _, name := range slices.Sorted(maps.Keys(r.Phases)) {
		if p := r.Phases[name]; size > limit && p.Metadata["checkpoint"] != nil && was != nil &&
			bytes.Equal(p.Metadata["checkpoint"], was.Phases[name].Metadata["checkpoint"]) {
			was, _ := json.Marshal(p)
			delete(p.Metadata, "checkpoint") // r's own map: r is the ending's copy
			now, _ := json.Marshal(p)
			size -= len(was) - len(now)
			checkpoints++
		}
	}
	return moves, outputs, artifacts, checkpoints
}

// FitKept is FitEnding for a record that stays active, taking a heartbeat or a recovery
// (MayTakeEndingRoom) that an older Cairn's record at the cap has no room for: its history
// stays whole, as Check reads it to judge the path taken. It leaves out the outputs its phases
// keep that its artifacts list too (a move records each in both), whose paths stay in the
// artifacts, then its oldest artifacts. It returns how many outputs and artifacts it left out
// and the size it left (which, past the limit, nothing it leaves out brings under).
func FitKept(r *Record, size, limit int) (outputs, artifacts, left int) {
	for _, name := range slices.Sorted(maps.Keys(r.Phases)) {
		p := r.Phases[name]
		if size <= limit || len(p.Outputs) == 0 {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(p.Outputs), func(o string) bool { return slices.Contains(r.Artifacts, o) })
		if len(kept) == len(p.Outputs) {
			continue
		}
		was, _ := json.Marshal(p)
		outputs += len(p.Outputs) - len(kept)
		p.Outputs = kept
		now, _ := json.Marshal(p)
		size -= len(was) - len(now)
		r.Phases[name] = p
	}
	for ; size > limit && artifacts < len(r.Artifacts); artifacts++ {
		b, _ := json.Marshal(r.Artifacts[artifacts])
		size -= len(b) + 1 // and its comma
	}
	if artifacts > 0 {
		r.Artifacts = append([]string(nil), r.Artifacts[artifacts:]...)
	}
	return outputs, artifacts, size
}

// FitHeartbeat is FitKept for a heartbeat whose owner was was before it (nil: none). The same
// client's heartbeat first keeps its owner as it was, refreshing only its time (heartbeatOnly),
// which leaves out nothing and almost always fits. Another client's would lose its pid there,
// which tells a second client of the session from this one (Owner.heldBy): what FitKept leaves
// out goes first, when that is enough; when it is not, the pid goes and FitKept leaves out only
// what is still needed, not all it can for nothing.
func FitHeartbeat(r *Record, was *Owner, size, limit int) (outputs, artifacts, left int) {
	if size <= limit {
		return 0, 0, size
	}
	if !sameClient(was, r.Owner) {
		c := r.Clone()
		if outputs, artifacts, left = FitKept(c, size, limit); left <= limit {
			*r = *c
			return outputs, artifacts, left
		}
	}
	return FitKept(r, heartbeatOnly(r, was, size), limit)
}

// sameClient reports whether n, a heartbeat's owner, is was's client: the same session and
// pid, and no host or client start that says otherwise (an older Cairn wrote neither).
func sameClient(was, n *Owner) bool {
	return was != nil && n != nil && was.SessionID == n.SessionID && was.PID == n.PID &&
		(was.Host == "" || was.Host == n.Host) && (was.ClientStart == 0 || was.ClientStart == n.ClientStart)
}

// heartbeatOnly makes the heartbeat's owner of r, a record of size bytes, the owner as it was
// (was), its pid, host and client start kept and only its heartbeat time refreshed, so it
// takes no more room; it returns the record's size then. Refused, the heartbeat would go stale
// every turn, and another session could take this live session's running tasks as abandoned.
// A heartbeat from another client of the session leaves out the pid (unknown, looked for in
// the session records), which a larger one may not fit.
func heartbeatOnly(r *Record, was *Owner, size int) int {
	if r.Owner == nil || was == nil || was.SessionID != r.Owner.SessionID {
		return size
	}
	o := *was
	o.Heartbeat, o.ClientRuns = r.Owner.Heartbeat, false
	if was.PID != r.Owner.PID {
		o.PID, o.Host, o.ClientStart = 0, "", 0
	}
	before, _ := json.Marshal(r.Owner)
	after, _ := json.Marshal(&o)
	r.Owner = &o
	return size - len(before) + len(after)
}
