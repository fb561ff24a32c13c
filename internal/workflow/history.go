package workflow

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
