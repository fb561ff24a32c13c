// Package claim gives a task exactly one owner among machines sharing a remote: a claim is a
// record appended to a shared line with the remote's conditional append, so of two machines
// claiming after the same head one lands and the other, replaying the line, sees the task taken.
//
// The claim's revision is its fencing token: work done under a claim is valid only while that
// revision is the task's current claim (Valid), so a holder that was taken over cannot write
// behind the new owner's back.
//
// A lease decides only when a stale claim may be taken over, and it is measured on each
// machine's own clock from the moment that machine saw the claim (or its last renewal) on the
// line, never by comparing timestamps written by another machine: clocks set hours apart give
// the same decisions. A claim and its renewals carry the holder's lease, and a machine waits
// for the longer of its own and the holder's (up to a day), since the holder renews by its
// own. A machine that has just started has seen every claim "now", so it waits a whole lease
// before taking anything over, unless it restores what an earlier run saw (State, Restore);
// a claim or renewal of its own it reads back (an earlier run saved nothing since) counts from
// the time it wrote in it, by this same clock, before it could land. Times kept between runs
// are the wall clock's, which may be set forward or back between them; given a clock that
// counts from boot (Uptime), a run of the same boot corrects them by that step.
// The holder may release a claim, freeing the task at once, or release it as done: the task
// was finished there, and no machine claims it again (an older Cairn reads it as a release).
//
// A line is a workflow id's, and each entry names the workflow instance it is about (Of), so
// two workflows started apart under one id share the line but not their tasks' claims.
package claim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// entry is one record on a claims line.
type entry struct {
	Op    string `json:"op"` // "claim", "renew" or "release"
	Task  string `json:"task"`
	Owner string `json:"owner"`
	// Prev is the claim this one replaces: 0 for a task nobody held, else the revision of
	// the stale claim being taken over. For "renew" and "release" it is the claim itself.
	Prev int64 `json:"prev"`
	// At is the writer's clock when it wrote the entry: a claim's is shown to people
	// ("claimed 5m ago"); another machine's is used to decide nothing, since clocks differ
	// between machines, but the writer's own Claimer reading it back counts the lease from it
	// (see Refresh). It also makes each entry unique (see mark).
	At time.Time `json:"at,omitzero"`
	// Lease is the writer's lease, on a claim or renewal (absent in what an older Cairn
	// wrote): the holder renews by it, so others wait at least that long (see leaseOf).
	Lease time.Duration `json:"lease,omitempty"`
	// Workflow is the writer's workflow instance (see Of): two workflows started apart under
	// one id share its line, and each counts only its own entries and those that name none
	// (what an older Cairn wrote).
	Workflow string `json:"wf,omitempty"`
	// Outcome is, on a release, why the holder gave the task up: "done" when it finished it,
	// so no machine claims it again before it reads the done; absent otherwise, and in what an
	// older Cairn wrote, which reads a release that has one as any release.
	Outcome string `json:"outcome,omitempty"`
}

// done is the Outcome of a release whose task was finished.
const done = "done"

// maxHonoredLease bounds the holder's lease others wait for, so that a claim set to hold for
// ever does not.
const maxHonoredLease = 24 * time.Hour

// maxOwner bounds an owner's length on the line, far above any a Cairn makes.
const maxOwner = 1 << 10

// Holder is a task's current claim.
type Holder struct {
	Owner string    `json:"owner"`
	Rev   int64     `json:"rev"`         // the claim's revision: the fencing token
	At    time.Time `json:"at,omitzero"` // the claimer's clock when it claimed; for display only
	// Lease is the lease the holder claimed or last renewed with; zero when not known.
	Lease time.Duration `json:"lease,omitempty"`
}

// State is what a Claimer knows of its line, for a process that claims and exits (a command)
// to keep between runs, so that the lease counts from when this machine first saw a claim
// rather than from each start.
type State struct {
	Head int64 `json:"head"`
	// Mark identifies the record at Head (see mark), so a line deleted on the host and grown
	// again by others is told from the one read. Empty in what an older Cairn saved.
	Mark    string            `json:"mark,omitempty"`
	Holders map[string]Holder `json:"holders,omitempty"`
	// Done holds, for each task whose claim was last released as done (see Finished), that
	// claim, with the release's time. Absent in what an older Cairn saved.
	Done map[string]Holder    `json:"done,omitempty"`
	Seen map[string]time.Time `json:"seen,omitempty"`
	// Clock is the wall clock's reading of the boot Seen was saved in, when known: a run of
	// the same boot shifts Seen by as much as the wall clock was set since.
	Clock *Reading `json:"clock,omitempty"`
	// Extra holds the members a newer Cairn wrote that this one has no field for.
	Extra map[string]json.RawMessage `json:"-"`
}

// stateJSON is State without its methods, for workflow.EncodeKnown and DecodeKnown.
type stateJSON State

func (s State) MarshalJSON() ([]byte, error) { return workflow.EncodeKnown(stateJSON(s), s.Extra) }
func (s *State) UnmarshalJSON(b []byte) error {
	return workflow.DecodeKnown(b, (*stateJSON)(s), &s.Extra)
}

// Reading ties the wall clock to a clock that counts from boot and is never set (Uptime).
type Reading struct {
	Boot string    `json:"boot"`
	Base time.Time `json:"base"` // the wall clock's time minus the time since boot, as read
}

// HeldError reports a task another owner holds under a lease that has not run out.
type HeldError struct {
	Task   string
	Holder Holder
	Left   time.Duration // how long until this machine may take it over, if not renewed
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("claim: task %s is held by %s (claim r%d); it may be taken over if not renewed within %s",
		e.Task, e.Holder.Owner, e.Holder.Rev, e.Left.Round(time.Second))
}

// ErrHeld is what a *HeldError matches with errors.Is.
var ErrHeld = errors.New("task held by another owner")

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// DoneError reports a task whose holder released its claim as done: finished on that machine,
// whose done this one may not have read yet.
type DoneError struct {
	Task string
	By   Holder // the claim released as done, with the release's time
}

func (e *DoneError) Error() string {
	return fmt.Sprintf("claim: task %s was finished by %s (claim r%d)", e.Task, e.By.Owner, e.By.Rev)
}

// ErrFenced reports work under a claim that is no longer the task's current one.
var ErrFenced = errors.New("claim: this claim was taken over; stop and re-read the task")

// Claimer claims tasks on one line of a remote for one owner. It is not safe for concurrent
// use; each machine (or process) has its own.
type Claimer struct {
	b     remote.Backend
	line  string
	owner string
	wf    string // the workflow instance its entries name and it counts (see Of); "" for any
	lease time.Duration
	now   func() time.Time // this machine's clock; only differences between its readings count
	// uptime is this boot's name and the time since it, never set; nil or !ok where unknown.
	uptime func() (boot string, up time.Duration, ok bool)
	clock  *Reading // the reading seen's times were restored on, if any (see frame)

	head    int64
	mark    string // of the record at head, "" when not known
	holders map[string]Holder
	done    map[string]Holder    // the claims released as done (State.Done)
	seen    map[string]time.Time // when this machine saw the task's claim or renewal land
	// taken holds, for each task whose claim of this owner another owner's claim replaced in
	// what this Claimer read (not in a State it was restored from), that claim; a claim of
	// this owner's again forgets it.
	taken map[string]Holder
	// replaced holds, for each task whose last TryClaim here took another owner's claim over,
	// that claim.
	replaced map[string]Holder
}

// New returns a Claimer for owner on the line (a workflow id) of b. now is the local clock.
func New(b remote.Backend, line, owner string, lease time.Duration, now func() time.Time) *Claimer {
	return &Claimer{b: b, line: line, owner: owner, lease: lease, now: now,
		holders: map[string]Holder{}, done: map[string]Holder{}, seen: map[string]time.Time{}, taken: map[string]Holder{}, replaced: map[string]Holder{}}
}

// Of makes c write wf, the instance of the workflow the line is about, in its entries, and
// count only the entries that name wf or none: the line is the workflow id's, and two
// workflows started apart under one id (which sync refuses to take for each other) would
// otherwise hold and take each other's tasks of the same id. It returns c.
func (c *Claimer) Of(wf string) *Claimer {
	c.wf = wf
	return c
}

// Uptime gives c a clock that counts from boot and is never set, with the boot's name, so that
// the times a State keeps survive the wall clock being set between runs of one boot: a claim
// seen 20 minutes ago must not look an hour old, and free to take over, to a run after the
// clock was set 40 minutes forward. It returns c.
func (c *Claimer) Uptime(f func() (boot string, up time.Duration, ok bool)) *Claimer {
	c.uptime = f
	return c
}

// settled is the least difference between the wall clock and the clock since boot (or the
// monotonic one) taken as the wall clock set: two clocks read a moment apart differ by less, and
// the times saved stay as they were, so a call that changes nothing rewrites nothing.
const settled = time.Second

// reading is the wall clock's reading of this boot; nil when not known.
func (c *Claimer) reading() *Reading {
	if c.uptime == nil {
		return nil
	}
	boot, up, ok := c.uptime()
	if !ok || boot == "" {
		return nil
	}
	return &Reading{Boot: boot, Base: c.now().Add(-up).Round(0)}
}

// frame returns how far the wall clock was set since it read r, when r is of this boot (zero
// otherwise, or when by less than settled), and the reading to save times with from now on: r
// itself when not set since.
func (c *Claimer) frame(r *Reading) (time.Duration, *Reading) {
	cur := c.reading()
	if cur == nil || r == nil || r.Boot != cur.Boot {
		return 0, cur
	}
	if step := cur.Base.Sub(r.Base); step >= settled || step <= -settled {
		return step, cur
	}
	return 0, r
}

// seenOf is s.Seen on the wall clock as it reads now (see frame), and the reading that goes
// with it. A zero time (seen at an unknown time) stays zero.
func (c *Claimer) seenOf(s State) (map[string]time.Time, *Reading) {
	step, r := c.frame(s.Clock)
	seen := make(map[string]time.Time, len(s.Seen))
	for task, at := range s.Seen {
		if !at.IsZero() {
			at = at.Add(step)
		}
		seen[task] = at
	}
	return seen, r
}

// rewound reports an append refused because the remote's line is shorter than what this
// Claimer read (it was deleted or rewound on the host), and then forgets what it read, so the
// next Refresh reads the line again from the start.
func (c *Claimer) rewound(err error) bool {
	var ce *remote.ConflictError
	if !errors.As(err, &ce) || ce.Current >= c.head {
		return false
	}
	c.forget()
	return true
}

// maxRewinds bounds how often one call reads again a line its appends found rewound: a line
// deleted on the host is read again at once, but a host whose pushes keep finding the line
// shorter than its reads show (reads served from an older copy) would be read and pushed to
// until the call's time ran out.
const maxRewinds = 3

// again reports whether a call that found its line rewound (rewound) *n times before may read
// it again, after a pause past the first time, and counts this one.
func again(ctx context.Context, n *int) bool {
	if *n >= maxRewinds {
		return false
	}
	if *n > 0 {
		pause(ctx, *n-1)
	}
	*n++
	return true
}

// stalls counts the lost races of one call after which the line, read again, held nothing new:
// a host whose pushes say the line moved while its reads show it as it was would otherwise be
// read and pushed to until the call's time ran out. Another machine's append is read, and
// tried after.
type stalls struct {
	err error // the last lost race's, not yet read after
	at  int64 // the head it was written after
	n   int
}

// conflict records err, an append's after head that another writer's seemed to beat.
func (s *stalls) conflict(err error, head int64) { s.err, s.at = err, head }

// read is called with the head the line was read again to: it returns the lost race's error
// once maxRewinds reads in a row after one found nothing new.
func (s *stalls) read(head int64) error {
	if s.err != nil && head != s.at {
		s.n = 0 // another's append was read: the races lost are real
	} else if s.err != nil {
		if s.n++; s.n >= maxRewinds {
			return s.err
		}
	}
	s.err = nil
	return nil
}

// forget drops what was read of the line, so that it is read again from the start.
func (c *Claimer) forget() {
	c.head, c.mark = 0, ""
	clear(c.holders)
	clear(c.done)
	clear(c.seen)
	clear(c.taken)
}

// mark identifies a record: every entry this package writes holds its writer's owner (with a
// random tag) and its clock to the nanosecond, so two lines do not hold the same record at the
// same revision.
func mark(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// Restore makes a new Claimer start from a State saved by an earlier one on the same line. A
// claim it has no time seen for, or saw after this clock's now (the clock was set back since),
// was seen at an unknown time: another owner's counts from now, as on a machine that has just
// started, and this owner's is due for renewal and may have lapsed.
func (c *Claimer) Restore(s State) {
	c.head, c.mark = s.Head, s.Mark
	maps.Copy(c.holders, s.Holders)
	maps.Copy(c.done, s.Done)
	now := c.now()
	seen, clock := c.seenOf(s)
	c.clock = clock
	for task, h := range s.Holders {
		at, ok := seen[task]
		switch {
		case !ok || at.After(now):
			at = now
			if h.Owner == c.owner {
				at = time.Time{}
			}
		case !at.IsZero():
			at = now.Add(at.Sub(now)) // with now's monotonic reading: see seenNow
		}
		c.seen[task] = at
	}
}

// State returns what the Claimer knows, for Restore.
func (c *Claimer) State() State {
	_, clock := c.frame(c.clock)
	return State{Head: c.head, Mark: c.mark, Holders: c.Holders(), Done: maps.Clone(c.done), Seen: c.seenNow(), Clock: clock}
}

// seenNow is c.seen on the wall clock as it reads now: each time holds a monotonic reading
// (read, or restored, in this process), by which it stays put when the wall clock was set since.
func (c *Claimer) seenNow() map[string]time.Time {
	now := c.now()
	seen := make(map[string]time.Time, len(c.seen))
	for task, at := range c.seen {
		if set := now.Sub(at.Round(0)) - now.Sub(at); !at.IsZero() && (set >= settled || set <= -settled) {
			at = now.Add(-now.Sub(at))
		}
		seen[task] = at.Round(0)
	}
	return seen
}

// TryClaim makes owner the task's holder and returns the fencing token. It returns it at once
// if owner already holds the task, a *HeldError if another owner holds it under a live lease,
// a *DoneError if its last claim was released as done (Finished), and takes a stale claim over
// otherwise. It is for a caller that can go on without the remote
// (a tool that works offline): when the line cannot be read before anything was appended, it
// returns that error at once. After an append of unknown outcome (a dropped connection) it
// reads the line, retrying that read until ctx ends, so a claim that landed is found rather
// than made twice; one that did not land returns the append's error rather than trying again
// (a host that refuses the ref would refuse it every time).
func (c *Claimer) TryClaim(ctx context.Context, task string) (int64, error) {
	delete(c.replaced, task)
	var unknown error // the error of an append of ours that may have landed
	rewinds := 0
	var lost stalls
	for attempt := 0; ; attempt++ {
		if err := c.Refresh(ctx); err != nil {
			if ctx.Err() != nil || unknown == nil {
				return 0, err
			}
			pause(ctx, attempt)
			continue
		}
		if err := lost.read(c.head); err != nil {
			return 0, err
		}
		if by, ok := c.done[task]; ok {
			return 0, &DoneError{Task: task, By: by}
		}
		e := entry{Op: "claim", Task: task, Owner: c.owner, At: c.now().UTC(), Lease: c.lease}
		h, held := c.holders[task]
		if held {
			if h.Owner == c.owner {
				return h.Rev, nil
			}
			if err := c.Held(task); err != nil {
				return 0, err
			}
			e.Prev = h.Rev
		}
		if unknown != nil {
			return 0, unknown // the line says it did not land
		}
		err := c.append(ctx, e)
		if err == nil {
			if held {
				c.replaced[task] = h
			}
			return c.head, nil
		}
		if c.rewound(err) {
			if !again(ctx, &rewinds) {
				return 0, err
			}
			continue
		}
		if !errors.Is(err, remote.ErrConflict) {
			if ctx.Err() != nil {
				return 0, err
			}
			unknown = err
		} else {
			lost.conflict(err, c.head)
		}
		pause(ctx, attempt)
		// Lost the race or unknown: the line says which.
	}
}

// Held returns a *HeldError when, as of the last Refresh, another owner holds task under a
// lease that has not run out on this machine's clock; nil otherwise.
func (c *Claimer) Held(task string) error {
	h, ok := c.holders[task]
	if !ok || h.Owner == c.owner {
		return nil
	}
	if left := c.leaseOf(h) - c.now().Sub(c.seen[task]); left > 0 {
		return &HeldError{Task: task, Holder: h, Left: left}
	}
	return nil
}

// leaseOf is how long this machine waits, from when it saw h's claim or last renewal, before
// taking it over: its own lease, or the holder's when longer (up to maxHonoredLease), since the
// holder renews by its own.
func (c *Claimer) leaseOf(h Holder) time.Duration {
	return max(c.lease, min(h.Lease, maxHonoredLease))
}

// Lapsed reports whether this owner's claim of task may have been taken over unseen: as of the
// last Refresh it is this owner's, and its claim or last renewal landed, by this machine's
// clock, at least as long ago as other machines wait before taking it over (the lease it
// carries, up to maxHonoredLease; this Claimer's own when it carries none).
func (c *Claimer) Lapsed(task string) bool {
	h, ok := c.holders[task]
	return ok && h.Owner == c.owner && c.now().Sub(c.seen[task]) >= c.takeoverAfter(h)
}

// Due reports whether this owner's claim of task is due for renewal: as of the last Refresh it
// is this owner's, and its claim or last renewal landed, by this machine's clock, more than a
// quarter of the shorter of this Claimer's lease and the one it carries ago (the renewal may
// come from a process set to a longer lease than the claim's: other machines wait the claim's).
func (c *Claimer) Due(task string) bool {
	h, ok := c.holders[task]
	return ok && h.Owner == c.owner && c.now().Sub(c.seen[task]) > min(c.lease, c.takeoverAfter(h))/4
}

// takeoverAfter is the shortest other machines wait, from when they saw h's claim or last
// renewal, before taking it over: the lease it carries, up to maxHonoredLease (this Claimer's
// own when it carries none).
func (c *Claimer) takeoverAfter(h Holder) time.Duration {
	if wait := min(h.Lease, maxHonoredLease); wait > 0 {
		return wait
	}
	return c.lease
}

// Release gives up the claim fence, so another machine may claim the task at once rather
// than after the lease. It returns ErrFenced when fence is no longer the task's claim (it was
// taken over: the work done under it is not the task's) and nil when it was released.
func (c *Claimer) Release(ctx context.Context, task string, fence int64) error {
	return c.one(ctx, "release", task, fence)
}

// ReleaseAll is Release of each task's fence in one append, those of the tasks in finished
// as done (see Finished); a fence no longer its task's claim is left out.
func (c *Claimer) ReleaseAll(ctx context.Context, fences map[string]int64, finished map[string]bool) error {
	_, err := c.holderAppend(ctx, "release", fences, finished)
	return err
}

// Finished returns the claim of task its holder released as done, with the release's time, when
// that was the last change of its claim as of the last Refresh: the task was finished there,
// and no machine claims it again (TryClaim).
func (c *Claimer) Finished(task string) (Holder, bool) {
	h, ok := c.done[task]
	return h, ok
}

// RenewAll tells other machines the holder of each task's fence is alive, restarting their
// lease clocks, in one append; a fence no longer its task's claim is left out.
func (c *Claimer) RenewAll(ctx context.Context, fences map[string]int64) error {
	_, err := c.holderAppend(ctx, "renew", fences, nil)
	return err
}

// one is holderAppend of one task's fence, ErrFenced when it is no longer the task's claim.
func (c *Claimer) one(ctx context.Context, op, task string, fence int64) error {
	fenced, err := c.holderAppend(ctx, op, map[string]int64{task: fence}, nil)
	if err == nil && fenced > 0 {
		return ErrFenced
	}
	return err
}

// holderAppend appends op for the holder of each fence (a task's claim revision) in one
// append, as done for the tasks of finished, retrying lost races for those still their task's
// claim; fenced counts the others.
func (c *Claimer) holderAppend(ctx context.Context, op string, fences map[string]int64, finished map[string]bool) (fenced int, _ error) {
	rewinds := 0
	var lost stalls
	for attempt := 0; ; attempt++ {
		if err := c.Refresh(ctx); err != nil {
			return 0, err
		}
		if err := lost.read(c.head); err != nil {
			return fenced, err
		}
		var es []entry
		fenced = 0
		for _, task := range slices.Sorted(maps.Keys(fences)) {
			if c.Valid(task, fences[task]) != nil {
				fenced++
				continue
			}
			e := entry{Op: op, Task: task, Owner: c.owner, Prev: fences[task], At: c.now().UTC()}
			if op == "renew" {
				e.Lease = c.lease
			}
			if finished[task] {
				e.Outcome = done
			}
			es = append(es, e)
		}
		if len(es) == 0 {
			return fenced, nil
		}
		err := c.append(ctx, es...)
		if c.rewound(err) {
			if !again(ctx, &rewinds) {
				return fenced, err
			}
			continue // read again from the start: a fence the line still holds is released
		}
		if err == nil || !errors.Is(err, remote.ErrConflict) {
			return fenced, err
		}
		lost.conflict(err, c.head)
		pause(ctx, attempt)
	}
}

// Valid reports whether fence is still the task's current claim, as of the last Refresh.
func (c *Claimer) Valid(task string, fence int64) error {
	if h, ok := c.holders[task]; !ok || h.Rev != fence {
		return ErrFenced
	}
	return nil
}

// Onto returns base, a State of c's line saved when read no further than c has read it (the
// line as it last fit where the whole is too large to keep), with each task base or c has held
// by c's owner as c read it (held by whoever holds it now, or by none): a Claimer restored from
// it reads the line on from base's head and ends with the holders c has, since an entry up to
// a claim's revision never names that claim as Prev, and one that names a claim given up
// counts for nothing. base itself when it was read further than c.
func (c *Claimer) Onto(base State) State {
	if base.Head > c.head {
		return base
	}
	mine := c.State()
	seen, _ := c.seenOf(base) // on the wall clock as it reads now, as mine.Seen is
	s := State{Head: base.Head, Mark: base.Mark, Holders: maps.Clone(base.Holders), Done: base.Done, Seen: seen, Clock: mine.Clock}
	if s.Holders == nil {
		s.Holders = map[string]Holder{}
	}
	for task, h := range base.Holders {
		if h.Owner == c.owner {
			delete(s.Holders, task)
			delete(s.Seen, task)
		}
	}
	for task, h := range mine.Holders {
		if _, was := base.Holders[task]; h.Owner == c.owner || (was && base.Holders[task].Owner == c.owner) {
			s.Holders[task], s.Seen[task] = h, mine.Seen[task]
		}
	}
	return s
}

// Replaced returns the claim of another owner that this Claimer's last TryClaim of task took
// over (it had lapsed here), if that call took one over.
func (c *Claimer) Replaced(task string) (Holder, bool) {
	h, ok := c.replaced[task]
	return h, ok
}

// TakenOver returns the claim that took task over from this owner, when this Claimer read
// one (since it was made or restored) and has not read this owner claim it again since:
// the task may have been released since, so Holders no longer has it.
func (c *Claimer) TakenOver(task string) (Holder, bool) {
	h, ok := c.taken[task]
	return h, ok
}

// Holders returns each task's current holder as of the last Refresh.
func (c *Claimer) Holders() map[string]Holder {
	return maps.Clone(c.holders)
}

// Refresh reads what others appended since the last read. It reads the record at the last
// read's head too, when its mark is known: a line deleted on the host and grown again by
// others holds another record there, and is then read again from the start. Records are
// folded as the remote hands them over, one at a time, so that a long line anyone may push to
// is never held whole; a read that fails midway keeps what it folded, as read up to c.head.
func (c *Claimer) Refresh(ctx context.Context) error {
	from, check := c.head, c.mark != ""
	if check {
		from--
	}
	read := map[string]entry{} // each task's last entry read that changed its claim
	fn := func(r remote.Record) error {
		if check {
			if check = false; r.Rev != c.head || mark(r.Data) != c.mark {
				return errRegrown
			}
			return nil
		}
		return c.read(r, read)
	}
	err := remote.Each(ctx, c.b, c.line, from, fn)
	if errors.Is(err, errRegrown) || (err == nil && check) {
		c.forget()
		check = false
		err = remote.Each(ctx, c.b, c.line, 0, fn)
	}
	c.started(read)
	return err
}

// errRegrown stops a Refresh's read at a record other than the one its last read ended on.
var errRegrown = errors.New("claim: line regrown")

// read folds r, the record after c.head, and notes in changed each task whose claim it changed.
func (c *Claimer) read(r remote.Record, changed map[string]entry) error {
	if r.Rev != c.head+1 {
		return fmt.Errorf("claim: line %s skipped from revision %d to %d", c.line, c.head, r.Rev)
	}
	c.head, c.mark = r.Rev, mark(r.Data)
	var e entry
	if json.Unmarshal(r.Data, &e) != nil || e.Task == "" || e.Owner == "" {
		return nil // not a claim: ignored, as every machine ignores it
	}
	if !workflow.ValidTaskID(e.Task) || len(e.Owner) > maxOwner {
		// Not a claim either: no task has such an id, and no Cairn makes such an owner;
		// kept, it would make the line too large to save between runs.
		return nil
	}
	if secrets.ScanString(e.Task) != nil || secrets.ScanString(e.Owner) != nil {
		// Not a claim either: no task has such an id (the store refuses it), and kept
		// with the line it would make every save of the line refused.
		return nil
	}
	if c.fold(e, time.Time{}) { // its clock starts when the read ends (started)
		changed[e.Task] = e
	}
	return nil
}

// started starts, at the end of a read, the lease clocks of the tasks still held whose claim
// it changed, each by the last entry that changed it.
func (c *Claimer) started(changed map[string]entry) {
	now := c.now()
	for task, e := range changed {
		if _, held := c.seen[task]; !held {
			continue
		}
		at := now
		if e.Owner == c.owner {
			// Its own entry read back, not folded at its append: an earlier run made it and
			// saved nothing since (killed, or its state too large to keep), and others may
			// have started their clocks when it landed. It counts from when this clock wrote
			// it, before it could land; from an unknown time (due, maybe lapsed, as one
			// restored without a time seen) when this clock was set back since.
			if at = e.At; at.After(now) {
				at = time.Time{}
			}
		}
		c.seen[task] = at
	}
}

// fold applies e, the record at revision c.head, and starts the task's lease clock at at if
// it changed the task's claim or renewed it, which it reports.
func (c *Claimer) fold(e entry, at time.Time) bool {
	changed := c.apply(e, c.head)
	if changed {
		c.seen[e.Task] = at
	}
	if _, held := c.holders[e.Task]; !held {
		delete(c.seen, e.Task)
	}
	return changed
}

// apply folds one entry into the holders, the same on every machine of c's workflow instance:
// an entry of another instance counts for none of its tasks; a claim counts only if it names
// the task's current claim as Prev (0 for none), a renewal or a release only if it names it
// and comes from its owner. A release as done is kept (Finished) until a claim counts.
func (c *Claimer) apply(e entry, rev int64) bool {
	cur := c.holders[e.Task]
	if e.Prev != cur.Rev || (e.Workflow != "" && c.wf != "" && e.Workflow != c.wf) {
		return false
	}
	switch e.Op {
	case "claim":
		c.holders[e.Task] = Holder{Owner: e.Owner, Rev: rev, At: e.At, Lease: e.Lease}
		delete(c.done, e.Task)
		if e.Owner == c.owner {
			delete(c.taken, e.Task)
		} else if cur.Owner == c.owner {
			c.taken[e.Task] = c.holders[e.Task]
		}
		return true
	case "renew":
		if cur.Owner != e.Owner {
			return false
		}
		cur.Lease = e.Lease
		c.holders[e.Task] = cur
		return true
	case "release":
		if cur.Owner == e.Owner && cur.Rev != 0 {
			delete(c.holders, e.Task)
			if e.Outcome == done {
				c.done[e.Task] = Holder{Owner: cur.Owner, Rev: cur.Rev, At: e.At}
			}
			return true
		}
	}
	return false
}

func (c *Claimer) append(ctx context.Context, es ...entry) error {
	data := make([][]byte, len(es))
	for i := range es {
		es[i].Workflow = c.wf
		var err error
		if data[i], err = json.Marshal(es[i]); err != nil {
			return err
		}
	}
	// Its lease counts from before the append: another machine may read it, and start its
	// own clock, as soon as it lands, however late the answer comes back here.
	sent := c.now()
	if _, err := c.b.Append(ctx, c.line, c.head, remote.Slice(data...)); err != nil {
		return err
	}
	// They landed right after c.head: fold them here rather than read them back.
	for i, e := range es {
		c.head, c.mark = c.head+1, mark(data[i])
		c.fold(e, sent)
	}
	return nil
}

func pause(ctx context.Context, attempt int) {
	_ = remote.Sleep(ctx, time.Duration(min(attempt+1, 10))*10*time.Millisecond)
}
