package remotesync

// SetStepHook lets the tests act at the steps of a lost race that run no git.
func SetStepHook(f func(step string)) { stepHook = f }

// SyncEventOf is syncEvent, the journal's event for a revision a sync took.
var SyncEventOf = syncEvent
