package store

// WithJournalCompaction seals the active journal's older lines into a segment once it holds
// more than size bytes before a full line (DefaultCompactAt; see compactJournal).
func WithJournalCompaction(size int64) Option {
	return func(o *options) { o.compactAt = max(size, 1) }
}

// ErrChain is what a reader of a journal whose chain of changes breaks returns.
var ErrChain = errChain
