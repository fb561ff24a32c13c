package store

import "github.com/cairn-dev/cairn/internal/durable"

// WithProjectFS makes the store rename seed files through fsys (anchored at the project root).
func WithProjectFS(fsys durable.FS) Option { return func(o *options) { o.projectFS = fsys } }

// Archive is ArchiveIf for whichever workflow is active.
func (s *Store) Archive(reason string) (ArchiveInfo, error) { return s.ArchiveIf(reason, "") }

// WithJournalCompaction seals the active journal's older lines into a segment once it holds
// more than size bytes before a full line (DefaultCompactAt; see compactJournal).
func WithJournalCompaction(size int64) Option {
	return func(o *options) { o.compactAt = max(size, 1) }
}

// ChainFactor and LineCost bound a journal's chains of deltas (see journalRecord).
const ChainFactor, ChainRecords, LineCost = maxChainFactor, maxChainRecords, lineCost

// ErrChain is what a reader of a journal whose chain of changes breaks returns.
var ErrChain = errChain

// SaveCheckpoint is SaveCheckpointChanged without what changed.
func (s *Store) SaveCheckpoint(name string, doc []byte) error {
	_, _, err := s.SaveCheckpointChanged(name, doc)
	return err
}

// SetMaxLine lowers the largest journal AdoptLine writes to n bytes for the rest of test t.
func SetMaxLine(t interface{ Cleanup(func()) }, n int) {
	old := maxLine
	maxLine = n
	t.Cleanup(func() { maxLine = old })
}

// SetMaxIndex lowers the most of archive/index.jsonl read whole to n bytes for the rest of
// test t.
func SetMaxIndex(t interface{ Cleanup(func()) }, n int) {
	old := maxIndex
	maxIndex = n
	t.Cleanup(func() { maxIndex = old })
}

// LineOf is the Line of recs.
func LineOf(recs []LineRecord) Line {
	return func(yield func(LineRecord) error) error {
		for _, r := range recs {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}
