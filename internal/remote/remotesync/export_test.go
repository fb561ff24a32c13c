package remotesync

// SetStepHook lets the tests act at the steps of a lost race that run no git.
func SetStepHook(f func(step string)) { stepHook = f }

// SetSpoolMem sets how many bytes of records a spool keeps in memory, for tests whose records
// are smaller than a long workflow's; the tests that set it are not parallel.
func SetSpoolMem(n int) { spoolMem = n }

// SyncEventOf is syncEvent, the journal's event for a revision a sync took.
var SyncEventOf = syncEvent
