package engine

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// l2StateDoc records which workflow revision's L2 lines are written and which lines are owed
// because writing them failed. The Stop hook settles what is owed after every turn, so a
// failed or crashed L2 write is retried rather than lost.
const l2StateDoc = "l2-state"

// maxOwed bounds the owed lines kept; older ones are dropped first (L2 is a summary).
const maxOwed = 20

type l2State struct {
	WorkflowID string   `json:"workflow_id,omitempty"`
	Revision   int64    `json:"revision"`
	Owed       []string `json:"owed,omitempty"`
}

func (e *Engine) updateL2State(f func(*l2State)) {
	_, _ = e.st.Update(l2StateDoc, func(cur []byte) ([]byte, error) {
		s := decodeLenient[l2State](cur)
		f(&s)
		return json.Marshal(s)
	})
}

// recordL2 writes lines to L2 and returns those written, those owed (only a layer that is
// unavailable now may work later; refused text, a secret or an empty line, would fail every
// time) and a warning naming the last failure (quiet: see writeLines). The lines are written and their mark kept
// under the mark's lock, which RestoreL2 takes too, so a restore never takes a line of ours
// that is not marked yet for a foreign rewrite.
func (e *Engine) recordL2(lines []string, quiet bool) (wrote, owed []string, warning string) {
	ran := false
	_, err := e.st.Update(l2MarkDoc, func(cur []byte) ([]byte, error) {
		ran = true
		wrote, owed, warning = e.writeLines(lines, quiet)
		if len(wrote) == 0 {
			return nil, nil
		}
		return e.markNow(cur), nil
	})
	switch {
	case ran:
	case isLockTimeout(err):
		// Another Cairn process is writing L2 now: these lines are owed, and retried.
		return nil, lines, "auto-memory line not written (Cairn retries after the next turn): " + err.Error()
	default:
		// No lock to be had in the state directory: write without it, as before it had one.
		wrote, owed, warning = e.writeLines(lines, quiet)
	}
	return wrote, owed, warning
}

// writeLines writes lines to L2, as recordL2 says. With quiet (the Stop hook settling what is
// owed), a line refused because a memory file is one Cairn leaves as it is (not a regular
// file, or over 4 MiB) stays owed without a word: the move that owed it said so, and that
// lasts until the person changes the file, after every turn.
func (e *Engine) writeLines(lines []string, quiet bool) (wrote, owed []string, warning string) {
	for _, l := range lines {
		if err := e.mem.Record(l); err != nil {
			retry := ""
			if memory.IsUnavailable(err) {
				owed = append(owed, l)
				retry = " (Cairn retries after the next turn)"
			}
			if !quiet || !memory.LeftAlone(err) {
				warning = "auto-memory line not written" + retry + ": " + err.Error()
			}
		} else {
			wrote = append(wrote, l)
		}
	}
	return wrote, owed, warning
}

func isLockTimeout(err error) bool {
	_, ok := errors.AsType[*durable.LockTimeoutError](err)
	return ok
}

// writeL2 writes the line a change at revision rev of workflow id owes, after L1 committed.
// It never fails the operation: a failure becomes an owed line and a warning.
func (e *Engine) writeL2(id string, rev int64, line string) (warning string) {
	if e.memWarn != "" {
		return e.memWarn
	}
	_, owed, warning := e.recordL2([]string{line}, false)
	e.updateL2State(func(s *l2State) {
		if id != "" && (s.WorkflowID != id || rev > s.Revision) {
			s.WorkflowID, s.Revision = id, rev
		}
		if len(owed) > 0 {
			s.Owed = append(s.Owed, owed...)
			s.Owed = s.Owed[max(0, len(s.Owed)-maxOwed):]
		}
	})
	return warning
}

// settleL2 writes what L2 is owed: lines whose write failed, and the lines of changes that
// committed to L1 but crashed before their L2 write (found in the journal). r is the workflow
// in the active slot as the caller just read it (nil when there is none): the hooks already
// hold it, so settling adds one small read when nothing is owed.
func (e *Engine) settleL2(r *workflow.Record) (wrote []string, warning string) {
	if e.memWarn != "" {
		return nil, ""
	}
	data, _ := e.st.Read(l2StateDoc) // nil when missing or unreadable: a zero state
	s := decodeLenient[l2State](data)
	if len(s.Owed) == 0 && (r == nil || r.WorkflowID == s.WorkflowID && r.Revision <= s.Revision) {
		return nil, ""
	}
	lines := slices.Clone(s.Owed)
	if r != nil {
		var from int64
		if r.WorkflowID == s.WorkflowID {
			from = s.Revision
		}
		lines = append(lines, e.journalLines(r.WorkflowID, from)...)
	}
	wrote, failed, warning := e.recordL2(lines, true)
	e.updateL2State(func(st *l2State) {
		// Lines another process came to owe since the read above stay owed, after ours.
		later := st.Owed
		for _, l := range s.Owed {
			if i := slices.Index(later, l); i >= 0 {
				later = slices.Delete(later, i, i+1)
			}
		}
		st.Owed = append(failed, later...)
		st.Owed = st.Owed[max(0, len(st.Owed)-maxOwed):]
		if r != nil {
			st.WorkflowID, st.Revision = r.WorkflowID, max(r.Revision, st.Revision)
		}
	})
	return wrote, warning
}

// journalLines recomputes the L2 lines owed by the journal's changes after revision from.
func (e *Engine) journalLines(id string, from int64) []string {
	recs, err := e.st.ReadJournalSince(id, from)
	if err != nil && len(recs) == 0 {
		return nil
	}
	var lines []string
	for _, rec := range recs {
		if rec.Revision <= from || rec.Event.Kind != string(workflow.EventTransition) {
			continue
		}
		var d eventDetail
		_ = json.Unmarshal([]byte(rec.Event.Detail), &d)
		r, err := store.ParseRecord(rec.Snapshot)
		if err != nil {
			continue
		}
		def, ok := e.definitions().Lookup(r.Type)
		if !ok || d.From == "" {
			continue
		}
		switch {
		case def.IsTerminal(r.State):
			lines = append(lines, workflow.CompletionLine(r))
		case def.IsMajor(d.From, r.State):
			lines = append(lines, workflow.PositionLine(def, r, d.From))
		}
	}
	return lines
}
