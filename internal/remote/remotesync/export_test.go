package remotesync

// SetStepHook lets the tests act at the steps of a lost race that run no git.
func SetStepHook(f func(step string)) { stepHook = f }

// SyncEventOf is syncEvent, the journal's event for a revision a sync took.
var SyncEventOf = syncEvent

// ReadFrom is readFrom, both lines of the active workflow as a sync reads them.
var ReadFrom = readFrom
