package engine

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// endingDoc records the last workflow that ended (completed, expired, archived unfinished) and
// whether a session has been told. The next session's report says once, in one line, what
// ended and that there is nothing to resume; later ones say nothing.
const endingDoc = "last-ending"

type ending struct {
	WorkflowID string    `json:"workflow_id"`
	Line       string    `json:"line"` // the L2 line of the ending
	At         time.Time `json:"at"`
	Told       bool      `json:"told,omitempty"`
	// Extra keeps the members a newer Cairn wrote, so that marking the ending told loses nothing.
	Extra map[string]json.RawMessage `json:"-"`
}

type endingJSON ending

func (end ending) MarshalJSON() ([]byte, error) {
	return workflow.EncodeKnown(endingJSON(end), end.Extra)
}

func (end *ending) UnmarshalJSON(b []byte) error {
	return workflow.DecodeKnown(b, (*endingJSON)(end), &end.Extra)
}

// noteEnding records that workflow id ended with the L2 line. Failing to record it costs only
// the one-line notice (the record left names an earlier ending, which archivedLast tells
// apart), so it is not an error.
func (e *Engine) noteEnding(id, line string) {
	if id == "" || line == "" {
		return
	}
	b, err := json.Marshal(ending{WorkflowID: id, Line: line, At: e.now().UTC()})
	if err == nil {
		_ = e.st.Write(endingDoc, b)
	}
}

// lastEnding returns the last ending on record, if any.
func (e *Engine) lastEnding() (ending, bool) {
	var end ending
	data, err := e.st.ReadOwn(endingDoc)
	if err != nil || json.Unmarshal(data, &end) != nil || end.Line == "" {
		return ending{}, false
	}
	return end, true
}

// archivedLast reports whether workflow id is the one archived last, as the workflow of the
// last ending on record is: every ending archives its workflow first. When a later ending
// could not be recorded (noteEnding), the record names the one before it. An archive index
// that cannot be read says nothing against the record.
func (e *Engine) archivedLast(id string) bool {
	archives, _, err := e.st.RecentArchives(1)
	return err != nil || len(archives) == 0 || archives[0].WorkflowID == id
}

// archivedPosition returns the newest archive and its record when it holds the workflow
// memory's last line, line (a position, not an ending, written at at), names: an archive whose
// last steps a full disk cut short (its index line, the memory line, the record of the
// ending) left memory's position line, and the workflow is not missing but archived. A line
// written after the archive was made is another workflow's, of the same type and context.
func (e *Engine) archivedPosition(line string, at time.Time) (store.ArchiveInfo, *workflow.Record, bool) {
	var newest []store.ArchiveInfo
	if un, err := e.st.UnlistedArchives(); err == nil && len(un) > 0 {
		newest = append(newest, un[0])
	}
	if recent, _, err := e.st.RecentArchives(1); err == nil {
		newest = append(newest, recent...)
	}
	for _, a := range newest {
		data, err := e.st.ReadArchiveRecord(a.Dir)
		if err != nil {
			continue
		}
		if r, err := store.ParseRecord(data); err == nil && workflow.IsPositionOf(line, r) && !at.After(a.At) {
			return a, r, true
		}
	}
	return store.ArchiveInfo{}, nil, false
}

// endingRev is the revision the ending of r, archived for reason, gives its line: an expiry's
// archive holds the expiry's commit; any other archive holds the record as it stood before it.
func endingRev(r *workflow.Record, reason string) int64 {
	if reason == "expired" {
		return r.Revision
	}
	return r.Revision + 1
}

// markEndingTold records that a session was told of the ending. It returns the notice of a
// damaged document set aside, or nil.
func (e *Engine) markEndingTold(id string) *store.Notice {
	_, aside, _ := e.st.UpdateOwn(endingDoc, func(cur []byte) ([]byte, error) {
		var end ending
		if cur == nil || json.Unmarshal(cur, &end) != nil || end.WorkflowID != id || end.Told {
			return cur, nil
		}
		end.Told = true
		return json.Marshal(end)
	})
	return aside
}

// endingLine is the L2 line for a workflow leaving the active slot for reason.
func endingLine(r *workflow.Record, reason string) string {
	switch {
	case r.Status == workflow.StatusCompleted:
		return workflow.CompletionLine(r)
	case r.Status == workflow.StatusExpired || reason == "expired":
		return workflow.ExpiryLine(r)
	}
	return workflow.AbandonLine(r)
}

// ended writes the L2 line of workflow id, which left the active slot at revision rev, and
// records the ending for the next session's report. It returns writeL2's warning.
func (e *Engine) ended(id string, rev int64, line string) (warning string) {
	warning = e.writeL2(id, rev, line)
	e.noteEnding(id, line)
	return warning
}

// completedAlready answers a completion retried after it landed (complete_workflow, a move
// into a terminal phase): when err says there is no active workflow to change, and the
// workflow that left the active slot last (or, when a crash or a failed archive cut the
// completion short, is still there) was completed as same says, it is that workflow, and
// inSlot says it is still in the active slot; nil otherwise. "No active workflow" would send
// the model to start over the work it just finished.
func (e *Engine) completedAlready(err error, same func(r *workflow.Record) bool) (r *workflow.Record, inSlot bool) {
	_, ended := errors.AsType[*workflow.NotActiveError](err)
	if ce, ok := errors.AsType[*workflow.ConflictError](err); ok {
		ended = ce.FoundStatus == workflow.StatusCompleted // a move with from, onto a completed record
	}
	if !ended && !errors.Is(err, ErrNoActiveWorkflow) {
		return nil, false
	}
	r, _, rerr := e.active()
	if rerr != nil {
		return nil, false
	}
	inSlot = r != nil
	if r == nil {
		// Archived, as a completion is: the newest archive.
		archives, _, err := e.st.RecentArchives(1)
		if err != nil || len(archives) == 0 || archives[0].Reason != "completed" {
			return nil, false
		}
		data, err := e.st.ReadArchiveRecord(archives[0].Dir)
		if err != nil {
			return nil, false
		}
		if r, err = store.ParseRecord(data); err != nil {
			return nil, false
		}
	}
	if r.Status != workflow.StatusCompleted || !same(r) {
		return nil, false
	}
	return r, inSlot
}

// completingMove returns the move that completed r on entering a terminal phase, if one did
// (not complete_workflow after it).
func completingMove(r *workflow.Record) (workflow.HistoryEntry, bool) {
	n := len(r.History)
	if n == 0 || r.State != r.History[n-1].To || !r.History[n-1].At.Equal(r.CompletedAt) {
		return workflow.HistoryEntry{}, false
	}
	return r.History[n-1], true
}

// finishCompleted answers a completion retried after it landed, res saying so: when the
// workflow r is still in the active slot (inSlot: a crash, or a failed archive, came between
// the completion and its archive), the retry archives it and records its ending, as the
// completion would have done; otherwise nothing changed. Leaving it for the next session start
// to archive would leave the completed workflow named in the status line and by cairn status
// until then.
func (e *Engine) finishCompleted(res *Result, r *workflow.Record, inSlot bool) {
	res.WorkflowID, res.Revision = r.WorkflowID, r.Revision
	if !inSlot {
		res.Message += "; nothing changed"
		return
	}
	info, err := e.st.ArchiveIf("completed", r.WorkflowID)
	switch {
	case errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound):
		res.Message += "; another process has since archived it; nothing changed"
	case err != nil:
		res.Message += "; nothing changed"
		res.Warnings = append(res.Warnings, notArchived(err))
	default:
		res.Changed = true
		res.Message += "; the earlier call had not archived it, so it is archived now"
		res.retention(info)
		res.Warnings = warned(res.Warnings, e.ended(r.WorkflowID, r.Revision, workflow.CompletionLine(r)))
	}
}

// endingLeft finishes, for an archive or expiry retried after it landed, what a crash between
// the archive and its ending left undone, and says in res what the retry did: when the last
// ending on record is not that of the workflow archived in a, it writes the ending's L2 line
// and records the ending, as the operation would have; otherwise nothing changed. Left
// unwritten, memory's last line goes on calling the archived workflow active, and the next
// session is told to resume it from memory.
func (e *Engine) endingLeft(res *Result, a store.ArchiveInfo) {
	if end, ok := e.lastEnding(); !ok || end.WorkflowID != a.WorkflowID {
		if data, err := e.st.ReadArchiveRecord(a.Dir); err == nil {
			if r, err := store.ParseRecord(data); err == nil && r.WorkflowID == a.WorkflowID {
				res.Changed = true
				res.Message += "; the earlier call had not recorded its ending, so it is recorded now"
				res.Warnings = warned(res.Warnings, e.ended(r.WorkflowID, endingRev(r, a.Reason), endingLine(r, a.Reason)))
				return
			}
		}
	}
	res.Message += "; nothing changed"
}
