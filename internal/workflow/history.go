package workflow

// MaxHistory bounds the phase history a record carries: the newest entries stay in the
// snapshot, so it, and every write of it, stays the same size however long the workflow runs.
// The journal keeps every change, so the full history is read from there (`cairn show`,
// `cairn history`).
const MaxHistory = 50

// TrimHistory drops the oldest history entries beyond MaxHistory.
func TrimHistory(r *Record) {
	if r != nil && len(r.History) > MaxHistory {
		r.History = append([]HistoryEntry(nil), r.History[len(r.History)-MaxHistory:]...)
	}
}
