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

// updateL2State changes l2-state under its lock. It returns the notice of a damaged l2-state
// set aside, or nil.
func (e *Engine) updateL2State(f func(*l2State)) *store.Notice {
	_, aside, _ := e.st.UpdateOwn(l2StateDoc, func(cur []byte) ([]byte, error) {
		s := decodeLenient[l2State](cur)
		f(&s)
		return json.Marshal(s)
	})
	return aside
}

// withNotice adds to warning what a notice of a damaged document set aside says.
func withNotice(warning string, n *store.Notice) string {
	if n == nil {
		return warning
	}
	if warning == "" {
		return n.Message
	}
	return warning + "; " + n.Message
}

// recordL2 writes the lines pick chooses from l2-state to L2, and has record note in l2-state
// what became of them (owed: those owed, only a layer that is unavailable now may work later;
// refused text, a secret or an empty line, would fail every time). It returns the lines
// written and a warning naming the last failure (quiet: see writeLines). The lines are chosen,
// written, noted and marked under the mark's lock, which every writer of L2 and RestoreL2
// take: a line chosen from a state read before another process wrote a newer line and noted
// its revision would be written after it, and stay in MEMORY.md over it; and a restore never
// takes a line of ours that is not marked yet for a foreign rewrite.
func (e *Engine) recordL2(quiet bool, pick func(l2State) []string, record func(st *l2State, owed []string)) (wrote []string, warning string) {
	var lines, owed []string
	picked := func() []string {
		data, _ := e.st.Read(l2StateDoc) // nil when missing or unreadable: a zero state
		return pick(decodeLenient[l2State](data))
	}
	ran := false
	var stateAside *store.Notice
	_, markAside, err := e.st.UpdateOwn(l2MarkDoc, func(cur []byte) ([]byte, error) {
		ran = true
		lines = picked()
		wrote, owed, warning = e.writeLines(lines, quiet)
		stateAside = e.updateL2State(func(st *l2State) { record(st, owed) })
		if len(wrote) == 0 {
			return nil, nil
		}
		return e.markNow(cur), nil
	})
	switch {
	case ran:
		return wrote, withNotice(withNotice(warning, markAside), stateAside)
	case isLockTimeout(err):
		// Another Cairn process is writing L2 now: these lines are owed, and retried.
		lines = picked()
		owed = lines
		if len(lines) > 0 {
			warning = "auto-memory line not written (Cairn retries after the next turn): " + err.Error()
		}
	default:
		// No lock to be had in the state directory: write without it, as before it had one.
		lines = picked()
		wrote, owed, warning = e.writeLines(lines, quiet)
	}
	return wrote, withNotice(warning, e.updateL2State(func(st *l2State) { record(st, owed) }))
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

// writeL2 writes the line a change at revision rev of workflow id owes, after L1 committed,
// unless l2-state notes a later revision of the workflow already (its line, newer than ours,
// is written or owed; the same revision may be one a settling noted without knowing its
// line, an ending's). It never fails the operation: a failure becomes an owed line and a
// warning.
func (e *Engine) writeL2(id string, rev int64, line string) (warning string) {
	if e.memWarn != "" {
		return e.memWarn
	}
	_, warning = e.recordL2(false, func(s l2State) []string {
		if id != "" && s.WorkflowID == id && rev < s.Revision {
			return nil
		}
		return []string{line}
	}, func(s *l2State, owed []string) {
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
	if s := decodeLenient[l2State](data); !owes(s, r) {
		return nil, ""
	}
	// What is owed is worked out again under the mark's lock (recordL2): another process may
	// have written newer lines, and noted their revision, since the read above.
	var took []string
	return e.recordL2(true, func(s l2State) []string {
		took = s.Owed
		lines := slices.Clone(s.Owed)
		if r != nil && (r.WorkflowID != s.WorkflowID || r.Revision > s.Revision) {
			var from int64
			if r.WorkflowID == s.WorkflowID {
				from = s.Revision
			}
			lines = append(lines, e.journalLines(r.WorkflowID, from)...)
		}
		return lines
	}, func(st *l2State, failed []string) {
		// Lines another process came to owe since pick read the state (one that found the
		// mark's lock taken, or no lock) stay owed, after ours.
		later := st.Owed
		for _, l := range took {
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
}

// owes tells whether l2-state s owes L2 lines with r in the active slot (nil: none).
func owes(s l2State, r *workflow.Record) bool {
	return len(s.Owed) > 0 || r != nil && (r.WorkflowID != s.WorkflowID || r.Revision > s.Revision)
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
