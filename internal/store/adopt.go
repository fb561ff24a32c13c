package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairn-dev/cairn/internal/durable"
)

// LineRecord is one revision of a workflow's line brought from elsewhere (another machine's,
// through a remote), for AdoptLine: the record after the change and the event that explains it.
type LineRecord struct {
	Revision int64
	Event    Event
	Snapshot []byte
}

// Line hands yield a line's records, oldest first, one at a time (a long workflow's line, every
// record a full copy of it, is not held whole), and returns yield's first error, or its own.
type Line func(yield func(LineRecord) error) error

// ErrLineTooLarge is AdoptLine's refusal of a line whose journal would be larger than a journal
// may be (MaxJournalSize): nothing was written, and the same line is refused every time.
var ErrLineTooLarge = fmt.Errorf("the line is too large to take in one step: its journal would exceed %d MiB", MaxJournalSize>>20)

// maxLine is the largest journal AdoptLine writes: MaxJournalSize, lowered by tests.
var maxLine = MaxJournalSize

// adoptMark is what archive/pending.json says of an AdoptLine in progress: the new journal's
// last line, by which recovery tells whether the journal was replaced (the commit point).
type adoptMark struct {
	Seq      int64  `json:"seq"`
	Revision int64  `json:"revision"`
	State    string `json:"state"`
}

// AdoptLine replaces the active workflow with another line of the same workflow (revisions
// 1..n, oldest first), keeping the current copy, snapshot and journal, as an archive with
// reason ("conflict" for a lost race). It is one change with one commit point, the journal's
// atomic replacement, made under the workflow lock: a reader sees the current copy or the
// line's last revision, never no workflow and never a mix. check, when not nil, is called
// under the lock with the active workflow and may refuse (it changed since the caller read
// it): nothing is written then. With no active workflow it returns a *NotFoundError.
//
// The order: archive/pending.json names the archive and the new journal's last line; the
// archive directory gets copies of the snapshot and journal, and the journal's sealed segments
// are moved into it; the journal is replaced (commit);
// the snapshot follows; the index line comes last. Recovery (finishArchive) finishes or undoes
// a cut-short adoption by comparing the journal's last line with the marker's.
func (s *Store) AdoptLine(reason string, line Line, check func(cur Workflow) error) (ArchiveInfo, Result, error) {
	w, unlock, err := s.lockActive(reason)
	if err != nil {
		return ArchiveInfo{}, Result{Workflow: w}, err
	}
	defer unlock()
	s.cleanTemps(".", durable.TempPrefix(WorkflowFile))
	res := Result{Workflow: w}
	if check != nil {
		if err := check(w); err != nil {
			return ArchiveInfo{}, res, err
		}
	}
	journal, tip, err := s.encodeLine(w.ID, line, w.Data)
	if err != nil {
		return ArchiveInfo{}, res, fmt.Errorf("workflow %s was not replaced: %w", w.ID, err)
	}
	jf := journalFile(w.ID)
	old, err := durable.ReadFile(s.fs, jf, MaxJournalSize)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ArchiveInfo{}, res, s.writeErr(jf, err)
	}
	info, err := s.newArchive(w.ID, w.Revision, reason, w.Data)
	if err != nil {
		return info, res, err
	}
	s.cleanTemps(journalDir, durable.TempPrefix(w.ID+".jsonl"))
	p := pending{WorkflowID: w.ID, Adopt: &adoptMark{Seq: tip.Seq, Revision: tip.Revision, State: tip.State}}
	made, err := s.startArchive(&info, &p)
	dir := archiveDir + "/" + info.Dir
	moved := false // our sealed segments may be in the archive directory
	copies := newFiles{s: s, dir: dir}
	undo := func(err error) (ArchiveInfo, Result, error) {
		// Our sealed segments come back first, and when they cannot, the archive and the
		// marker stay for recovery (settleAdopt) to undo. The directory goes only when it
		// holds nothing but our copies.
		if made && (!moved || s.unsealBack(dir, jf) == nil) {
			if n, _ := s.undoArchive(p, dir, copies.ours...); n != nil {
				info.Notices = append(info.Notices, *n)
			}
		}
		return info, res, notArchived(err)
	}
	if errors.Is(err, errDirTaken) {
		return info, res, err
	} else if err != nil {
		return undo(err)
	}
	metaDoc, _ := json.Marshal(info)
	files := []struct {
		name string
		data []byte
	}{{"archive.json", metaDoc}, {WorkflowFile, w.Data}, {"journal.jsonl", old}}
	for _, f := range files {
		if f.data == nil {
			continue // no journal on disk: the snapshot alone is the copy
		}
		if err := copies.write(f.name, f.data); err != nil {
			return undo(err)
		}
	}
	// Our sealed segments go with our copy before the commit point: left in place, the
	// adopted line would be read after them and their revisions would shadow its own. Sealed
	// segments already in the directory are not ours: the adoption does not go on.
	to := sealedDir(dir + "/journal.jsonl")
	if there, err := s.present(to); err != nil || there {
		return undo(cmp.Or(err, fmt.Errorf("%s holds sealed journal segments that are not this workflow's", to)))
	}
	moved = true
	if err := s.moveIfLeft(sealedDir(jf), to); err != nil {
		return undo(err)
	}
	if left, err := s.present(sealedDir(jf)); err != nil || left {
		moved = err != nil
		return undo(cmp.Or(err, fmt.Errorf("%s holds sealed journal segments that are not this workflow's", to)))
	}
	// The commit point: the journal replaced whole (a durable atomic replace).
	if err := durable.WriteFile(s.fs, jf, journal, 0o600); durable.IsNotDurable(err) {
		// Replaced, but a power loss may still bring ours back: not acknowledged. The marker
		// stays, so the next locked operation finishes or undoes it by what the journal holds.
		return info, res, s.writeErr(jf, err)
	} else if err != nil {
		// Replaced or not, recovery tells from the journal and finishes or undoes.
		if _, serr := s.finishArchive(); serr != nil {
			return info, res, fmt.Errorf("replacing workflow %s: %w; whether it was replaced is settled on the next read (%v)", w.ID, s.writeErr(jf, err), serr)
		}
		if done, _ := s.adopted(jf, tip); !done {
			return info, res, notArchived(s.writeErr(jf, err))
		}
	}
	res = Result{Workflow: Workflow{Data: tip.Snapshot, ID: w.ID, Revision: tip.Revision, Notices: w.Notices}, Changed: true, Seq: tip.Seq}
	// Committed: the snapshot, the index line and the marker's removal are recovery's work,
	// done now.
	if _, err := s.finishArchive(); err != nil {
		res.Notices = append(res.Notices, Notice{Kind: "snapshot-stale", Path: WorkflowFile, Revision: tip.Revision,
			Message: fmt.Sprintf("workflow %s was replaced in its journal at revision %d but the rest could not be finished (%v); the next write finishes it%s", w.ID, tip.Revision, err, NoRoomTold(err))})
		return info, res, nil
	}
	info.Pruned, info.PruneErr = s.prune(info.Dir)
	return info, res, nil
}

// encodeLine checks line (revisions 1..n of workflow id, each a record the store would save as
// a change of kept, the record here it replaces: checkChange) and encodes it as a journal; tip
// is its last line, with its state in Snapshot. A line too large is read to its end all the
// same, so that a record it refuses is said as such, without more of it kept.
func (s *Store) encodeLine(id string, line Line, kept []byte) ([]byte, Record, error) {
	var buf bytes.Buffer
	var ts tailState
	var prev []byte
	var tip Record
	n := int64(0)
	now := s.o.now().UTC()
	err := line(func(l LineRecord) error {
		n++
		m, err := readMeta(l.Snapshot)
		if err != nil {
			return fmt.Errorf("revision %d of the line: %w", n, err)
		}
		if m.id != id || m.rev != n || l.Revision != m.rev {
			return fmt.Errorf("revision %d of the line is not revision %d of %s", l.Revision, n, id)
		}
		ev := l.Event
		if err := cmp.Or(checkChange(kept, l.Snapshot), checkEvent(&ev, kept)); err != nil {
			return fmt.Errorf("revision %d of the line: %w", n, err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, l.Snapshot); err != nil {
			return err
		}
		rec := journalRecord(ts, prev, c.Bytes())
		rec.Seq, rec.Revision, rec.At, rec.Event = n, m.rev, now, ev
		if buf.Len() <= maxLine {
			buf.Write(encodeRecord(rec))
			buf.WriteByte('\n')
		}
		ts, prev = tailOf(&rec), c.Bytes()
		tip = rec
		tip.Snapshot = prev
		return nil
	})
	switch {
	case err != nil:
		return nil, Record{}, err
	case n == 0:
		return nil, Record{}, errors.New("the line to adopt is empty")
	case buf.Len() > maxLine:
		return nil, Record{}, ErrLineTooLarge
	}
	return buf.Bytes(), tip, nil
}

// checkEvent applies the checks every journal event passes: a valid kind, a detail free of
// secrets but those the record kept holds already (checkText: a phase's name in a task's event
// or in a sync's quote of one), scanned whole (a cut would keep the start of one past it), then cut to
// MaxEventDetail bytes (cutDetail).
func checkEvent(ev *Event, kept []byte) error {
	if err := ValidName(ev.Kind); err != nil {
		return fmt.Errorf("event kind: %w", err)
	}
	if f := checkText(kept, ev.Detail); f != nil {
		f.Path = "event.detail"
		return f
	}
	if len(ev.Detail) > MaxEventDetail {
		ev.Detail = cutDetail(ev.Detail)
	}
	return nil
}

// adoptCopies are the files an adoption writes in its archive directory.
var adoptCopies = []string{"archive.json", WorkflowFile, "journal.jsonl"}

// unsealBack returns the sealed segments an undone adoption moved into archive directory dir to
// journal file jf's, and fails unless none are left in dir: dir is removed next. While jf's are
// still there, ours never left (every locked operation settles an adoption before it seals), and
// what dir holds is someone else's, left there.
func (s *Store) unsealBack(dir, jf string) error {
	if ours, err := s.present(sealedDir(jf)); err != nil || ours {
		return err
	}
	from := sealedDir(dir + "/journal.jsonl")
	if err := s.moveIfLeft(from, sealedDir(jf)); err != nil {
		return err
	}
	if left, err := s.present(from); err != nil || left {
		return cmp.Or(err, fmt.Errorf("sealed journal segments of %s are in both %s and %s: both kept", jf, from, sealedDir(jf)))
	}
	return nil
}

// adopted reports whether journal file jf ends with tip, the last line of an adopted line. An
// error means it cannot be told: nothing may be decided from it.
func (s *Store) adopted(jf string, tip Record) (bool, error) {
	t, err := s.journalTail(jf)
	if err != nil {
		return false, fmt.Errorf("reading the journal %s: %w", jf, err)
	}
	return t != nil && t.Seq == tip.Seq && t.Revision == tip.Revision && t.State == tip.State, nil
}

// settleAdopt finishes or undoes the AdoptLine p names: with the journal replaced (it ends
// with the marker's line) journal/ is synced, then the snapshot is brought to the line's last
// revision and done is true (journal/ not synced: nothing more is done, the marker stays);
// otherwise our sealed segments come back from the archive directory, which then holds only
// copies and is removed as undoArchive does, and the workflow is as it was.
func (s *Store) settleAdopt(p pending, dir string) (done bool, n *Notice, err error) {
	jf := journalFile(p.WorkflowID)
	done, err = s.adopted(jf, Record{Seq: p.Adopt.Seq, Revision: p.Adopt.Revision, State: p.Adopt.State})
	if err != nil {
		return false, nil, err
	}
	if !done {
		if err := s.unsealBack(dir, jf); err != nil {
			return false, nil, err
		}
		n, err := s.undoArchive(p, dir, adoptCopies...)
		return false, n, err
	}
	// The journal's replacement is the commit point: durable before anything is built on it.
	// One whose directory could not be synced (AdoptLine said so) would come back as ours
	// after a power loss, under a snapshot and writes of their line.
	if err := s.fs.SyncDir(journalDir); err != nil {
		return false, nil, s.writeErr(jf, &durable.NotDurableError{Path: jf, Err: err})
	}
	st, err := s.journalState(jf)
	if err != nil || st == nil {
		return false, nil, fmt.Errorf("reading the adopted line of %s: %w", p.WorkflowID, cmp.Or(err, errChain))
	}
	if err := durable.WriteFile(s.fs, WorkflowFile, st.Snapshot, 0o600); err != nil && !durable.IsNotDurable(err) {
		return false, nil, s.writeErr(WorkflowFile, err)
	}
	return true, nil, nil
}
