package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
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
	// OwedOf names the change that owed each line of Owed, in step with it (else none is
	// known: lines an older Cairn owed), and Shown the change whose line Cairn last wrote as
	// the latest, which MEMORY.md's index line shows. An owed line older than Shown goes into
	// the topic file's history, never over the newer line.
	OwedOf []lineOf `json:"owed_of,omitempty"`
	Shown  lineOf   `json:"shown,omitzero"`

	active string // the workflow in the active slot as recordL2 read it (olderThan); not stored
}

// lineOf names the change an L2 line is of: its workflow, revision and time. The zero value
// is an unknown change, neither older nor newer than any.
type lineOf struct {
	WorkflowID string    `json:"workflow_id,omitempty"`
	Revision   int64     `json:"revision,omitempty"`
	At         time.Time `json:"at,omitzero"`
}

// olderThan tells whether a line of change l is older than one of change n, active naming
// the workflow in the active slot ("" when none or unknown): by revision in one workflow; a
// line of the active workflow is newer than any other workflow's, which all left the slot
// before it started (none comes back to it); else by time, which a clock set wrong can
// mislead.
func (l lineOf) olderThan(n lineOf, active string) bool {
	switch {
	case l.Revision == 0 || n.Revision == 0:
		return false
	case l.WorkflowID == n.WorkflowID:
		return l.Revision < n.Revision
	case active != "" && (l.WorkflowID == active || n.WorkflowID == active):
		return n.WorkflowID == active
	}
	return l.At.Before(n.At)
}

// show notes that L2 shows the line of change n, unless it shows a newer one: a writer that
// found the mark's lock taken read Shown before the holder noted its line.
func (s *l2State) show(n lineOf) {
	if n.Revision != 0 && !n.olderThan(s.Shown, s.active) {
		s.Shown = n
	}
}

// l2Line is an L2 line and the change it is of.
type l2Line struct {
	Text string
	Of   lineOf
	// later says a later change of the workflow is noted already, whose line is written or
	// owed: this line is not to be shown, only kept in the history (writeLines).
	later bool
}

func (a l2Line) same(b l2Line) bool {
	return a.Text == b.Text && a.Of.WorkflowID == b.Of.WorkflowID && a.Of.Revision == b.Of.Revision && a.Of.At.Equal(b.Of.At)
}

// owedLines is what s owes, each line with its change where s knows it.
func (s l2State) owedLines() []l2Line {
	ls := make([]l2Line, len(s.Owed))
	for i, t := range s.Owed {
		ls[i].Text = t
		if len(s.OwedOf) == len(s.Owed) {
			ls[i].Of = s.OwedOf[i]
		}
	}
	return ls
}

// owe adds ls to what s owes, each before the first owed line newer than it: settled in that
// order, each line is written as the latest in its turn and the newest stays shown, where
// one owed after a newer line and written after it would go into the history, and a line
// of the same text as the one before it be taken for it (memory.Record).
func (s *l2State) owe(ls []l2Line) {
	all := s.owedLines()
	for _, l := range ls {
		i := slices.IndexFunc(all, func(o l2Line) bool { return l.Of.olderThan(o.Of, s.active) })
		if i < 0 {
			i = len(all)
		}
		all = slices.Insert(all, i, l)
	}
	s.setOwed(all)
}

// setOwed makes ls, the newest maxOwed of them, what s owes.
func (s *l2State) setOwed(ls []l2Line) {
	ls = ls[max(0, len(ls)-maxOwed):]
	s.Owed, s.OwedOf = nil, nil
	known := false
	for _, l := range ls {
		s.Owed = append(s.Owed, l.Text)
		s.OwedOf = append(s.OwedOf, l.Of)
		known = known || l.Of.Revision != 0
	}
	if !known {
		s.OwedOf = nil
	}
}

// updateL2State changes l2-state under its lock, active naming the workflow in the active
// slot (olderThan). It returns the notice of a damaged l2-state set aside, or nil. One that is
// JSON but not this Cairn's l2-state (a newer Cairn's, with fields this one would drop, or a
// foreign document) is set aside and told too, what it holds of an l2-state kept. err says
// that l2-state could not be written: what f noted (lines owed) is not kept.
func (e *Engine) updateL2State(active string, f func(*l2State)) (_ *store.Notice, err error) {
	var foreign *store.Notice
	_, aside, err := e.st.UpdateOwn(l2StateDoc, func(cur []byte) ([]byte, error) {
		var s l2State
		if cur != nil {
			// One pass: the decoder goes on past an unknown field or a wrong type, as
			// json.Unmarshal does, and reports it after.
			dec := json.NewDecoder(bytes.NewReader(cur))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s); err != nil {
				foreign = e.setAside(l2StateDoc, "holds no l2-state this Cairn knows (a newer Cairn's, or another tool's)")
			}
		}
		s.active = active
		f(&s)
		return json.Marshal(s)
	})
	if aside != nil {
		return aside, err
	}
	return foreign, err
}

// retryNote is what an L2 line's warning says of a line owed: true only once l2-state holds
// it (notOwed).
const retryNote = " (Cairn retries after the next turn)"

// notOwed is warning, about new lines owed (writeL2's), once noting them in l2-state failed
// with err: no retry is promised, and what failed is said, of the line warning says owed, or
// of one owed untried (after an older one owed) when it says none. A settling's lines (quiet)
// stay owed in the l2-state it could not replace, or in the journal it reads them from again.
func notOwed(warning string, err error) string {
	why := withoutRetry(err.Error(), err)
	if w := strings.Replace(warning, retryNote, "", 1); w != warning {
		return w + "; nor could it be kept to be retried: " + why
	}
	return also(warning, "an auto-memory line to be written later could not be kept: "+why)
}

// activeID names the workflow in the active slot, "" when there is none or it cannot be read,
// with what the store did on its own while reading it (a damaged snapshot set aside, the seed's
// state file migrated into an empty slot): said only by the read that did it.
func (e *Engine) activeID() (string, []store.Notice) {
	w, err := e.st.ReadWorkflow()
	if err != nil {
		return "", w.Notices
	}
	return w.ID, w.Notices
}

// withNotices adds to warning what each of ns says.
func withNotices(warning string, ns []store.Notice) string {
	for i := range ns {
		warning = withNotice(warning, &ns[i])
	}
	return warning
}

// withNotice adds to warning what a notice of a damaged document set aside says.
func withNotice(warning string, n *store.Notice) string {
	if n == nil {
		return warning
	}
	return also(warning, n.Message)
}

// also is warning and more, either of which may be "".
func also(warning, more string) string {
	if warning == "" || more == "" {
		return warning + more
	}
	return warning + "; " + more
}

// recordL2 writes the lines pick chooses from l2-state to L2, and has record note in l2-state
// what became of them (owed: those owed, only a layer that is unavailable now may work later;
// refused text, a secret or an empty line, would fail every time). It returns the lines
// written and a warning naming the last failure (quiet: see writeLines) and what the store did
// reading the active slot (activeID). The lines are chosen,
// written, noted and marked under the mark's lock, which every writer of L2 and RestoreL2
// take: a line chosen from a state read before another process wrote a newer line and noted
// its revision would be written after it, and stay in MEMORY.md over it; and a restore never
// takes a line of ours that is not marked yet for a foreign rewrite.
func (e *Engine) recordL2(quiet bool, pick func(l2State) []l2Line, record func(st *l2State, owed []l2Line, shown lineOf)) (wrote []string, warning string) {
	var lines, owed []l2Line
	var shown lineOf
	var active string
	var read []store.Notice // what the store did reading the active slot
	picked := func() {
		data, _ := e.st.ReadOwn(l2StateDoc) // nil when missing or unreadable: a zero state
		s := decodeLenient[l2State](data)
		lines, shown = pick(s), s.Shown
		active, read = e.activeID()
	}
	ran := false
	var stateAside, noMark *store.Notice
	var stateErr error
	pushed := 0 // lines the restore pushed past what Claude Code loads
	_, markAside, err := e.st.UpdateOwn(l2MarkDoc, func(cur []byte) ([]byte, error) {
		ran = true
		noMark = e.setNoMarkAside(cur) // told, as RestoreL2 tells it, not replaced without a word
		if k, ok := decodeMark(cur); ok && !k.Empty() {
			// A background memory writer's rewrite since Cairn last wrote is put back first, as
			// a Stop does (restoreL2): lines written onto it would mark it as Cairn's own, and
			// lose for good the lines it dropped. A restore that fails leaves the write to say
			// what fails, and the next Stop to try again.
			_, err := e.mem.Restore(k, e.now(), processAlive)
			if p, ok := errors.AsType[*memory.PushedError](err); ok {
				pushed = p.N // restored, which pushed them: said with what the lines push
			}
		}
		picked()
		wrote, owed, shown, warning = e.writeLines(lines, shown, active, quiet, pushed)
		stateAside, stateErr = e.updateL2State(active, func(st *l2State) { record(st, owed, shown) })
		if stateErr != nil && !quiet && !inJournal(owed, active) {
			warning = notOwed(warning, stateErr)
		}
		if len(wrote) == 0 {
			return nil, nil
		}
		return e.markNow(cur), nil
	})
	switch {
	case ran:
		return wrote, withNotices(withNotice(withNotice(withNotice(warning, markAside), noMark), stateAside), read)
	case isLockTimeout(err), errors.Is(err, store.ErrRepairLeft):
		// Another Cairn process is writing L2 now, or the mark is damaged and its repair left
		// to the next reader (Config.NoRepair), which marks what it writes: these lines are
		// owed, and retried.
		picked()
		owed = lines
		if len(lines) > 0 {
			warning = "auto-memory line not written" + retryNote + ": " + withoutRetry(err.Error(), err)
		}
	default:
		// No lock to be had in the state directory: write without it, as before it had one.
		picked()
		wrote, owed, shown, warning = e.writeLines(lines, shown, active, quiet, 0)
	}
	aside, err := e.updateL2State(active, func(st *l2State) { record(st, owed, shown) })
	if err != nil && !quiet && !inJournal(owed, active) {
		warning = notOwed(warning, err)
	}
	return wrote, withNotices(withNotice(warning, aside), read)
}

// inJournal says that every owed line is a position line of the workflow in the active slot,
// active: unless l2-state keeps it, the next settling finds it again in its journal
// (journalLines). An ending's line is not found again: its workflow leaves the active slot.
func inJournal(owed []l2Line, active string) bool {
	return !slices.ContainsFunc(owed, func(l l2Line) bool {
		return l.Of.WorkflowID == "" || l.Of.WorkflowID != active || workflow.IsEndingLine(l.Text)
	})
}

// writeLines writes lines to L2, as recordL2 says, shown being the change whose line L2 shows
// as the latest: a line older than it (olderThan, active naming the workflow in the active
// slot) goes into the topic file's history only. It returns the change shown after. With
// quiet (the Stop hook settling what is owed), a line refused because a memory file is one
// Cairn leaves as it is (not a regular file, or over 4 MiB) stays owed without a word: the
// move that owed it said so, and that lasts until the person changes the file, after every
// turn. pushed is how many lines a restore before pushed past what Claude Code loads: said
// once, with those the writes push, before the last failure.
func (e *Engine) writeLines(lines []l2Line, shown lineOf, active string, quiet bool, pushed int) (wrote []string, owed []l2Line, _ lineOf, warning string) {
	for i, l := range lines {
		if l.Of.Revision != 0 && l.Of.WorkflowID == shown.WorkflowID && l.Of.Revision == shown.Revision {
			// The change L2 shows, written again (a completion line the move wrote, written
			// once more when its workflow is archived; an expiry two processes both wrote): with
			// the stamp it was written with, memory.RecordAt finds it written, not a new line.
			lines[i].Of.At = shown.At
		}
	}
	for i, l := range lines {
		older := l.Of.olderThan(shown, active)
		if l.later && !older {
			// Newer than the line shown and older than one owed: owed, for the settling that
			// writes the newer line to write it before.
			owed = append(owed, l)
			continue
		}
		var err error
		if older {
			err = e.mem.RecordOlder(l.Text, l.Of.At)
		} else {
			// Stamped with its change's time, and followed by the lines after it: a settling
			// killed before noting them written wrote them so (memory.RecordAt).
			var after []memory.Entry
			for _, a := range lines[i+1:] {
				after = append(after, memory.Entry{At: a.Of.At, Text: a.Text})
			}
			err = e.mem.RecordAt(l.Text, l.Of.At, after)
		}
		if p, ok := errors.AsType[*memory.PushedError](err); ok {
			pushed, err = pushed+p.N, nil // written: said once, by the write that pushed them
		}
		if err != nil {
			retry, step := "", ""
			if memory.IsUnavailable(err) {
				owed = append(owed, l)
				retry = retryNote
			}
			if step = userStep(err, "writes the line"); step != "" {
				retry = ""
			}
			why := lineErr(err, e.mem.Location().Dir)
			if w, s := e.memoryNotDir(); w != "" {
				why, step = w, ": "+s // owed, and retried after each turn as said

			}
			if !quiet || !memory.LeftAlone(err) {
				warning = "auto-memory line not written" + retry + ": " + why + step
			}
			continue
		}
		wrote = append(wrote, l.Text)
		if !older && l.Of.Revision != 0 {
			shown = l.Of
		}
	}
	if pushed > 0 {
		warning = also((&memory.PushedError{N: pushed}).Error(), warning)
	}
	return wrote, owed, shown, warning
}

// userStep is, for a memory file Cairn leaves as it is (memory.LeftAlone), the person's step
// and what Cairn then does after the next turn (done), else "". Retried after every turn,
// no retry succeeds until the person acts. The user's to take, not the model's (it reads
// this in a tool's result): the file may be the user's own.
func userStep(err error, done string) string {
	if !memory.LeftAlone(err) {
		return ""
	}
	return " for the user to " + memory.LeftAloneStep(err) + ", and Cairn " + done + " after the next turn"
}

// lineErr is why a workflow's line could not be written in the memory directory dir: the
// memory's words without its warning about learnings, which a line's failure does not say,
// and a full disk (or one out of inodes) said. dir is clipped, as memoryNotDir clips it: the
// report cuts a longer line's step.
func lineErr(err error, dir string) string {
	msg := err.Error()
	if ue, ok := errors.AsType[*memory.UnavailableError](err); ok {
		msg = ue.Cause()
	}
	if errors.Is(err, syscall.ENOSPC) {
		what, _ := noSpace(err, dir)
		msg = what + ": " + msg
	}
	// The line is owed and retried: the lock's "try again" would run the move once more.
	msg = withoutRetry(msg, err) + store.NoRoomTold(err)
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir, textsafe.Clip(dir, 120))
	}
	return msg
}

func isLockTimeout(err error) bool {
	_, ok := errors.AsType[*durable.LockTimeoutError](err)
	return ok
}

// writeL2 writes the line a change at revision rev of workflow id owes, after L1 committed.
// When l2-state notes a later revision of the workflow already (its line, newer than ours, is
// written or owed; the same revision may be one a settling noted without knowing its line,
// an ending's), the line only goes into the topic file's history: now, when the later line is
// written, else when it is. It never fails the operation: a failure becomes an owed line and
// a warning.
func (e *Engine) writeL2(id string, rev int64, line string) (warning string) {
	if e.memoryOff() {
		return "" // the user's choice, no fault: doctor says it
	}
	if e.memWarn != "" {
		return e.memWarn
	}
	var of lineOf
	if id != "" {
		of = lineOf{WorkflowID: id, Revision: rev, At: e.now().UTC()}
	}
	_, warning = e.recordL2(false, func(s l2State) []l2Line {
		return []l2Line{{Text: line, Of: of, later: id != "" && s.WorkflowID == id && rev < s.Revision}}
	}, func(s *l2State, owed []l2Line, shown lineOf) {
		if id != "" && (s.WorkflowID != id || rev > s.Revision) {
			s.WorkflowID, s.Revision = id, rev
		}
		s.show(shown)
		if len(owed) > 0 {
			s.owe(owed)
		}
	})
	return warning
}

// settleL2 writes what L2 is owed: lines whose write failed, and the lines of changes that
// committed to L1 but crashed before their L2 write (found in the journal). r is the workflow
// in the active slot as the caller just read it (nil when there is none): the hooks already
// hold it, so settling adds one small read when nothing is owed. owed is how many lines are
// still owed after it.
func (e *Engine) settleL2(r *workflow.Record) (wrote []string, owed int, warning string) {
	if e.memWarn != "" {
		return nil, 0, ""
	}
	data, _ := e.st.ReadOwn(l2StateDoc) // nil when missing or unreadable: a zero state
	if s := decodeLenient[l2Owes](data); !owes(s, r) {
		return nil, 0, ""
	}
	// What is owed is worked out again under the mark's lock (recordL2): another process may
	// have written newer lines, and noted their revision, since the read above.
	var took []l2Line
	var through int64 // r's revision whose lines are all taken (journalLines)
	wrote, warning = e.recordL2(true, func(s l2State) []l2Line {
		took = s.owedLines()
		lines := slices.Clone(took)
		if r != nil {
			through = r.Revision
		}
		if r != nil && (r.WorkflowID != s.WorkflowID || r.Revision > s.Revision) {
			var from int64
			if r.WorkflowID == s.WorkflowID {
				from = s.Revision
			}
			var found []l2Line
			found, through = e.journalLines(r, from)
			lines = append(lines, found...)
		}
		return lines
	}, func(st *l2State, failed []l2Line, shown lineOf) {
		// Lines another process came to owe since pick read the state (one that found the
		// mark's lock taken, or no lock) stay owed, ours before those newer than them.
		later := st.owedLines()
		for _, l := range took {
			if i := slices.IndexFunc(later, l.same); i >= 0 {
				later = slices.Delete(later, i, i+1)
			}
		}
		st.setOwed(later)
		st.owe(failed)
		st.show(shown)
		switch {
		case r == nil:
		case st.WorkflowID == r.WorkflowID:
			st.Revision = max(through, st.Revision)
		default:
			// Another workflow's revision says nothing of r's: kept, r's lines up to it
			// (a move, its ending) would be taken as older than one noted, and held back.
			st.WorkflowID, st.Revision = r.WorkflowID, through
		}
		owed = len(st.Owed)
	})
	return wrote, owed, warning
}

// l2Owes is the part of l2-state that tells whether L2 is owed anything: the Stop hook
// decodes only it after every turn, and the rest when something is owed.
type l2Owes struct {
	WorkflowID string   `json:"workflow_id"`
	Revision   int64    `json:"revision"`
	Owed       []string `json:"owed"`
}

// owes tells whether l2-state s owes L2 lines with r in the active slot (nil: none).
func owes(s l2Owes, r *workflow.Record) bool {
	return len(s.Owed) > 0 || r != nil && (r.WorkflowID != s.WorkflowID || r.Revision > s.Revision)
}

// journalLines recomputes the L2 lines owed by the journal's changes to r's workflow after
// revision from, up to r's revision, and returns the revision they are taken through: r's, or
// the one before the first change whose type's definition does not load (waitsForDefinition).
// That line and those after it wait, owed, until it loads: another definition (the built-in
// one) would give other verbs and phases than the workflow ran under.
func (e *Engine) journalLines(r *workflow.Record, from int64) ([]l2Line, int64) {
	id, to := r.WorkflowID, r.Revision
	if e.waitsForDefinition(r.Type) {
		// Known before reading: a Stop after every turn would read the journal since the
		// waiting line again, more of it each turn, until the override loads.
		return nil, from
	}
	// The topic file keeps the newest lines alone: moves before the newest that many owe lines
	// it would drop, and reading them would read a long workflow's sealed journal.
	recs, err := e.st.ReadJournalKindSince(id, from, string(workflow.EventTransition), memory.MaxTopicLines)
	if err != nil && len(recs) == 0 {
		return nil, to
	}
	var lines []l2Line
	for _, rec := range recs {
		if rec.Revision <= from || rec.Event.Kind != string(workflow.EventTransition) {
			continue
		}
		var d eventDetail
		_ = json.Unmarshal([]byte(rec.Event.Detail), &d)
		r, err := store.ParseRecord(rec.Snapshot)
		if err != nil || d.From == "" {
			continue
		}
		if e.waitsForDefinition(r.Type) {
			return lines, min(to, rec.Revision-1)
		}
		def, ok := e.definitions().Lookup(r.Type)
		if !ok {
			continue
		}
		of := lineOf{WorkflowID: id, Revision: rec.Revision, At: rec.At.UTC()}
		switch {
		case def.IsTerminal(r.State):
			lines = append(lines, l2Line{Text: workflow.CompletionLine(r), Of: of})
		case def.IsMajor(d.From, r.State):
			lines = append(lines, l2Line{Text: workflow.PositionLine(def, r, d.From), Of: of})
		}
	}
	return lines, to
}

// waitsForDefinition tells whether lines of type typ wait for its definition: a project's
// override of it that does not load (Definitions.Broken). Without files in .claude/workflows
// there is none, and nothing is parsed to know it.
func (e *Engine) waitsForDefinition(typ string) bool {
	return e.builtinOnly(typ) == nil && e.definitions().Broken(typ) != ""
}

// memoryNotDir says, when the memory directory or a directory above it is a file, which one,
// with the step that gives Cairn a directory to write in (worded for the person and the model
// alike): another where a variable or a setting named it, else one in user settings (Claude
// Code cannot keep memory there either). Nothing written in the memory directory could succeed, so L2 is unavailable:
// SessionStart's tier, Stop's warning and doctor all say it so. ("", "") when there is none.
func (e *Engine) memoryNotDir() (why, step string) {
	loc := e.mem.Location()
	if loc.Dir == "" {
		return "", ""
	}
	d, ok := nearest(loc.Dir)
	if ok {
		return "", ""
	}
	if _, err := os.Stat(d); err != nil {
		return "", ""
	}
	shown := textsafe.Clip(d, 120) // a path cut where it is long: the report cuts a longer line's step
	why = shown + " is a file, not a directory"
	if d != loc.Dir {
		why = shown + " is a file, so the memory directory below it cannot be made" // its path repeats d's: too long a line cuts the step
	}
	if loc.Source == "default" {
		return why, "set autoMemoryDirectory in user settings to a directory (Claude Code cannot keep memory there either)"
	}
	return why, "set " + loc.Source + " to a directory" // CAIRN_MEMORY_DIR, autoMemoryDirectory in FILE

}
