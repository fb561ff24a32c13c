// Package remotesync brings the local store's active workflow and a remote's line for it into
// agreement, once: local revisions the remote lacks are appended after the remote's head,
// remote revisions this machine lacks are written through the store as ordinary changes, and
// when both moved from a common revision the remote wins (the first acknowledged write) and
// this machine's copy is archived as a conflict, never overwritten.
//
// The local store stays the source of truth for everything else and works without the remote;
// nothing here runs in a hook. A remote record is one revision of the workflow: the record's
// snapshot after the change plus the change's event (see Entry), so revision n on the remote
// is revision n in every machine's store.
//
// A workflow archived here (completed, expired, replaced) has its last revisions pushed by the
// next sync, so other machines see its end, and is never taken back from the remote, except
// one that expired here while another machine kept it going (see idle).
//
// After a lost race, this machine's copy is archived and the remote's line installed in one
// store write (store.AdoptLine), so a reader never finds no workflow in between. A Replayer
// may then re-apply this machine's lost changes through the state machine on the remote's
// line (EngineReplayer does so for every kind of change); what it applies is pushed by the
// same sync, the rest stays only in the conflict archive and is named in Conflict.Skipped.
package remotesync

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Entry is one remote record: a workflow revision as it travels between machines.
type Entry struct {
	Revision int64           `json:"revision"`
	At       time.Time       `json:"at"`
	Event    store.Event     `json:"event"`
	Snapshot json.RawMessage `json:"snapshot"`
}

// Outcome says what one Sync did.
type Outcome struct {
	Workflow string
	Local    int64 // this machine's revision after the sync
	Remote   int64 // the remote's head after the sync
	Pushed   int   // revisions appended to the remote
	Pulled   int   // remote revisions written to the local store
	// Ended is the status the workflow is in when what the sync pulled or adopted ended it
	// (another machine completed it, or found it expired); "" while it goes on.
	Ended workflow.Status `json:",omitempty"`
	// ReplacedBy, when Ended is archived, is the workflow a start there replaced it with (on
	// the remote too, the sync that pushed the end pushing it), or "".
	ReplacedBy string `json:",omitempty"`
	// Conflict is set when both sides had moved: this machine's copy was archived and the
	// remote's adopted.
	Conflict *Conflict
	// Available lists the remote's workflows when none is active here and none was chosen.
	Available remote.Heads
	// Shared counts revisions of workflows archived here (finished) pushed so that other
	// machines see their end.
	Shared int
	// Taken is set when a sync that found nothing active here took the workflow from the
	// remote, none of it being here (not one taken back): another machine's, new here.
	Taken bool `json:",omitempty"`
	// ArchivedHere is set when the workflow asked for was archived on this machine, so it
	// was not taken back from the remote (one expired here but live there is taken back).
	ArchivedHere bool
	// Unreadable names the remote's lines an idle sync left out because they cannot be read;
	// the others were synced. LeftOut says, for each, why and the step that ends it.
	Unreadable []string         `json:",omitempty"`
	LeftOut    []remote.LeftOut `json:",omitempty"`
	// Notices say what the sync found and dealt with on its own (a replay intent that cannot
	// be read; what making the conflict archive did besides, engine.ArchiveReport, and the
	// older archives retention removed for it), for the person and the model.
	Notices []string `json:",omitempty"`
}

// Conflict describes a lost race.
type Conflict struct {
	Common  int64             // the last revision both sides shared
	Archive store.ArchiveInfo // where this machine's copy went
	By      store.Event       // the remote's last change
	State   string            // the phase the remote's line is in
	Session string            // the session that owns it there, when recorded
	// Lost counts this machine's changes after Common, kept in Archive: EachLost reads them.
	Lost int
	// Base is the record both sides last shared (revision Common; nil when they share none)
	// and Theirs the remote's tip as it was taken: what a Replayer compares against.
	Base, Theirs json.RawMessage
	// Replayed counts the Lost changes the Replayer re-applied on the remote's line.
	Replayed int
	// Skipped says, for each part of Lost the Replayer left out, what and why; those parts
	// are only in the conflict archive.
	Skipped []string
	st      *store.Store // where Archive is
}

// EachLost hands fn this machine's changes after Common (Lost of them), oldest first, one at a
// time as it reads them from the conflict archive: each is a full copy of the record, and a
// machine that worked long before losing a race made many. fn's error stops it and is returned.
func (c *Conflict) EachLost(fn func(Entry) error) error {
	if c.st == nil {
		return nil
	}
	line, err := archiveLine(c.st, c.Archive.Dir, c.Archive.WorkflowID, c.Common, c.Archive.Revision)
	if err != nil {
		return err
	}
	return line(fn)
}

// ErrChoose is returned when no workflow is active here and the remote holds several.
var ErrChoose = errors.New("the remote holds several workflows and none is active here: name the one to take")

// ErrNoSuch is returned when no workflow is active here and the remote holds none by the id
// asked for; Outcome.Available lists the ones it holds that could be taken.
var ErrNoSuch = errors.New("the remote holds no workflow by that id")

// ErrRunningElsewhere is returned by Background when no workflow is active here and the
// remote's only one to take is owned by a live session (workflow.OwnerLive) on another machine.
// Outcome.Available offers it; Sync takes it.
var ErrRunningElsewhere = errors.New("the remote's only workflow to take is being worked in by a live session on another machine, so it was not taken here")

// ErrOtherActive is returned when the id asked for is not the workflow active here, which a
// sync never leaves for another; Outcome.Workflow names the active one.
var ErrOtherActive = errors.New("another workflow is active here")

const maxRounds = 10

// ErrOtherWorkflow is returned when the remote's line of the active workflow's id shares no
// revision with it: another workflow, started elsewhere under the same id. Neither is taken for
// the other, and every sync fails alike until one of them is started again under another id.
var ErrOtherWorkflow = errors.New("the remote holds another workflow under this id")

// Replayer re-applies the changes this machine made that lost a race (c.EachLost, oldest first) on
// top of the remote's line, which is the active workflow when it is called, and returns how
// many it applied, noting in c.Skipped what it left out. It must go through the state machine,
// so a change that no longer makes sense is refused rather than forced.
type Replayer func(ctx context.Context, c *Conflict) (applied int, err error)

// Sync brings the active workflow (or, when none is active, the remote workflow id, or the
// remote's only one when id is empty) into agreement with b. from names the remote in the
// events it writes ("origin"). replay, when not nil, is offered the changes of a lost race.
func Sync(ctx context.Context, st *store.Store, b remote.Backend, from, id string, replay Replayer) (Outcome, error) {
	return syncAll(ctx, st, b, from, id, replay, false)
}

// Background is Sync with no id, run unasked (cairn-mcp's syncs, every few seconds): with
// nothing active here, the remote's only workflow is not taken while a live session on another
// machine works in it (ErrRunningElsewhere). Taken here unasked, the model found it in its
// slot when the person had just finished their own, start_workflow refused it, and replacing
// it ended it on the machine working in it. A person's cairn sync takes it, as asked.
func Background(ctx context.Context, st *store.Store, b remote.Backend, from string, replay Replayer) (Outcome, error) {
	return syncAll(ctx, st, b, from, "", replay, true)
}

func syncAll(ctx context.Context, st *store.Store, b remote.Backend, from, id string, replay Replayer, unasked bool) (Outcome, error) {
	var conflict *Conflict
	var notices []string // every round's: a conflict round's archive is told after the push
	if replay != nil {
		// A sync killed between taking the remote's line and replaying this machine's
		// changes left its intent: the replay is done now.
		c, n, err := resume(ctx, st, from, replay)
		if err != nil {
			return Outcome{}, err
		}
		conflict = c
		if n != "" {
			notices = append(notices, n)
		}
	}
	for round := 0; ; round++ {
		out, err := syncOnce(ctx, st, b, from, id, replay != nil, unasked)
		for _, n := range out.Notices {
			if !slices.Contains(notices, n) { // a finished line not shared is told by every round
				notices = append(notices, n)
			}
		}
		out.Notices = notices
		if errors.Is(err, ErrMoved) && round < maxRounds {
			if err := backoff(ctx, b, round); err != nil {
				return out, err
			}
			continue // someone changed the store or the remote under us: start over
		}
		if err != nil || out.Conflict == nil || replay == nil {
			if conflict != nil && out.Conflict == nil {
				out.Conflict = conflict // the round that pushed the replayed changes
			}
			return out, err
		}
		c := out.Conflict
		if c.Replayed, err = replay(ctx, c); err != nil {
			return out, fmt.Errorf("replaying this machine's changes on the remote's line ("+NextSyncTries+"): %w", err)
		}
		step("replayed")
		if err := clearIntent(st); err != nil {
			return out, err
		}
		// A replayed change that loses again is replayed again, from this machine's copy
		// of it; the report keeps the first race (where this machine's own work went)
		// with what the last round replayed and everything left out.
		if conflict == nil {
			conflict = c
		} else {
			conflict.By, conflict.State, conflict.Session, conflict.Replayed = c.By, c.State, c.Session, c.Replayed
			conflict.Skipped = append(conflict.Skipped, c.Skipped...)
		}
		out.Conflict = conflict
		if c.Replayed == 0 || round >= maxRounds {
			return out, nil
		}
		if err := backoff(ctx, b, round); err != nil {
			return out, err
		}
	}
}

// RecordCut records in the mirror (mirror.Reached) the last revision this clone and the remote
// share after a sync that failed (out, against the remote from), when it changed this clone
// first: revisions it pulled, or a race it lost, whose line it took. Those revisions are the
// remote's, not unpushed. It is no later than this clone's revision (a pull cut short is behind
// the remote's head), so the next sync still reads both lines from there (readLines).
func RecordCut(st *store.Store, from string, out Outcome) error {
	if out.Workflow == "" || out.Remote <= 0 || out.Local <= 0 || out.Pulled == 0 && out.Conflict == nil {
		return nil
	}
	return mirror.Reached(st, from, out.Workflow, min(out.Remote, out.Local))
}

// backoff waits a little before another round after round lost a race, at random and up to
// twice as long each time (10 ms, then 20, ... 320), so that machines racing for the same head
// take turns instead of colliding again. A Backend that is a Waiter waits itself.
func backoff(ctx context.Context, b remote.Backend, round int) error {
	d := time.Duration(rand.Int64N(int64(10*time.Millisecond) << min(round, 5)))
	if w, ok := b.(Waiter); ok {
		return w.Wait(ctx, d)
	}
	return remote.Sleep(ctx, d)
}

// Waiter is a Backend that does a sync's waits between rounds, so that it can let go of what
// it holds for the sync meanwhile (cairn-mcp's turn, which tool calls wait for): the next
// round reads both lines again before it writes anything.
type Waiter interface {
	Wait(ctx context.Context, d time.Duration) error
}

// ErrMoved is returned when the remote or this machine's workflow kept moving during every
// round of a sync (other machines pushing at the same moment): nothing was lost, what is not
// pushed stays here, and the next sync tries again.
var ErrMoved = errors.New("the workflow kept moving on the remote or here during the sync; nothing is lost: " + NextSyncTries)

// NextSyncTries is remote.NextSyncTries, the step of a sync that did not finish and loses
// nothing by that.
const NextSyncTries = remote.NextSyncTries

// stepHook, when set (by tests), is called at the steps of a lost race that run no git:
// "intent" (the replay owed is recorded), "adopted" (the remote's line is installed),
// "replayed" (this machine's changes are replayed, the intent not yet cleared).
var stepHook func(step string)

func step(name string) {
	if stepHook != nil {
		stepHook(name)
	}
}

func syncOnce(ctx context.Context, st *store.Store, b remote.Backend, from, id string, replaying, unasked bool) (out Outcome, err error) {
	var skipped []remote.LeftOut // the remote's lines idle left out
	var unshared []string        // ends of workflows finished here that were not shared, and why
	var taken bool               // idle chose a line none of which is here (Outcome.Taken)
	w, err := st.ReadWorkflow()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Outcome{}, err
	}
	// What the store repaired on the way (a damaged snapshot moved to quarantine/ and rebuilt,
	// an archive cut short finished) is said once, by the read that did it: this one.
	repaired := w.Notices
	defer func() { out.Notices = append(noticeMessages(repaired), out.Notices...) }()
	var shared int
	if w.Data != nil {
		if id != "" && id != w.ID {
			return Outcome{Workflow: w.ID, Local: w.Revision}, ErrOtherActive
		}
		id = w.ID
		// Only a race or the end of ctx stops the sync here: the finished workflow's line may
		// be one its end can never be shared on, and that must not hold this one up.
		var n string
		if shared, n, err = shareLeft(ctx, st, b, from, id); errors.Is(err, ErrMoved) || err != nil && ctx.Err() != nil {
			return Outcome{}, err
		}
		if n != "" {
			unshared = append(unshared, n)
		}
	} else {
		var chosen string
		shared, chosen, out, err = idle(ctx, st, b, from, id, unasked)
		skipped, unshared, taken = out.LeftOut, out.Notices, out.Taken
		if err != nil || chosen == "" {
			return out, err
		}
		id = chosen
	}
	defer func() {
		out.Shared, out.Taken = shared, taken && out.Pulled > 0
		out.setLeftOut(skipped)
		out.Notices = append(unshared, out.Notices...)
	}()
	if err := remote.ValidID(id); err != nil {
		return Outcome{}, err
	}
	out = Outcome{Workflow: id, Local: w.Revision}
	l, err := readLines(ctx, st, b, from, id, w)
	if err != nil {
		return out, err
	}
	defer func() { l.close() }()
	out.Remote = l.R
	if l.off > 0 && l.common != l.L && l.common != l.R {
		// Both moved: adopting the remote's line takes all of it, and this machine's copy
		// is archived whole; lost races are rare enough to read both lines again.
		l.close()
		if l, err = readFrom(ctx, st, b, id, w, 0); err != nil {
			return out, err
		}
		out.Remote = l.R
	}
	common, L, R := l.common, l.L, l.R
	switch {
	case common == L && common == R:
		return out, nil
	case common == R: // the remote is a prefix of ours: push
		head, err := push(ctx, b, id, R, l.mine)
		if err != nil {
			return out, err
		}
		out.Remote, out.Pushed = head, int(L-R)
		if s, err := mirror.Load(st); err == nil && s.Remote == from && s.Workflow == id && s.Mirrored > R {
			// By design (every machine keeps its copy), but the one who deleted the line or set
			// it back sees it return, and the others lost it meanwhile: said once, by the sync
			// that did it.
			if R == 0 {
				out.Notices = append(out.Notices, fmt.Sprintf("workflow %s was gone from %s (it held r%d at the last sync: deleted there, or %[2]s now names another repository), so this machine's copy was pushed again whole, r1 to r%[4]d",
					id, secrets.Line(from, 40), s.Mirrored, head))
			} else {
				out.Notices = append(out.Notices, fmt.Sprintf("workflow %s was back at r%d on %s (it held r%d at the last sync: set back there, or %[3]s now names another repository), so this machine pushed its later revisions again, now r%d",
					id, R, secrets.Line(from, 40), s.Mirrored, head))
			}
		}
		return out, nil
	case common == L: // ours is a prefix of the remote's: pull
		return pull(st, b, out, l, from)
	case common == 0: // no revision in common: not a race, another workflow
		// The remote holds none of this one's revisions (its line rewritten, or never this
		// workflow's): recorded, so that the status counts them all unpushed, not as synced.
		if s, err := mirror.Load(st); err == nil && s.Remote == from && s.Workflow == id {
			if err := mirror.Reached(st, from, "", 0); err != nil {
				out.Notices = append(out.Notices, fmt.Sprintf("that %s holds none of %s was not recorded, so cairn remote status counts it as synced up to r%d: %v", secrets.Line(from, 40), id, s.Mirrored, err))
			}
		}
		return out, fmt.Errorf("%w: %s on %s shares no revision with the %s active here, so it is another workflow, started elsewhere; neither is taken for the other and nothing here changed", ErrOtherWorkflow, id, secrets.Line(from, 40), id)
	default: // both moved: the remote's line was acknowledged first
		// This machine's copy goes to the archive and the remote's line takes its place in
		// one step, so a reader in another process never finds no workflow in between.
		line := func(yield func(store.LineRecord) error) error {
			return l.theirs(0, func(e Entry) error {
				return yield(store.LineRecord{Revision: e.Revision, Event: syncEvent(e, from), Snapshot: e.Snapshot})
			})
		}
		if replaying {
			in := intent{Workflow: id, Common: common, Theirs: R, Mine: L, At: time.Now().UTC(), Lost: l.lost}
			if err := writeIntent(st, in); err != nil {
				return out, err
			}
			step("intent")
		}
		info, res, err := st.AdoptLine("conflict", line, func(cur store.Workflow) error {
			repaired = append(repaired, cur.Notices...)
			if cur.ID != id || cur.Revision != w.Revision || !sameSnapshot(cur.Data, w.Data) {
				return ErrMoved // changed here since it was read: compare again
			}
			return nil
		})
		if err != nil {
			if replaying && !durable.IsNotDurable(err) {
				// Not adopted: nothing is owed (resume would find no archive either). One made
				// but not durable stands until a power loss: the replay stays owed.
				_ = clearIntent(st)
			}
			if errors.Is(err, ErrMoved) {
				return out, err
			}
			// A revision the store refused is said as the remote's to mend (read again to find it).
			var rerr error
			_ = l.theirs(0, func(e Entry) error { rerr = refused(b, id, e, err); return rerr })
			return out, cmp.Or(rerr, fmt.Errorf("keeping this machine's copy of %s while taking the remote's: %w", id, err))
		}
		step("adopted")
		repaired = append(repaired, res.Notices...)
		said, warning := engine.ArchiveReport(info)
		out.Notices = append(out.Notices, said...)
		if p := engine.PrunedLine(info); p != "" {
			out.Notices = append(out.Notices, p) // archives deleted here: the person is told which
		}
		if warning != "" {
			out.Notices = append(out.Notices, warning)
		}
		tip := l.tip
		out.Conflict = &Conflict{Common: common, Archive: info, Lost: int(L - common), Base: l.base, st: st, Theirs: tip.Snapshot}
		out.Conflict.wonBy(tip.Event, tip.Snapshot)
		out.Local, out.Pulled = res.Revision, int(R)
		out.Ended, out.ReplacedBy = endedIn(tip.Snapshot)
		return out, nil
	}
}

// readLines reads this machine's line of workflow w (id) and the remote's, from revision off+1
// on: both from the start (off 0) unless the last sync recorded in the mirror (package mirror)
// was about this workflow on this remote and both lines still hold the same revision it left
// them at. The remote's line is append-only, so the revisions before that one are the same
// on both sides; reading from there keeps a sync's cost to what changed since the last one
// rather than the whole line, every record of which carries a full snapshot. Anything else
// (another workflow under the same id, a remote line rewritten) falls back to reading all.
func readLines(ctx context.Context, st *store.Store, b remote.Backend, from, id string, w store.Workflow) (*lines, error) {
	s, err := mirror.Load(st)
	if off, ok := resumeAt(s, from, id, w); err == nil && ok {
		l, err := readFrom(ctx, st, b, id, w, off)
		if err != nil || l.common > off {
			return l, err
		}
		l.close()
	}
	return readFrom(ctx, st, b, id, w, 0)
}

// lines is what a sync read of both lines of a workflow after revision off: each line's last
// revision (L here, R on the remote) and the last they share from off on (common), with no more
// held than the sync goes on with. A line of a long workflow is hundreds of MB (every revision a
// full copy of the record), so neither is held whole: the remote's revisions are spooled, to be
// read again to pull or adopt them (theirs), and this machine's after common are read again from
// its journal to push them (mine).
type lines struct {
	off, L, R, common int64
	base              []byte // this machine's revision common, when one was read
	lost              string // lostSum of this machine's revision L, when it is after common
	tip               Entry  // the remote's revision R, when one was read
	spool             spool  // the remote's revisions off+1..R, as read
	b                 remote.Backend
	st                *store.Store
	id                string
}

// mine hands fn this machine's revisions common+1..L, oldest first, read again from its journal;
// ErrMoved when the workflow here is no longer the one read (ended, or replaced) meanwhile.
func (l *lines) mine(fn func(Entry) error) error {
	err := entries(l.id, l.common, l.L, func(take func(store.Record) error) error {
		return l.st.EachJournalSince(l.id, l.common, take)
	}, func(e Entry) error {
		if e.Revision == l.L && lostSum(e.Snapshot) != l.lost {
			return ErrMoved
		}
		return fn(e)
	})
	return movedHere(l.st, l.id, l.L, err)
}

// movedHere is err, from reading this machine's line of workflow id at revision rev, or ErrMoved
// when the workflow here is no longer that (changed, ended or replaced while the sync went on,
// which a cairn-mcp tool call may do while the remote is written): compare again.
func movedHere(st *store.Store, id string, rev int64, err error) error {
	if err != nil && !errors.Is(err, ErrMoved) {
		if cur, cerr := st.ReadWorkflow(); (cerr == nil || errors.Is(cerr, store.ErrNotFound)) && (cur.ID != id || cur.Revision != rev) {
			return ErrMoved
		}
	}
	return err
}

// theirs hands fn the remote's revisions after rev (and after off), oldest first, as read.
func (l *lines) theirs(rev int64, fn func(Entry) error) error {
	n := l.off
	return l.spool.each(func(data []byte) error {
		if n++; n <= rev {
			return nil
		}
		e, err := entryOf(l.b, l.id, remote.Record{Rev: n, Data: data})
		if err != nil {
			return err
		}
		return fn(e)
	})
}

func (l *lines) close() {
	if l != nil {
		l.spool.close()
	}
}

// readFrom reads both lines of workflow w (id) after revision off, the remote's first, whose
// error, should both fail, is the one said.
func readFrom(ctx context.Context, st *store.Store, b remote.Backend, id string, w store.Workflow, off int64) (_ *lines, err error) {
	l := &lines{off: off, L: off, R: off, common: off, b: b, st: st, id: id}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	var sums []string // of the remote's revisions, as sameSnapshot compares them
	if err := remote.Each(ctx, b, id, off, func(r remote.Record) error {
		e, err := entryOf(b, id, r)
		if err != nil {
			return err
		}
		sums, l.R, l.tip = append(sums, lostSum(e.Snapshot)), e.Revision, e
		return l.spool.add(r.Data)
	}); err != nil || w.Data == nil {
		return l, err
	}
	last, same := off, true // the last revision rebuilt here; whether all so far are the remote's
	var mineLast []byte     // this machine's last revision after common
	err = entries(w.ID, off, w.Revision, func(take func(store.Record) error) error {
		return st.EachJournalSince(w.ID, off, func(r store.Record) error { last = r.Revision; return take(r) })
	}, func(e Entry) error {
		if i := e.Revision - off - 1; same && i < int64(len(sums)) && sums[i] != "" && lostSum(e.Snapshot) == sums[i] {
			l.common, l.base = e.Revision, e.Snapshot
			return nil
		}
		same, mineLast = false, e.Snapshot
		return nil
	})
	if store.BrokenChain(err) {
		return l, brokenJournal(st, w.ID, last)
	}
	l.L, l.lost = w.Revision, lostSum(mineLast)
	return l, movedHere(st, w.ID, w.Revision, err) // while the remote's line was read
}

// brokenJournal is the sync's error when a damaged line breaks the chain of workflow id's
// journal: the revisions after the last it rebuilt (last) up to the next full line cannot be
// sent. Its step keeps the file as it is: only a copy made before the damage holds those
// revisions.
func brokenJournal(st *store.Store, id string, last int64) error {
	active, sealed := st.JournalPaths(id)
	where := active
	if _, err := os.Stat(sealed); err == nil {
		where += " or " + sealed
	}
	return &JournalError{
		Why:  fmt.Sprintf("a damaged line in this machine's journal of %s (%s) breaks its chain of changes after revision %d, so the revisions after it cannot be rebuilt or shared; the workflow goes on here", id, where, last),
		Step: RestoreStep + ", then run cairn sync again",
	}
}

// RestoreStep is the step for a damaged line in this machine's journal: only a copy made
// before the damage holds the revisions after it.
const RestoreStep = "restore the journal from a backup made before the damage, if there is one"

// JournalError is brokenJournal's: why this machine's line cannot be sent, and the step.
type JournalError struct{ Why, Step string }

func (e *JournalError) Error() string { return e.Why + ": " + e.Step }

// CheckJournal reads this machine's journal of the active workflow as far back as its next
// sync reads it (from the revision the last sync left, resumeAt) and returns brokenJournal's
// error when a damaged line breaks it there: cairn doctor names what the sync would refuse.
func CheckJournal(st *store.Store, from string) error {
	w, err := st.ReadWorkflow()
	if err != nil || w.Data == nil {
		return nil // the state checks say why, or there is nothing to send
	}
	off := int64(0)
	if s, err := mirror.Load(st); err == nil {
		off, _ = resumeAt(s, from, w.ID, w)
	}
	last := off
	if err := st.EachJournalSince(w.ID, off, func(r store.Record) error { last = r.Revision; return nil }); store.BrokenChain(err) {
		return brokenJournal(st, w.ID, last)
	}
	return nil
}

// resumeAt is the revision after which a sync of workflow id (held here as w) with from reads
// both lines, and whether that is the revision the last sync left (the mirror, s, was about
// id on from): else 0.
func resumeAt(s mirror.Settings, from, id string, w store.Workflow) (int64, bool) {
	if w.Data != nil && s.Remote == from && s.Workflow == id && s.Mirrored > 0 && s.Mirrored <= w.Revision {
		return s.Mirrored - 1, true
	}
	return 0, false
}

// pull writes the remote's revisions l read after this machine's (of b) through the store, each
// as a change whose revision follows the current one; a change made here meanwhile stops it
// (ErrMoved) without writing.
func pull(st *store.Store, b remote.Backend, out Outcome, l *lines, from string) (Outcome, error) {
	err := l.theirs(l.L, func(e Entry) error {
		res, err := st.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
			if revisionOf(cur) != e.Revision-1 {
				return nil, store.Event{}, ErrMoved
			}
			return e.Snapshot, syncEvent(e, from), nil
		})
		out.Notices = append(out.Notices, noticeMessages(res.Notices)...)
		if err != nil {
			return cmp.Or(refused(b, out.Workflow, e, err), err)
		}
		out.Local, out.Pulled = e.Revision, out.Pulled+1
		out.Ended, out.ReplacedBy = endedIn(e.Snapshot)
		return nil
	})
	return out, err
}

// EndedThere says how the workflow ended elsewhere (out.Ended, out.ReplacedBy), for the person
// and the model: "it was completed on another machine"; "" while it goes on.
func EndedThere(out Outcome) string {
	switch {
	case out.Ended == "":
		return ""
	case out.Ended == workflow.StatusExpired:
		return "it expired on another machine"
	case out.ReplacedBy != "":
		return "it was replaced on another machine by workflow " + textsafe.Line(out.ReplacedBy, 80)
	}
	return "it was " + string(out.Ended) + " on another machine"
}

// endedIn is the status a workflow's snapshot holds when it is not active, else "", and the
// workflow that replaced it (engine.ReplacedBy), if any.
func endedIn(snapshot []byte) (workflow.Status, string) {
	var r struct {
		Status workflow.Status `json:"status"`
	}
	if json.Unmarshal(snapshot, &r) != nil || r.Status == workflow.StatusActive {
		return "", ""
	}
	by := ""
	if rec, err := store.ParseRecord(snapshot); err == nil {
		by = engine.ReplacedBy(rec)
	}
	return r.Status, by
}

// refused is the error for e, a remote entry of workflow id (from b), when the store refuses
// it for what it holds (store.CheckDocument: too large, not strict JSON, a secret by
// this machine's rules, named by rule and place, never repeated), or nil for none. Every sync
// refuses it alike, so it gets b's step; the store's error (werr, the write's) is the one to say
// for any other failure to write them. A secret is blamed only when werr is its refusal: one the
// record here holds already (kept) does not refuse a change, which may fail for another reason.
func refused(b remote.Backend, id string, e Entry, werr error) error {
	err := store.CheckDocument(e.Snapshot)
	if err == nil {
		return nil
	}
	why := err.Error()
	if f, ok := errors.AsType[*secrets.Finding](err); ok {
		if wf, _ := errors.AsType[*secrets.Finding](werr); wf == nil || *wf != *f {
			return nil
		}
		why = f.Refusal("") // not the advice on where to keep one: the step is the remote's
	}
	return &entryError{fmt.Sprintf("the remote's revision %d of %s cannot be kept here (%s), so no sync can take its line", e.Revision, id, why), remote.UnreadableStep(b, id)}
}

// noticeMessages is what the store's notices say, each once.
func noticeMessages(ns []store.Notice) []string {
	var out []string
	for _, n := range ns {
		if !slices.Contains(out, n.Message) {
			out = append(out, n.Message)
		}
	}
	return out
}

// wonBy fills in c the remote's side of the race: by, its last change, and the phase and
// owner its record (snapshot) is in.
func (c *Conflict) wonBy(by store.Event, snapshot []byte) {
	var who struct {
		State string `json:"state"`
		Owner *struct {
			SessionID string `json:"session_id"`
		} `json:"owner"`
	}
	_ = json.Unmarshal(snapshot, &who) // only for the report; the store checked it
	c.By, c.State = by, who.State
	if who.Owner != nil {
		c.Session = who.Owner.SessionID
	}
}

// syncEvent is the local journal's event for a revision taken from the remote from.
func syncEvent(e Entry, from string) store.Event {
	detail := "from " + from + ": " + e.Event.Kind
	if e.Event.Detail != "" {
		detail += " " + e.Event.Detail
	}
	return store.Event{Kind: engine.SyncEvent, Detail: detail}
}

// remoteEvent is the remote's event that syncEvent recorded as ev, taken from from; ev itself
// when it is no such record.
func remoteEvent(ev store.Event, from string) store.Event {
	if f, remote, ok := PulledEvent(ev); ok && f == from {
		return remote
	}
	return ev
}

// PulledEvent reads the event a sync recorded for a revision it took from a remote (ev, of
// kind engine.SyncEvent): the remote's name (a git remote name holds no ':') and the event as the remote
// had it, of its own kind and detail; ok is false for any other event.
func PulledEvent(ev store.Event) (from string, remote store.Event, ok bool) {
	rest, ok := strings.CutPrefix(ev.Detail, "from ")
	if ev.Kind != engine.SyncEvent || !ok {
		return "", ev, false
	}
	from, rest, ok = strings.Cut(rest, ": ")
	if !ok {
		return "", ev, false
	}
	kind, detail, _ := strings.Cut(rest, " ")
	return from, store.Event{Kind: kind, Detail: detail}, true
}

// entries hands fn, as entries, the records of a workflow's journal that each hands over (every
// one with its state, oldest first) that are its revisions after+1 to rev, and fails unless it
// holds them all.
func entries(id string, after, rev int64, each func(func(store.Record) error) error, fn func(Entry) error) error {
	n := after
	if err := each(func(r store.Record) error {
		if r.Revision != n+1 || r.Revision > rev {
			return nil
		}
		n++
		return fn(Entry{Revision: r.Revision, At: r.At, Event: r.Event, Snapshot: r.Snapshot})
	}); err != nil {
		return err
	}
	if n != rev {
		return fmt.Errorf("this machine's journal of %s does not hold every revision up to %d: it cannot be synced", id, rev)
	}
	return nil
}

// read hands fn, one at a time as b reads them, the remote's records of workflow id after
// revision rev as entries (a line is never held whole here unless fn keeps it).
func read(ctx context.Context, b remote.Backend, id string, rev int64, fn func(Entry) error) error {
	return remote.Each(ctx, b, id, rev, func(r remote.Record) error {
		e, err := entryOf(b, id, r)
		if err != nil {
			return err
		}
		return fn(e)
	})
}

// entryOf is r, a record of the remote's line (of b) of workflow id, as an entry. One that is
// not a Cairn entry of that workflow fails every sync alike, so its error is b's step that ends
// it.
func entryOf(b remote.Backend, id string, r remote.Record) (Entry, error) {
	// A revision is a whole record: without one, writing it would change nothing here
	// while the sync counted it as taken.
	var e Entry
	if err := json.Unmarshal(r.Data, &e); err != nil || e.Revision != r.Rev ||
		len(e.Snapshot) == 0 || e.Snapshot[0] != '{' {
		return e, &entryError{fmt.Sprintf("the remote's revision %d of %s is not a Cairn entry, so no sync can read its line", r.Rev, id), remote.UnreadableStep(b, id)}
	}
	// The record must be that revision of that workflow: with nothing active here, the
	// store takes whatever workflow the first one holds, even one archived here (which a
	// sync never takes back), at whatever revision it says.
	var m struct {
		ID  string `json:"workflow_id"`
		Rev int64  `json:"revision"`
	}
	if json.Unmarshal(e.Snapshot, &m) != nil || m.ID != id || m.Rev != r.Rev {
		return e, &entryError{fmt.Sprintf("the remote's revision %d of %s holds another workflow or revision (%.64q r%d), so no sync can read its line", r.Rev, id, m.ID, m.Rev), remote.UnreadableStep(b, id)}
	}
	return e, nil
}

// entryError is read's error: why a remote record is not a Cairn entry of its workflow, and
// the backend's step for a person, which names the remote's refs and git commands (not for the
// model: notices leave it out). It is remote.ErrUnreadable: every sync fails on it alike.
type entryError struct{ why, step string }

func (e *entryError) Error() string        { return e.why + ": " + e.step }
func (e *entryError) Is(target error) bool { return target == remote.ErrUnreadable }

// setLeftOut records the lines left out, in LeftOut and by id in Unreadable.
func (o *Outcome) setLeftOut(l []remote.LeftOut) {
	o.LeftOut, o.Unreadable = l, nil
	for _, x := range l {
		o.Unreadable = append(o.Unreadable, x.ID)
	}
}

// idle is a sync with no active workflow here. It first shares what this machine finished:
// for each workflow the remote holds that was archived here (completed, expired, replaced;
// not a lost race), the archived revisions the remote lacks are appended, so other machines
// see the end. Then it chooses the workflow to take: want, or the remote's only one neither
// archived here nor finished by the machine that ended it (unfinished). A workflow archived
// here is never taken back from the remote, except one that expired here whose remote line
// another machine moved on and is live (shareArchive): that one is taken before any other, its
// archive kept, and said in out.Notices. The remote's only one is not taken unasked (Background)
// while a live session on another machine works in it (ErrRunningElsewhere). Lines that cannot be
// read are left out, and named in out.Unreadable and out.LeftOut whatever else it says.
func idle(ctx context.Context, st *store.Store, b remote.Backend, from, want string, unasked bool) (shared int, chosen string, out Outcome, err error) {
	h, err := b.Heads(ctx)
	var skipped []remote.LeftOut
	if ue, ok := errors.AsType[*remote.UnreadableError](err); ok {
		skipped, err = ue.LeftOut(), nil
	}
	if err != nil {
		return 0, "", out, err
	}
	var said []string // ends finished here that could not be shared
	defer func() {
		out.setLeftOut(skipped)
		out.Notices = append(said, out.Notices...)
	}()
	archives, err := EndsHere(st)
	if err != nil {
		return 0, "", out, err
	}
	last, _ := mirror.Load(st) // the workflow the last sync was about, if it was this remote's
	if last.Remote != from {
		last.Workflow = ""
	}
	done := map[string]bool{}
	backs := map[string]string{} // expired here, live on the remote: what taking each back says
	takes := func(id string) (int, string, Outcome, error) {
		n, back := backs[id]
		if back {
			said = append(said, n)
		}
		out.Taken = !back && !done[id]
		return shared, id, out, nil
	}
	for _, a := range archives {
		if h[a.WorkflowID] == 0 {
			continue
		}
		done[a.WorkflowID] = true
		if h[a.WorkflowID] >= a.Revision && a.WorkflowID != last.Workflow && a.WorkflowID != want {
			// The remote holds as many revisions as the archive or more: there is nothing to
			// share, and reading both lines whole at every idle sync would say so again. The
			// first sync since it finished here (the last one was about it), or one naming it,
			// reads them once: the remote's line may have moved apart from this machine's end,
			// which is told, or taken back.
			continue
		}
		n, notice, back, err := shareArchive(ctx, st, b, a, from, a.WorkflowID == want)
		if errors.Is(err, ErrMoved) || err != nil && ctx.Err() != nil {
			return shared, "", out, err
		}
		if back {
			// Expired here while another machine kept it going: it is the remote's to take
			// again, and said so only by the sync that takes it.
			done[a.WorkflowID] = false
			backs[a.WorkflowID] = notice
		} else if notice != "" {
			said = append(said, notice)
		}
		// Any other failure leaves that end unshared: a line that can never take it must not
		// stop every idle sync.
		shared += n
	}
	open := remote.Heads{}
	for k, v := range h {
		if !done[k] {
			open[k] = v
		}
	}
	if want != "" {
		if done[want] {
			return shared, "", Outcome{Workflow: want, Shared: shared, ArchivedHere: true}, nil
		}
		if h[want] == 0 && remote.ValidID(want) == nil && !slices.ContainsFunc(skipped, func(l remote.LeftOut) bool { return l.ID == want }) {
			// Taking it would find nothing and say "up to date at r0".
			if open, _, err = unfinished(ctx, st, b, from, open); err != nil {
				return shared, "", out, err
			}
			return shared, "", Outcome{Shared: shared, Available: open}, ErrNoSuch
		}
		return takes(want)
	}
	if len(backs) == 1 { // this machine's own workflow before any other the remote holds
		for k := range backs {
			return takes(k)
		}
	}
	open, running, err := unfinished(ctx, st, b, from, open)
	if err != nil {
		return shared, "", out, err
	}
	switch len(open) {
	case 0:
		return shared, "", Outcome{Shared: shared, Available: open}, nil
	case 1:
		for k := range open {
			chosen = k
		}
		if running[chosen] && unasked {
			// Another machine's, in use there: offered, never put in this machine's slot
			// unasked, where the next start_workflow would find it and could replace it.
			return shared, "", Outcome{Shared: shared, Available: open}, ErrRunningElsewhere
		}
		return takes(chosen)
	}
	return shared, "", Outcome{Shared: shared, Available: open}, ErrChoose
}

// EndsHere is the end of each workflow archived here (completed, expired, archived, replaced),
// newest first: its newest archive that is not a lost race's, which holds this machine's copy
// rather than its end.
func EndsHere(st *store.Store) ([]store.ArchiveInfo, error) {
	archives, err := st.ListArchives()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(archives, func(a store.ArchiveInfo) bool { // newest first: the first of each id is its end
		if a.Reason == "conflict" || seen[a.WorkflowID] {
			return true
		}
		seen[a.WorkflowID] = true
		return false
	}), nil
}

// unfinished is open (the remote from's lines, for st) without those whose tip is a finished
// workflow (completed, expired, archived by the machine that ended it): none is a workflow to go
// on with, so an idle sync neither takes one into the active slot, where it read as the
// workflow in progress, nor offers it (a sync naming it still takes it). It reads each line's
// last record only; a line whose tip cannot be read stays, for the sync that takes it to say why.
// running holds, of those kept, the ones a live session owns (none is active here, so that
// session is another machine's).
func unfinished(ctx context.Context, st *store.Store, b remote.Backend, from string, open remote.Heads) (keep remote.Heads, running map[string]bool, err error) {
	keep, running = remote.Heads{}, map[string]bool{}
	now := time.Now()
	for id, h := range open {
		key := finishedKey{st.Dir(), from, id, h}
		if _, ok := finishedSeen.Load(key); ok {
			continue
		}
		var es []Entry
		err := read(ctx, b, id, h-1, func(e Entry) error { es = append(es, e); return nil })
		if err != nil && ctx.Err() != nil {
			return nil, nil, err
		}
		if err == nil && len(es) == 1 {
			r, err := store.ParseRecord(es[0].Snapshot)
			if err == nil && r.Status.Valid() && r.Status != workflow.StatusActive {
				finishedSeen.Store(key, struct{}{})
				continue
			}
			if err == nil && workflow.OwnerLive(r, workflow.Actor{}, now, workflow.DefaultLiveWindow) {
				running[id] = true
			}
		}
		keep[id] = h
	}
	return keep, running, nil
}

// finishedSeen holds the lines unfinished found finished, by state directory, remote, id and
// head: a line only grows, so the idle syncs of a long-lived process (cairn-mcp's, every few
// seconds) fetch each finished line once rather than at every run.
var finishedSeen sync.Map // finishedKey -> struct{}

type finishedKey struct {
	dir, from, id string
	head          int64
}

// shareLeft shares the end of the workflow the last sync against from was about (package
// mirror) when it has been archived here since, as idle does: a workflow completed or replaced
// here and followed at once by the active one, id, would otherwise never have its end pushed,
// and the machines still on it would go on alone.
func shareLeft(ctx context.Context, st *store.Store, b remote.Backend, from, id string) (int, string, error) {
	s, err := mirror.Load(st)
	if err != nil || s.Remote != from || s.Workflow == "" || s.Workflow == id || s.Mirrored == 0 {
		return 0, "", nil // nothing known to be shared, or the active workflow itself
	}
	archives, err := EndsHere(st)
	if err != nil {
		return 0, "", err
	}
	for _, a := range archives {
		if a.WorkflowID == s.Workflow {
			n, notice, _, err := shareArchive(ctx, st, b, a, "", false)
			return n, notice, err
		}
	}
	return 0, "", nil
}

// shareArchive appends the archived revisions of a the remote lacks, when the remote's line is
// a prefix of the archive's; otherwise it leaves both alone. When the remote's line moved apart
// from the archive's (another machine changed the workflow after the revisions this one
// shared), a workflow that expired here, or any the sync names (named), is to be taken back
// from from while the remote's line is still live (active, its TTL not passed), when from is
// not empty: back is set and notice says so. Otherwise, and when the remote holds a revision
// that is not a Cairn entry of it, notice says that this end stays here, and how to take the
// workflow back when it is live.
func shareArchive(ctx context.Context, st *store.Store, b remote.Backend, a store.ArchiveInfo, from string, named bool) (n int, notice string, back bool, err error) {
	// Of the two lines only sums are kept, the remote's last record, and how far its line is the
	// archive's.
	line, err := archiveLine(st, a.Dir, a.WorkflowID, 0, a.Revision)
	var sums []string
	if err == nil {
		err = line(func(e Entry) error { sums = append(sums, lostSum(e.Snapshot)); return nil })
	}
	if err != nil {
		return 0, "", false, err
	}
	var R, common int64
	var last Entry
	err = read(ctx, b, a.WorkflowID, 0, func(e Entry) error {
		if common == R && R < int64(len(sums)) && sums[R] != "" && lostSum(e.Snapshot) == sums[R] {
			common++
		}
		R, last = R+1, e
		return nil
	})
	if ee, ok := errors.AsType[*entryError](err); ok {
		// A line that cannot take it: said, so that the end is not left unshared in silence
		// (without the step, whose git commands are a person's: the notice reaches the model).
		return 0, fmt.Sprintf("workflow %s, finished here at r%d, was not shared: %s", a.WorkflowID, a.Revision, ee.why), false, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	if common != R {
		if common >= int64(len(sums)) {
			return 0, "", false, nil
		}
		tip, err := store.ParseRecord(last.Snapshot)
		if err != nil {
			tip = &workflow.Record{} // only for the notice
		}
		if from != "" && (a.Reason == "expired" || named) && live(tip) {
			if a.Reason == "expired" {
				notice = fmt.Sprintf("workflow %s expired here at r%d, but another machine changed it after r%d, so it was taken back from %s and is active again; this machine's expired copy stays in archive/%s",
					a.WorkflowID, a.Revision, common, from, a.Dir)
			} else {
				notice = fmt.Sprintf("workflow %s, finished here at r%d, was changed by another machine after r%d, so it was taken back from %s as asked and is active again; this machine's copy stays in archive/%s",
					a.WorkflowID, a.Revision, common, from, a.Dir)
			}
			if common < a.Revision-1 { // changes made here before it ended, never pushed
				notice += fmt.Sprintf(" with the changes it made after r%d, which were not replayed: %s%s and make again what is still wanted", common, AskHistory, a.Dir)
			}
			return 0, notice, true, nil
		}
		notice = fmt.Sprintf("workflow %s, finished here at r%d, was not shared: the remote's line of it was changed elsewhere after r%d and is at r%d, %s; this machine's end is kept in archive/%s",
			a.WorkflowID, a.Revision, common, R, textsafe.Line(string(tip.Status), 40), a.Dir)
		if from != "" && live(tip) { // an idle sync's: a sync naming it can take it
			notice += "; to go on with it here, " + AskSync + a.WorkflowID
		}
		return 0, notice, false, nil
	}
	if R >= int64(len(sums)) {
		return 0, "", false, nil
	}
	head, err := push(ctx, b, a.WorkflowID, R, func(fn func(Entry) error) error {
		return line(func(e Entry) error { // the archive's revisions the remote lacks
			if e.Revision > R {
				return fn(e)
			}
			return nil
		})
	})
	if err != nil {
		return 0, "", false, err
	}
	return int(head - R), "", false, nil
}

// AskHistory is the step of a take-back's notice for this machine's changes left in the
// expired copy's archive, in the model's words (cairn sync puts the person's), followed by
// that archive's directory: cairn history reads an archive by it.
const AskHistory = "ask the user to list them with cairn history "

// AskSync is the step that takes back a workflow finished here which another machine goes on
// with, in the model's words (cairn sync puts the person's), followed by its id.
const AskSync = "ask the user to run cairn sync "

// live says whether r, the remote's tip of a workflow, is one a machine could go on with now:
// active, its TTL not passed (one stale everywhere stays expired).
func live(r *workflow.Record) bool {
	expired, err := r.Expired(time.Now())
	return r.Status == workflow.StatusActive && err == nil && !expired
}

// push appends the entries each hands over to the remote's line of id after revision after, one
// at a time as each makes them (a long line is not held whole); a head that moved meanwhile is
// ErrMoved.
func push(ctx context.Context, b remote.Backend, id string, after int64, each func(func(Entry) error) error) (int64, error) {
	head, err := b.Append(ctx, id, after, func(yield func([]byte) error) error {
		return each(func(e Entry) error {
			data, err := json.Marshal(e)
			if err != nil {
				return err
			}
			return yield(data)
		})
	})
	if errors.Is(err, remote.ErrConflict) {
		return 0, ErrMoved
	}
	return head, err
}

// archiveLine hands fn the entries of the archive in dir (workflow id, after revision after up
// to rev) one at a time, oldest first, built again at each call (a long workflow's line, every
// revision a full copy of the record, is not held whole).
func archiveLine(st *store.Store, dir, id string, after, rev int64) (func(fn func(Entry) error) error, error) {
	if _, err := st.ReadArchiveRecord(dir); err != nil {
		return nil, err
	}
	each := func(take func(store.Record) error) error { return st.EachArchiveState(dir, after, take) }
	return func(fn func(Entry) error) error { return entries(id, after, rev, each, fn) }, nil
}

func revisionOf(doc []byte) int64 {
	if doc == nil {
		return 0
	}
	var m struct {
		Revision int64 `json:"revision"`
	}
	if json.Unmarshal(doc, &m) != nil {
		return -1
	}
	return m.Revision
}

// sameSnapshot compares two records as JSON text without insignificant space: the journal
// and the wire may indent differently.
func sameSnapshot(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
