// Package claimsync is this clone's side of task claims while it shares its workflow through a
// remote (cairn remote enable): who this machine is to the others, what it last read of the
// workflow's claims line, the claims it made while the remote was out of reach, and the rules
// the task tools (update_task, cairn task) follow.
//
// The claims of workflow <id> are a line of their own beside the workflow's
// (refs/cairn/claims/<id>, or the branch cairn-claims/<id> on hosts that take only branches),
// written with package claim's conditional append: setting a task running claims it, so of two
// machines exactly one holds it, and the claim's revision is the fencing token. Moving a task
// this machine holds out of running releases the claim, but for done: final, and known to
// other machines only once pushed, it keeps its claim until a sync finds it pushed, which releases
// it as done: no machine claims the task again, even before it reads the done; a machine whose claim was taken over
// cannot mark the task done or failed, and offline it cannot mark done (final) a task whose
// claim went unrenewed for a lease, since it may have been taken over unseen, nor one it set
// running offline, whose claim it never confirmed. A task marked done that this machine holds
// no claim for (running here without having been set running here, or put back to pending
// by recovery) is claimed first, and kept as a done's claim is; offline that done is refused.
//
// The owner is this clone's identity, made once and kept in the state directory: the user,
// the host and a random tag ("sam@laptop#3fa2c1"), so two clones on one host are two owners
// and a renamed host keeps its claims. A new state directory is a new owner, and so is a copy
// of one (the project copied whole, cp -r): the identity is bound to the state directory's
// path and, where the system has them, its inode, which a move keeps and a copy does not. A
// state directory found elsewhere with another inode, or while the one at that path still
// holds the same identity (a copy put back where the original was moved from, which cannot
// tell itself from the original remounted, and so is left the identity), or holding an
// identity made on another host either elsewhere or at the same path with another inode, is a
// copy, which takes a new one; found elsewhere with its inode and nothing at that path holding
// its identity, it was moved, and keeps it.
//
// The lease (one hour, CAIRN_CLAIM_LEASE) decides only when a claim nobody renewed may be
// taken over, and counts on this machine's clock from when this clone first saw the claim or
// its last renewal (kept here between commands, with the time since boot where the system
// gives it, so that the clock set between two commands does not move it), never from another
// machine's clock; a claim carries its holder's lease, and a machine set to a shorter one
// waits for the holder's. The holder renews at its syncs once a quarter of the lease has passed (of the claim's, when shorter),
// a done task's claim too until the done is pushed.
// The claims held on a workflow replaced here are released by the next claims call that reaches
// the remote, and those held on one that ended here, with none active since, by the next sync.
//
// The calls of one clone (the MCP server's tool calls and background sync, cairn task, cairn
// sync) take turns (clone.turn), each deciding on the workflow and claims.json as read in its
// turn.
//
// Every tool works offline: when the remote cannot be reached, the task is set running here
// and the result says the claim is not confirmed; the next sync claims it, or finds another
// machine holds it, reports who and since when, and sets the task back to pending here through
// the state machine, before the workflow itself is synced.
package claimsync

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Doc is the store document that holds this clone's identity and claims state.
const Doc = mirror.ClaimsDoc

const (
	// EnvLease sets the lease (a Go duration): how long a claim nobody renews holds.
	EnvLease = mirror.EnvLease
	// EnvClockSkew shifts the clock claims are timed by (a Go duration, "-1h"); for tests that
	// show machines with clocks apart decide the same.
	EnvClockSkew = "CAIRN_CLAIM_CLOCK_SKEW"

	DefaultLease = mirror.DefaultLease
	// callTimeout bounds the network part of one task tool call; past it the call goes on
	// offline.
	callTimeout = 20 * time.Second
	// turnWait bounds how long a call waits for its turn (clone.turn): longer than a turn's
	// network part.
	turnWait = callTimeout + 10*time.Second
	// turnLock is the store document whose lock is the turn; the document is never written.
	turnLock = "claims-turn"
	// rebuildLock is the store document whose lock a rebuild of a damaged Doc holds; never
	// written.
	rebuildLock = "claims-rebuild"
)

// Options says where a clone's state is.
type Options struct {
	StateDir string
	Root     string // the project root, a git work tree
	Getenv   func(string) string
	// Backend replaces the git remote's claims line; for tests.
	Backend remote.Backend
}

// state is the Doc, whose shape is package mirror's, which the hooks read.
type state = mirror.Claims

// clone is one call's view: the store, the settings and a Claimer restored from the Doc.
type clone struct {
	st      *store.Store
	o       Options
	getenv  func(string) string
	remote  string
	owner   string
	wf      *workflow.Record
	lease   time.Duration
	now     func() time.Time
	cl      *claim.Claimer
	pending map[string]time.Time
	// unclaimed holds the tasks set running here unclaimed (the host refuses the claims
	// ref), with their run's start (mirror.Unconfirmed.Unclaimed).
	unclaimed map[string]time.Time
	// restored is the line as the Doc held it when this view was loaded.
	restored claim.State
	// left holds the claims this clone held on workflows replaced here by the active one
	// (owed), released by the call (releaseLeft), as their tasks are no longer worked on
	// here; freed the workflows it released them on, which its saves drop from the Doc.
	left  map[string]map[string]int64
	freed []string
	// doc is the Doc as this view was loaded, whose line a release on its workflow reads on
	// from.
	doc state
	b   remote.Backend // the claims lines' remote
	// net says how this call's calls to b went (shared by the views of one call, turn).
	net *reached
	// notices say, for people, what this load's read of the workflow repaired (the store's
	// notices: no later read says them again), that it found the Doc damaged and rebuilt it,
	// or found the state directory copied and gave this copy its own identity.
	notices []string
	// unsaved is the first failure of this view's saves (save): said by the call, since what
	// this call learnt of the line is then lost to the next.
	unsaved error
	// over says that a save kept all but the line as read, too large for the Doc (tooMany):
	// said by the call, as the next one reads the line again from what the Doc holds.
	over error
	// pushed says the workflow as read has no change the remote does not hold, as of the
	// last sync recorded (mirror.Synced).
	pushed bool
	// tracked says the Doc was about the active workflow when this view was loaded.
	tracked bool
}

// open returns nil (and no error) when sharing is off or no workflow is active; the caller
// closes st. A missing state directory is not made: sharing is on only in one there.
func open(o Options) (*clone, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	st, err := store.Open(o.StateDir, store.WithLockWait(turnWait), store.WithNoCreate())
	if err != nil {
		return nil, err
	}
	c, err := load(st, o, getenv, new(reached))
	if c == nil {
		st.Close()
	}
	return c, err
}

func load(st *store.Store, o Options, getenv func(string) string, net *reached) (*clone, error) {
	s, err := mirror.Load(st)
	if err != nil || !s.Enabled {
		return nil, err
	}
	w, err := st.ReadWorkflow()
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var notices []string
	for _, n := range w.Notices {
		notices = append(notices, n.Message)
	}
	rec, err := store.ParseRecord(w.Data)
	if err != nil {
		return nil, err
	}
	lease, now := mirror.Lease(getenv), clock(getenv)
	b, err := backend(o, s)
	if err != nil {
		return nil, err
	}
	b = reach{b, net}
	cur, damaged, err := readState(st)
	if damaged {
		var notice string
		if cur, notice, err = rebuild(st); notice != "" {
			notices = append(notices, notice)
		}
	}
	if err != nil {
		return nil, err
	}
	if cur.Owner == "" {
		if cur, err = makeOwner(st); err != nil {
			return nil, err
		}
	}
	if cur.Dir != st.Dir() || cur.Ino != dirIno(st.Dir()) {
		var copied string
		if cur, copied, err = rebind(st, cur); err != nil {
			return nil, err
		}
		if copied != "" {
			notices = append(notices, copied)
		}
	}
	c := &clone{st: st, o: o, getenv: getenv, remote: s.Remote, owner: cur.Owner, wf: rec, lease: lease, now: now,
		cl: claim.New(b, w.ID, cur.Owner, lease, now).Of(instance(rec)).Uptime(uptime(getenv)), pending: map[string]time.Time{}, unclaimed: map[string]time.Time{}, notices: notices,
		pushed: s.Workflow == w.ID && rec.Revision <= s.Mirrored, tracked: cur.Workflow == w.ID}
	if cur.Workflow == w.ID {
		c.cl.Restore(cur.Line)
		c.restored = cur.Line
		maps.Copy(c.pending, cur.Pending)
		maps.Copy(c.unclaimed, cur.Unclaimed)
	}
	c.left, c.doc, c.b, c.net = owed(cur, w.ID), cur, b, net
	return c, nil
}

// reached says whether the remote answered a call of this one, and whether it failed to: an
// error that is not its answer about one line (a conflict, a line it cannot read, a ref its
// rules refuse). The claims left on replaced workflows (releaseLeft) are tried only by a task
// call the remote answered and a sync, and not after it failed to answer: each try against a
// host that does not answer waits as long (callTimeout) again.
type reached struct{ answered, missed bool }

// reach is a call's claims remote, noting in net how it answered.
type reach struct {
	remote.Backend
	net *reached
}

func (r reach) note(err error) {
	if err != nil && !errors.Is(err, remote.ErrConflict) && !errors.Is(err, remote.ErrUnreadable) && !refused(err) {
		r.net.missed = true
	} else {
		r.net.answered = true
	}
}

func (r reach) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	head, err := r.Backend.Append(ctx, id, after, data)
	r.note(err)
	return head, err
}

func (r reach) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, r, id, rev)
}

// Each hands fn each record as the remote reads it (remote.Reader); fn stopping the read is
// the remote's answer.
func (r reach) Each(ctx context.Context, id string, rev int64, fn func(remote.Record) error) error {
	var stop error
	err := remote.Each(ctx, r.Backend, id, rev, func(rec remote.Record) error { stop = fn(rec); return stop })
	if stop != nil {
		r.note(nil)
	} else {
		r.note(err)
	}
	return err
}

func (r reach) Heads(ctx context.Context) (remote.Heads, error) {
	h, err := r.Backend.Heads(ctx)
	r.note(err)
	return h, err
}

// clock is the clock claims are timed by: this machine's, shifted by EnvClockSkew.
func clock(getenv func(string) string) func() time.Time {
	skew, _ := time.ParseDuration(getenv(EnvClockSkew))
	return func() time.Time { return time.Now().Add(skew) }
}

// uptime is the time since boot (mirror.Uptime), shifted by EnvClockSkew as clock is.
func uptime(getenv func(string) string) func() (string, time.Duration, bool) {
	skew, _ := time.ParseDuration(getenv(EnvClockSkew))
	return mirror.Uptime(skew)
}

// backend is the claims line's remote: o.Backend, else the git remote s names.
func backend(o Options, s mirror.Settings) (remote.Backend, error) {
	if o.Backend != nil {
		return o.Backend, nil
	}
	return gitremote.New(gitremote.Config{Dir: o.Root, Remote: s.Remote,
		Layout: gitremote.Layout(s.Layout).Claims(), Timeout: callTimeout})
}

// owed is the claims this clone holds, as the Doc cur says, on workflows but active: those of
// cur.Left, and of the workflow cur is about when it is not active. nil when none.
func owed(cur state, active string) map[string]map[string]int64 {
	var left map[string]map[string]int64
	add := func(wf, task string, rev int64) {
		if wf == "" || wf == active {
			return
		}
		if left == nil {
			left = map[string]map[string]int64{}
		}
		if left[wf] == nil {
			left[wf] = map[string]int64{}
		}
		left[wf][task] = rev
	}
	for wf, fences := range cur.Left {
		for task, rev := range fences {
			add(wf, task, rev)
		}
	}
	for task, h := range cur.Line.Holders {
		if h.Owner == cur.Owner {
			add(cur.Workflow, task, h.Rev)
		}
	}
	return left
}

// instances is the instance (claim.Of) of each workflow of left that cur knows; nil when none.
func instances(cur state, left map[string]map[string]int64) map[string]string {
	var of map[string]string
	for wf := range left {
		i := cur.LeftOf[wf]
		if wf == cur.Workflow {
			i = cur.Of
		}
		if i != "" {
			if of == nil {
				of = map[string]string{}
			}
			of[wf] = i
		}
	}
	return of
}

// release releases left (see owed), as doc's owner, reading on from doc's line on its
// workflow, and returns the workflows it released them on; it stops at the first that fails
// (out of reach, each would wait as long), with its error.
func release(ctx context.Context, b remote.Backend, doc state, left map[string]map[string]int64, lease time.Duration, now func() time.Time) (freed []string, err error) {
	of := instances(doc, left)
	for _, wf := range slices.Sorted(maps.Keys(left)) {
		cl := claim.New(b, wf, doc.Owner, lease, now).Of(of[wf])
		if wf == doc.Workflow {
			cl.Restore(doc.Line)
		}
		if err := cl.ReleaseAll(ctx, left[wf], nil); err != nil {
			return freed, err
		}
		freed = append(freed, wf)
	}
	return freed, nil
}

// releaseEnded releases the claims this clone holds on the workflow the Doc is about when no
// workflow is active here: it ended here (completed, archived), and nothing of it is worked on
// here any more, while a machine going on with it would be refused those tasks for a lease.
// Once they are released the Doc forgets that workflow; out of reach, they are left to the
// next sync. Nothing is read or sent when the Doc holds no claim of this clone's. It decides in
// the turn, on the workflow read again there: a workflow started since the caller found none
// may have claims in the Doc already (a task call of another process), which are not ended.
func releaseEnded(ctx context.Context, o Options) error {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	st, err := store.Open(o.StateDir, store.WithLockWait(turnWait), store.WithNoCreate())
	if err != nil {
		return err
	}
	defer st.Close()
	var ferr error
	_, err = st.Update(turnLock, func([]byte) ([]byte, error) {
		ferr = releaseEndedInTurn(ctx, st, o, getenv)
		return nil, nil
	})
	return cmp.Or(err, ferr)
}

// releaseEndedInTurn is releaseEnded's work, in the turn.
func releaseEndedInTurn(ctx context.Context, st *store.Store, o Options, getenv func(string) string) error {
	s, err := mirror.Load(st)
	if err != nil || !s.Enabled {
		return err
	}
	if _, err := st.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		return nil // one is active (started since), or unreadable: the next load decides
	}
	cur, _, err := readState(st)
	if err != nil {
		return nil // damaged or unreadable: the next load with a workflow active rebuilds it
	}
	b, err := backend(o, s)
	if err != nil {
		return err
	}
	left := owed(cur, "")
	if left == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	freed, rerr := release(ctx, b, cur, left, mirror.Lease(getenv), clock(getenv))
	if len(freed) == 0 {
		return rerr
	}
	_, err = st.Update(Doc, func(doc []byte) ([]byte, error) {
		var now state
		if doc == nil || json.Unmarshal(doc, &now) != nil || now.Owner != cur.Owner || now.Workflow != cur.Workflow {
			return nil, nil // changed meanwhile (an identity rebuilt): theirs to keep
		}
		rest := owed(now, "")
		for _, wf := range freed {
			delete(rest, wf)
		}
		return json.Marshal(state{Owner: now.Owner, Dir: now.Dir, Ino: now.Ino, Left: rest, LeftOf: instances(now, rest), Extra: now.Extra})
	})
	return cmp.Or(rerr, err)
}

// instance names the workflow rec among those started under its id, for its claims (claim.Of):
// its start time, which every machine sharing it holds alike and two workflows started apart
// do not; "" (any) when it has none.
func instance(rec *workflow.Record) string {
	if rec.CreatedAt.IsZero() {
		return ""
	}
	return rec.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// releaseLeft releases the claims this clone held on the workflows it replaced with the active
// one, then saves the Doc, which forgets them; out of reach, or when the remote did not answer
// earlier in this call (reached), it leaves them to the next call (every save keeps them in the
// Doc's Left).
func (c *clone) releaseLeft(ctx context.Context) {
	if len(c.left) == 0 || c.net.missed {
		return
	}
	freed, _ := release(ctx, c.b, c.doc, c.left, c.lease, c.now)
	for _, wf := range freed {
		delete(c.left, wf)
	}
	if c.freed = append(c.freed, freed...); len(freed) > 0 {
		c.save("")
	}
}

// turn runs fn as the only claims call of this clone, among all its processes (the MCP
// server's tool calls and background sync, cairn task, cairn sync), on a view loaded afresh in
// the turn: nil when sharing went off or the workflow ended meanwhile, and loadErr when it
// cannot be loaded. A call decides from the workflow and the line, then changes one of them;
// another process changing the workflow in between would make the decision wrong (a claim
// released as its task is set running again). It returns the error of taking the turn; fn is
// not called then.
func (c *clone) turn(fn func(t *clone, loadErr error)) error {
	_, err := c.st.Update(turnLock, func([]byte) ([]byte, error) {
		fn(load(c.st, c.o, c.getenv, c.net))
		return nil, nil
	})
	return err
}

// readState reads the Doc; damaged is true when it is there but cannot be used (not strict
// JSON, too large, or not of the Doc's shape), as opposed to a failure to read it.
func readState(st *store.Store) (s state, damaged bool, err error) {
	found, err := st.ReadJSON(Doc, &s)
	if err == nil && found && s.Owner == "" {
		// Every Doc a Cairn writes names its owner: this one (null, or a newer Cairn's of
		// another shape) is kept in quarantine/ rather than overwritten with a new identity.
		err = errors.New("it names no owner")
	}
	if err == nil {
		return s, false, nil
	}
	var je *strictjson.Error
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	damaged = errors.As(err, &je) || errors.Is(err, durable.ErrTooLarge) || (found && (errors.As(err, &te) || errors.As(err, &se) || s.Owner == ""))
	return s, damaged, fmt.Errorf("the claims state (%s) is not readable: %w", Doc, err)
}

// rebuild replaces a damaged Doc, once among concurrent calls (under rebuildLock): the damaged
// file is moved to quarantine/ as the store does with its own (never deleted), and the Doc
// made again with this clone's identity when the damaged file still shows it (when the new one
// cannot be written, the damaged one goes back in its place, for the next call). What cannot be
// kept (the claims made offline, the line as last read, the identity when unreadable) is said
// in the notice, for the call's result.
func rebuild(st *store.Store) (cur state, notice string, err error) {
	_, err = st.Update(rebuildLock, func([]byte) ([]byte, error) {
		var damaged bool
		if cur, damaged, err = readState(st); !damaged {
			return nil, err // rebuilt meanwhile, or not readable for another reason
		}
		file := filepath.Join(st.Dir(), Doc+".json")
		owner := salvageOwner(file)
		q, err := st.Quarantine(Doc+".json", errors.New("not readable as the claims state"))
		if err != nil {
			return nil, fmt.Errorf("the claims state (%s) is damaged and could not be moved to quarantine/ to be rebuilt: %w", Doc, err)
		}
		lost := "its claims made offline, if any, are forgotten (tasks running here are claimed again when set running)"
		if owner == "" {
			owner = ownerName()
			lost = "this clone has a new identity (" + owner + "): claims held under its old one stay on the remote until their lease ends, and its claims made offline, if any, are forgotten"
		}
		cur = state{Owner: owner, Dir: st.Dir(), Ino: dirIno(st.Dir())}
		doc, err := json.Marshal(cur)
		if err == nil {
			err = st.Write(Doc, doc)
		}
		if err != nil {
			// Back in its place, for the next call to rebuild: without it, that call would
			// find none and make a new identity without a word.
			if uerr := st.Unquarantine(q, Doc+".json"); uerr != nil {
				return nil, fmt.Errorf("the claims state (%s) is damaged: it was moved to %s, and could not be rebuilt (%w), nor put back (%v)", Doc, q.Path, err, uerr)
			}
			return nil, fmt.Errorf("the claims state (%s) is damaged and could not be rebuilt: %w", Doc, err)
		}
		notice = fmt.Sprintf("the claims state was damaged: it was moved to %s and rebuilt; %s", q.Path, lost)
		return nil, nil
	})
	return cur, notice, err
}

// salvageOwner is the identity a damaged Doc still shows ("" when none): the owner field is
// written first, so a torn file usually keeps it whole.
func salvageOwner(file string) string {
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte(`{"owner":"`))
	if !ok {
		return ""
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	owner := string(rest[:end])
	if !ownerShape(owner) {
		return ""
	}
	return owner
}

// ownerShape reports whether s is an identity ownerName could have made: user@host#hex, of
// printable characters, with no escape (which the salvage does not decode).
func ownerShape(s string) bool {
	at, hash := strings.IndexByte(s, '@'), strings.LastIndexByte(s, '#')
	if at <= 0 || hash <= at+1 || hash == len(s)-1 || len(s) > 80 || textsafe.Line(s, 80) != s {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '\\' || c == 0x7f {
			return false
		}
	}
	for _, c := range s[hash+1:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// makeOwner gives this clone its identity, once: a concurrent first call keeps the first.
func makeOwner(st *store.Store) (state, error) {
	var s state
	_, err := st.Update(Doc, func(cur []byte) ([]byte, error) {
		if cur != nil && json.Unmarshal(cur, &s) == nil && s.Owner != "" {
			return nil, nil
		}
		s = state{Owner: ownerName(), Dir: st.Dir(), Ino: dirIno(st.Dir())}
		return json.Marshal(s)
	})
	return s, err
}

// rebind binds the identity in cur, found bound to another directory than the store's (or to
// none, as an older Cairn saved it, or to another inode), to the store's. Found at another
// path, this one is a copy when the inode recorded is not this directory's, or when the other
// directory still holds a state directory with the same identity (and is not this one under
// another path), even with this directory's inode: then this is the original moved away and a
// copy was put back in its place, which has the path and looks remounted, so this one yields;
// and when the identity was made on another host. Found
// at the same path with another inode, it is a copy when the identity was made on another host.
// A copy takes an identity of its own, without the copied claims made offline (the original's
// to confirm) nor the times the original saw the claims at (its clock's), and notice says so. A renamed host keeps its identity as long as the state
// directory stays where it is.
//
// It decides from the Doc as read under its lock, not from cur: another process of this clone
// may have rebound it meanwhile, possibly reaching this directory by another path (a link), and
// deciding from cur would then keep the identity it was copied with for this call.
func rebind(st *store.Store, cur state) (_ state, notice string, err error) {
	here, ino := st.Dir(), dirIno(st.Dir())
	if cur.Dir != "" && cur.Ino == ino && durable.SameDir(cur.Dir, here) {
		return cur, "", nil // the same directory by another path (a link, a bind mount)
	}
	_, err = st.Update(Doc, func(doc []byte) ([]byte, error) {
		var s state
		if doc == nil || json.Unmarshal(doc, &s) != nil || s.Owner == "" {
			return nil, nil // gone or damaged meanwhile: the next load rebuilds it
		}
		same := s.Dir == here || (s.Dir != "" && durable.SameDir(s.Dir, here))
		if same && s.Ino == ino {
			cur = s // rebound meanwhile by another call
			return nil, nil
		}
		known, copied, movedAway := s.Ino != 0 && ino != 0, false, false
		switch {
		case same:
			// Another inode at the same path: another host's directory, or this host's
			// remounted where inodes do not last (sshfs, some SMB mounts), which keeps its
			// identity as a renamed host does.
			copied = known && s.Ino != ino && !madeHere(s.Owner)
		case s.Dir != "":
			// With the inode it was bound to, it was moved, unless its old path holds a
			// state directory with the same identity: a copy put back there (mv a a.bak;
			// cp -r a.bak a) has that path and looks remounted, so this one yields.
			copied = !madeHere(s.Owner) || (known && s.Ino != ino) || ownerAt(s.Dir) == s.Owner
			movedAway = copied && madeHere(s.Owner) && known && s.Ino == ino
		}
		if copied {
			was, from := textsafe.Line(s.Owner, 80), textsafe.Line(s.Dir, 200)
			// The times the copied line was seen at are the original's clock's readings, maybe
			// another host's, hours apart: the copy starts its lease clocks again, as a machine
			// that has just started (claim.Restore).
			line := s.Line
			line.Seen = nil
			s = state{Owner: ownerName(), Unconfirmed: mirror.Unconfirmed{Workflow: s.Workflow}, Line: line}
			notice = fmt.Sprintf("this state directory was copied from %s, with its claims identity %s: this copy is now another machine to the claims, %s; the tasks %s holds are its own",
				from, was, s.Owner, was)
			if movedAway {
				notice = fmt.Sprintf("this state directory was moved from %s, and a copy of it there holds its claims identity %s: this one is now another machine to the claims, %s; the tasks %s holds are the copy's",
					from, was, s.Owner, was)
			}
		}
		s.Dir, s.Ino = here, ino
		cur = s
		return json.Marshal(s)
	})
	return cur, notice, err
}

// ownerAt is the identity the state directory dir holds ("" when none can be read).
func ownerAt(dir string) string {
	b, err := durable.ReadPath(filepath.Join(dir, Doc+".json"), strictjson.MaxSize, false)
	var s struct {
		Owner string `json:"owner"`
	}
	if err != nil || json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s.Owner
}

// ownerName is user@host#tag: the user and host for people, the random tag so that two clones
// on one host differ.
func ownerName() string {
	who := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = u.Username
	}
	tag := make([]byte, 3)
	rand.Read(tag)
	return fmt.Sprintf("%s@%s#%x", ownerPart(who, "someone"), thisHost(), tag)
}

// thisHost is this host as ownerName writes it.
func thisHost() string {
	host, _ := os.Hostname()
	return ownerPart(host, "host")
}

// ownerPart is s as a part of an identity: short, one line, without the separators.
func ownerPart(s, or string) string {
	s = strings.Map(func(r rune) rune {
		if r == '#' || r == '@' || r <= ' ' {
			return -1
		}
		return r
	}, textsafe.Line(s, 32))
	if s == "" {
		return or
	}
	return s
}

// madeHere reports whether the identity owner was made on this host (or names none).
func madeHere(owner string) bool {
	at, hash := strings.IndexByte(owner, '@'), strings.LastIndexByte(owner, '#')
	return at < 0 || hash <= at || owner[at+1:hash] == thisHost()
}

// save keeps what this call learnt: the line if it read further than the Doc holds, and the
// pending claims as this call left them for the tasks it touched.
func (c *clone) save(touched string) error {
	line := c.cl.State()
	id := c.wf.WorkflowID
	var over error // the line as read is too large to keep: said, the rest kept all the same
	_, err := c.st.Update(Doc, func(cur []byte) ([]byte, error) {
		var s state
		if cur != nil {
			_ = json.Unmarshal(cur, &s) // unreadable: rebuilt from the line
		}
		// An owner the Doc holds is kept: another call may have given this copy of the state
		// directory an identity of its own since this one was loaded (rebind).
		s.Owner = cmp.Or(s.Owner, c.owner)
		if s.Workflow != id {
			left := owed(s, id)
			s = state{Owner: s.Owner, Dir: s.Dir, Ino: s.Ino, Unconfirmed: mirror.Unconfirmed{Workflow: id}, Left: left, LeftOf: instances(s, left), Extra: s.Extra}
		}
		for _, wf := range c.freed {
			delete(s.Left, wf)
			delete(s.LeftOf, wf)
		}
		delete(s.Left, id) // the active workflow's claims are Line's
		delete(s.LeftOf, id)
		s.Of = instance(c.wf)
		kept := s.Line
		// A shorter line replaces the Doc's only when it is the one this call started from:
		// it then found the remote's line deleted or rewound, and read it again.
		if line.Head >= s.Line.Head || (s.Line.Head == c.restored.Head && s.Line.Mark == c.restored.Mark) {
			s.Line = line
			s.Line.Extra = kept.Extra // a newer Cairn's, kept as the Doc's are
		}
		if at, ok := c.pending[touched]; ok {
			if s.Pending == nil {
				s.Pending = map[string]time.Time{}
			}
			s.Pending[touched] = at
		} else {
			delete(s.Pending, touched)
		}
		if at, ok := c.unclaimed[touched]; ok {
			if s.Unclaimed == nil {
				s.Unclaimed = map[string]time.Time{}
			}
			s.Unclaimed[touched] = at
		} else {
			delete(s.Unclaimed, touched)
		}
		doc, err := json.Marshal(s)
		if err == nil && len(doc) > strictjson.MaxSize {
			// The rest (the claims made offline, queued or settled) is kept beside the line
			// as the Doc held it, a part of the remote's that the next call reads on from,
			// with this clone's own claims as read (claim.Onto: what runs here, for
			// mirror.RunsElsewhere), or without them when even that is too large.
			over = c.tooMany(s.Line.Holders, len(doc))
			for _, l := range []claim.State{c.cl.Onto(kept), kept} {
				if s.Line = l; err == nil {
					doc, err = json.Marshal(s)
				}
				if err == nil && len(doc) <= strictjson.MaxSize {
					break
				}
			}
			if err == nil && len(doc) > strictjson.MaxSize {
				err = over
			}
		}
		return doc, err
	})
	if err != nil && c.unsaved == nil {
		c.unsaved = err
	}
	if err == nil && over != nil && c.over == nil {
		c.over = over
	}
	return err
}

// TooManyStep ends tooMany's text, after the owner holding most of the claims. No command
// cleans the line: only a claim's owner releases it, and an owner that runs nowhere (a
// machine gone, or claims pushed by hand) never will, so having it stop ends nothing. Another
// workflow has a claims line of its own: the step is engine.ArchiveToGoOn's, through the
// user, which the CLI puts its archive command in place of.
const TooManyStep = "only their owner can release them, which one that runs nowhere never will; to go on without them, " + engine.ArchiveToGoOn + " on a claims line of its own"

// tooMany says that the line as read, holding hs, makes the Doc size bytes, over what the
// store keeps: nothing of it is dropped (each call reads the line again from what the Doc last
// kept), but the lease clocks start again with each call. It names the owner holding most of
// them (user@host#tag), who the person could not find otherwise.
func (c *clone) tooMany(hs map[string]claim.Holder, size int) error {
	by := map[string]int{}
	for _, h := range hs {
		by[h.Owner]++
	}
	top := ""
	for _, o := range slices.Sorted(maps.Keys(by)) {
		if by[o] > by[top] {
			top = o
		}
	}
	return fmt.Errorf("the claims line of workflow %s on %s holds %d claims, too many to keep in %s.json (%d bytes, the most is %d): none is dropped, but each call reads them again and starts their lease clocks again, so a claim left unrenewed is never taken over from here; %d of them are held by %s: %s",
		secrets.Line(c.wf.WorkflowID, 64), secrets.Line(c.remote, 40), len(hs), Doc, size, strictjson.MaxSize, by[top], textsafe.Line(top, 80), TooManyStep)
}

// recovered reports whether task is one recovery put back to pending from a run here, which
// may be reported done (workflow.DoneAfterItsRun): its claim may have been released since.
func (c *clone) recovered(task string) bool {
	i := slices.IndexFunc(c.wf.Tasks, func(t workflow.Task) bool { return t.ID == task })
	return i >= 0 && workflow.DoneAfterItsRun(c.wf.Tasks[i], workflow.TaskDone)
}

func (c *clone) status(task string) workflow.TaskStatus {
	for _, t := range c.wf.Tasks {
		if t.ID == task {
			return t.Status
		}
	}
	return ""
}

// Task applies update, a change of task to status in the active workflow, under the claims
// rules when this clone shares its workflow; with sharing off it only calls update. rerun asks
// update for a new run of a task already running (engine.TaskRequest.Rerun): set running
// here on a claim taken from the machine that ran it.
func Task(ctx context.Context, o Options, task, status string, rerunnable func(rerun bool) (*engine.Result, error)) (*engine.Result, error) {
	update := func() (*engine.Result, error) { return rerunnable(false) }
	to := workflow.TaskStatus(strings.ToLower(strings.TrimSpace(status)))
	running := to == workflow.TaskRunning
	task = strings.TrimSpace(task)
	if !workflow.ValidTaskID(task) || !to.Valid() {
		return update() // which refuses it: no claim is asked or pushed for it
	}
	c, err := open(o)
	if err != nil {
		return unclaimed(running, err, update)
	}
	if c == nil {
		res, err := update()
		if err == nil && running && res != nil && res.Changed {
			// A run of this call's: sharing may have been switched on since open read it off.
			if aerr := adoptRun(o, task); aerr != nil {
				res.Warnings = append(res.Warnings, "the task was not claimed on the remote: "+said(aerr))
			}
		}
		return res, err
	}
	defer c.st.Close()
	if secrets.ScanString(task) != nil {
		// The store refuses it; a claim would have pushed it where every machine reads it.
		return unclaimed(running, errors.New("its id has the shape of a secret"), update)
	}
	var res *engine.Result
	var uerr error
	var lost []string
	terr := c.turn(func(c *clone, err error) {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		switch {
		case err != nil:
			res, uerr = unclaimed(running, err, update)
		case c == nil:
			res, uerr = update()
		case running:
			res, uerr = c.running(ctx, task, rerunnable)
		case c.status(task) == to:
			// Already out of running here: a call that landed, retried. That call settled the
			// claim (a sync releases one it left), so the remote has no say now: asking it
			// would refuse the retry once the claim lapsed or another machine took the task.
			res, uerr = update()
		default:
			res, uerr = c.leaving(ctx, task, to == workflow.TaskDone, update)
		}
		if err == nil && c != nil {
			lost = c.takenOver(task)
			if c.net.answered { // a call that asks nothing of the remote leaves them to a sync
				c.releaseLeft(ctx) // after the task's own part, which has the call's time first
			}
			if e := cmp.Or(c.unsaved, c.over); e != nil {
				lost = append(lost, said(e))
			}
		}
	})
	if terr != nil {
		return nil, terr
	}
	if notes := append(slices.Clone(c.notices), lost...); len(notes) > 0 {
		if res != nil {
			res.Warnings = append(res.Warnings, notes...)
		} else if uerr != nil {
			uerr = fmt.Errorf("%w (also: %s)", uerr, strings.Join(notes, "; "))
		}
	}
	return res, uerr
}

// Adopt queues the tasks running in the active workflow when sharing is switched on (cairn
// remote enable) as claims made offline, which the next sync makes: runs of this clone's that
// no claim shows, which another machine would otherwise set running too, and which this
// clone's reports would take as another machine's (mirror.RunsElsewhere). synced is the
// workflow the last sync was about before the enable ("" for none): the running tasks of one
// synced before, or whose claims this clone has read, may be other machines' runs it pulled,
// and only those a revision of this clone's set running (localRuns) are adopted.
func Adopt(o Options, synced string) error {
	return inTurn(o, func(c *clone) error {
		var local map[string]bool
		if c.tracked || c.wf.WorkflowID == synced {
			var err error
			if local, err = c.localRuns(); err != nil {
				return err
			}
		}
		for _, t := range c.wf.Tasks {
			if local != nil && !local[t.ID] {
				continue
			}
			if err := c.adopt(t); err != nil {
				return err
			}
		}
		return nil
	})
}

// localRuns says which tasks running in c.wf run as this clone set them running: the revision
// of the journal that first shows the run (the task running since the same start) is one made
// here, not one a sync took from another machine (an event of kind engine.SyncEvent). A run
// whose first revision the journal does not hold is not counted.
func (c *clone) localRuns() (map[string]bool, error) {
	runs := map[string]time.Time{}
	for _, t := range c.wf.Tasks {
		if t.Status == workflow.TaskRunning {
			runs[t.ID] = t.StartedAt
		}
	}
	local := map[string]bool{}
	if len(runs) == 0 {
		return local, nil
	}
	// One state at a time: each is a full copy of the record.
	if err := c.st.EachJournalSince(c.wf.WorkflowID, 0, func(r store.Record) error {
		rec, err := store.ParseRecord(r.Snapshot)
		if err != nil {
			return nil // a state no record of this workflow: it shows no run
		}
		for _, t := range rec.Tasks {
			if at, ok := runs[t.ID]; ok && t.Status == workflow.TaskRunning && t.StartedAt.Equal(at) {
				local[t.ID] = r.Event.Kind != engine.SyncEvent
				delete(runs, t.ID) // decided by the first revision that shows the run
			}
		}
		if len(runs) == 0 {
			return errDecided // the states after it are not built
		}
		return nil
	}); err != nil && err != errDecided {
		return nil, fmt.Errorf("reading the journal of %s: %w", c.wf.WorkflowID, err)
	}
	return local, nil
}

// errDecided stops localRuns' read of the journal once every run is decided.
var errDecided = errors.New("every run decided")

// adopt queues t, when it runs here and neither this clone holds it nor claimed it offline, as
// a claim made offline: a run of this clone's.
func (c *clone) adopt(t workflow.Task) error {
	if _, pend := c.pending[t.ID]; t.Status != workflow.TaskRunning || pend || c.holds(t.ID) {
		return nil
	}
	c.pending[t.ID] = cmp.Or(t.StartedAt, c.now()).UTC()
	return c.save(t.ID)
}

// adoptRun is Adopt of task, set running here by a call that found sharing off, when sharing
// was switched on meanwhile: the enable's Adopt may have read the workflow before this run.
func adoptRun(o Options, task string) error {
	return inTurn(o, func(c *clone) error {
		if i := slices.IndexFunc(c.wf.Tasks, func(t workflow.Task) bool { return t.ID == task }); i >= 0 {
			return c.adopt(c.wf.Tasks[i])
		}
		return nil
	})
}

// inTurn runs f in a turn on the clone of o's active workflow; nothing when sharing is off or
// the turn could not read the claims.
func inTurn(o Options, f func(c *clone) error) error {
	c, err := open(o)
	if err != nil || c == nil {
		return err
	}
	defer c.st.Close()
	var ferr error
	terr := c.turn(func(c *clone, err error) {
		if ferr = err; c != nil && err == nil {
			ferr = f(c)
		}
	})
	return cmp.Or(terr, ferr)
}

// InTheWayStep ends what a task call says of something in the place of the claims state (a
// FIFO): the store's step, to move it out of the state directory, is not the agent's to take,
// and what is there may be someone's. The CLI puts the person's own in its place.
const InTheWayStep = "ask the user what it is: it may be someone's"

// said is err for a task call's result: with InTheWayStep in place of the store's step for
// something in a claims file's place.
func said(err error) string {
	if !store.InTheWay(err) {
		return err.Error()
	}
	return store.WithoutPersonStep(err) + "; " + InTheWayStep
}

// unclaimed applies update without the claims rules, since the claims state could not be read
// (err). Set running, the task is not claimed; out of running, a claim this clone held of it
// is not released, and other machines are refused it until it lapses.
func unclaimed(running bool, err error, update func() (*engine.Result, error)) (*engine.Result, error) {
	res, uerr := update()
	switch {
	case uerr != nil || res == nil:
	case running:
		res.Warnings = append(res.Warnings, "the task was not claimed on the remote: "+said(err))
	case res.Changed:
		res.Warnings = append(res.Warnings, "the task's claim, if this clone held one, was not released on the remote: "+said(err))
	}
	return res, uerr
}

// running claims task, then sets it running here. A change the state machine refuses on the
// workflow as read in the turn (a new id that reads as another, a done task) claims nothing:
// every machine reads the line, and keeps its history.
func (c *clone) running(ctx context.Context, task string, rerunnable func(rerun bool) (*engine.Result, error)) (*engine.Result, error) {
	update := func() (*engine.Result, error) { return rerunnable(false) }
	if _, err := workflow.UpdateTask(c.wf, workflow.TaskUpdate{ID: task, Status: workflow.TaskRunning}, c.now(), workflow.Actor{}); err != nil {
		return update() // which refuses it
	}
	heldBefore := c.holds(task)
	_, pendBefore := c.pending[task]
	// Running on record, but neither held here nor claimed here offline: another machine ran
	// it, and the claim about to be taken is its lapsed one (or one it gave up): a new run.
	rerun := !heldBefore && !pendBefore && c.status(task) == workflow.TaskRunning
	intent := !heldBefore && !pendBefore && c.intend(task)
	unintend := func() {
		if intent {
			delete(c.pending, task)
		}
	}
	fence, err := c.cl.TryClaim(ctx, task)
	if interrupted(ctx, err) {
		// The run the caller gave up is not made here, nor queued as a claim for the next sync.
		unintend()
		c.save(task)
		return nil, interruptedError(task)
	}
	if by, ok := c.cl.Finished(task); ok && err != nil {
		// Finished on another machine (as last read, when out of reach): its done is on its way.
		unintend()
		c.save(task)
		return nil, c.finishedError(task, by)
	}
	var he *claim.HeldError
	if errors.As(err, &he) {
		unintend()
		c.save(task)
		return nil, c.heldError(task, he.Holder, he.Left)
	}
	if err != nil && !refused(err) && errors.As(c.cl.Held(task), &he) {
		// Out of reach, but another machine held it at the last read: refused as online,
		// rather than worked on beside the holder until the next sync sets it back.
		unintend()
		c.save(task)
		return nil, c.heldError(task, he.Holder, he.Left)
	}
	if err != nil { // out of reach: the local update goes ahead, unconfirmed
		res, uerr := update()
		if uerr != nil || res == nil {
			unintend()
			c.save(task)
			return res, uerr
		}
		if refused(err) { // no sync would do better
			unintend()
			res.Warnings = append(res.Warnings, refusedNote(task, c.remote))
			if rec, perr := store.ParseRecord(res.Workflow); perr == nil {
				c.runsUnclaimed(rec, task)
			}
			c.save(task)
			return res, nil
		}
		// Retried (the task already running here), the call keeps what the first left: the
		// claim this clone holds, or the one it made offline, with that claim's time.
		pend := pendBefore
		if !res.Changed && heldBefore && !pend {
			return res, nil
		}
		if res.Changed || !pend {
			c.pending[task] = c.now().UTC()
			if serr := c.save(task); serr != nil {
				res.Warnings = append(res.Warnings, "the claim could not be queued for the next sync: "+said(serr))
				return res, nil
			}
		}
		if errors.Is(err, remote.ErrUnreadable) { // no holder could be read: not "not yet claimed"
			res.Warnings = append(res.Warnings, fmt.Sprintf("task %s is running here, but its claim could not be checked: its claims line on %s is not one Cairn can read, so another machine may hold it; %s",
				secrets.Line(task, 64), secrets.Line(c.remote, 40), RemoteStep))
			return res, nil
		}
		step := ClaimStep
		if nameable(err) { // every sync fails on it alike: a sync is no step until it is ended
			step = blockedStep
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("task %s is not yet claimed on %s (%s): %s",
			secrets.Line(task, 64), secrets.Line(c.remote, 40), unreached(err), step))
		return res, nil
	}
	res, uerr := rerunnable(rerun)
	delete(c.pending, task)
	delete(c.unclaimed, task)
	if uerr != nil && !heldBefore {
		_ = c.cl.Release(ctx, task, fence) // not running here: let others have it at once
	}
	if by, ok := c.cl.Replaced(task); ok && uerr == nil && res != nil {
		res.Warnings = append(res.Warnings, c.tookOver(task, by))
	}
	c.save(task)
	return res, uerr
}

// leaving moves task out of running (or adds it in another status; done says the status is
// done). Only a task running here, or that this clone holds or claimed offline, or that another
// machine held at the last read, asks the remote (a task running here may have come from
// another machine's revisions, its claim not yet read here), and a done of one this clone
// holds no claim for claims it first (doneUnheld): one another machine holds is refused; one
// held here is released after the local update, unless done (decide releases it once pushed).
func (c *clone) leaving(ctx context.Context, task string, done bool, update func() (*engine.Result, error)) (*engine.Result, error) {
	_, known := c.cl.Holders()[task]
	held := c.holds(task)
	_, pend := c.pending[task]
	runs := c.status(task) == workflow.TaskRunning
	if done && !held && !pend && (runs || c.recovered(task) || c.status(task) == "") {
		return c.doneUnheld(ctx, task, update)
	}
	if !known && !pend && !runs {
		return update()
	}
	if err := c.refresh(ctx); interrupted(ctx, err) {
		return nil, interruptedError(task)
	} else if err != nil { // out of reach: the claim lapses with its lease; refresh saved the line read
		if h, ok := c.cl.Holders()[task]; ok && h.Owner != c.owner { // as online, by the last read
			return nil, c.takenError(task, h, pend)
		}
		// Done is final: pushed at the next sync, it would end the task for a machine that
		// holds the claim, whose work would then count for nothing, and no later sync could
		// take it back. So it waits for the remote when this machine's claim may not be the
		// task's.
		var why string
		switch {
		case pend && !held:
			why = "it was set running here while out of reach, so its claim was never confirmed and another machine may hold it"
		case c.cl.Lapsed(task):
			why = "this machine's claim went unrenewed for longer than the lease, so another machine may have taken it over"
		}
		if done && why != "" {
			blocked, once := c.blocked(err)
			return nil, fmt.Errorf("task %s cannot be marked done while %s is out of reach%s: %s; nothing was changed; mark it done once %s",
				secrets.Line(task, 64), secrets.Line(c.remote, 40), blocked, why, once)
		}
		res, uerr := update()
		if uerr == nil && pend {
			c.settled(task)
		}
		if uerr == nil && res != nil && held && !done { // a done's claim is kept until pushed
			res.Warnings = append(res.Warnings, c.notReleased(task, err))
		}
		return res, uerr
	}
	cur, taken := c.cl.Holders()[task]
	if taken && cur.Owner != c.owner {
		c.save("")
		return nil, c.takenError(task, cur, held || pend)
	}
	res, uerr := update()
	if uerr != nil {
		c.save("")
		return res, uerr
	}
	delete(c.pending, task)
	delete(c.unclaimed, task)
	if taken && !done { // a done's claim is released once the done is pushed (decide)
		if err := c.cl.Release(ctx, task, cur.Rev); err != nil && res != nil {
			if w := c.notReleased(task, err); w != "" {
				res.Warnings = append(res.Warnings, w)
			}
		}
	} else if by, ok := c.cl.TakenOver(task); ok && held && res != nil {
		res.Warnings = append(res.Warnings, c.takenAndReleased(task, by))
	}
	c.save(task)
	return res, nil
}

// doneUnheld marks done a task this clone holds no claim for: one running here without having
// been set running here (another machine's revisions brought it, or it ran when sharing was
// switched on and Adopt was not run), one added done (another machine may hold its id), or put back to pending by recovery (its claim released since), whose holder, if any, the line as last read may not show. Done is final, so
// it is claimed first, as setting it running would, and the claim kept until the done is
// pushed (decide releases it then), and a lapsed claim of another machine's it took over said as
// setting it running says it (tookOver): another
// machine's claim refuses it, and out of reach it is refused with nothing changed, as the done
// of a claim never confirmed is.
func (c *clone) doneUnheld(ctx context.Context, task string, update func() (*engine.Result, error)) (*engine.Result, error) {
	intent := c.intend(task)
	fence, err := c.cl.TryClaim(ctx, task)
	if intent {
		delete(c.pending, task) // saved below, by every way out
	}
	var he *claim.HeldError
	switch {
	case errors.As(err, &he):
		c.save(task)
		return nil, c.takenError(task, he.Holder, false)
	case refused(err): // no machine can claim it there
		c.save(task)
		return update()
	case interrupted(ctx, err): // a claim that landed is released by the next sync, or kept running
		c.save(task)
		return nil, interruptedError(task)
	case errors.As(err, new(*claim.DoneError)): // done there too: no machine claims it
		c.save(task)
		return update()
	case err != nil:
		c.save(task)
		if h, ok := c.cl.Holders()[task]; ok && h.Owner != c.owner { // as online, by the last read
			return nil, c.takenError(task, h, false)
		}
		// A damaged repository refuses every push, the claims of machines that may hold
		// the task with them, until it is repaired: out of reach until then.
		blocked, once := c.blocked(err)
		return nil, fmt.Errorf("task %s cannot be marked done while %s is out of reach%s: this machine holds no claim of it, so another machine may; nothing was changed; mark it done once %s",
			secrets.Line(task, 64), secrets.Line(c.remote, 40), blocked, once)
	}
	res, uerr := update()
	if uerr != nil { // not done here: let others have it at once
		_ = c.cl.Release(ctx, task, fence)
	}
	if by, ok := c.cl.Replaced(task); ok && uerr == nil && res != nil {
		res.Warnings = append(res.Warnings, c.tookOver(task, by))
	}
	c.save(task) // done, it is released once the done is pushed (decide)
	return res, uerr
}

// intend records in the Doc, before task's claim is made, that it is being made, as a claim
// made offline: a call killed once the claim landed, before the task changed here or the claim
// was recorded, leaves it to the next sync (decide), which releases it unless its task runs
// here, rather than held here unseen, and the task refused to every machine, for a lease. The
// call settles it in memory (c.pending) and saves task on every way out. It reports whether it
// was recorded.
func (c *clone) intend(task string) bool {
	c.pending[task] = c.now().UTC()
	if c.save(task) != nil {
		delete(c.pending, task)
		return false
	}
	return true
}

// blocked is what a done refused out of reach (err) says of it: what stands in the way when it
// is more than the remote out of reach (a damaged repository, a claims line Cairn did not
// write, a ref's lock), and when to mark it done.
func (c *clone) blocked(err error) (why, once string) {
	if nameable(err) || errors.Is(err, gitremote.ErrLocked) {
		return " (" + unreached(err) + ")", "that is resolved"
	}
	return "", secrets.Line(c.remote, 40) + " can be reached"
}

// tookOver says that task was taken over from h, another machine's claim, unrenewed past the
// lease by this machine's clock: that machine may still run it (a clock set forward, here or
// there, makes a live claim look lapsed), so the person is not left to think nobody held it.
func (c *clone) tookOver(task string, h claim.Holder) string {
	return fmt.Sprintf("task %s was taken over from %s on another machine: its claim went unrenewed for longer than the lease by this machine's clock",
		secrets.Line(task, 64), c.who(h))
}

// notReleased says that task's claim, its task out of running here, could not be released
// (err): the next sync releases it (decide); or, when another machine took it over meanwhile
// (fenced), that it holds it, or held it and released it since. "" when the claim went with
// the line (deleted or rewound on the host meanwhile): nothing is left to release.
func (c *clone) notReleased(task string, err error) string {
	if errors.Is(err, claim.ErrFenced) {
		h, ok := c.cl.Holders()[task]
		if by, taken := c.cl.TakenOver(task); !ok && taken {
			return c.takenAndReleased(task, by)
		}
		if !ok || h.Owner == c.owner {
			return ""
		}
		return fmt.Sprintf("task %s was taken over by %s on another machine (this machine's claim lapsed) before its claim was released here: that machine may run it too; pick another task",
			secrets.Line(task, 64), c.who(h))
	}
	return fmt.Sprintf("task %s's claim could not be released on %s (%s): the next sync releases it",
		secrets.Line(task, 64), secrets.Line(c.remote, 40), unreached(err))
}

func (c *clone) holdsAny() bool {
	for _, h := range c.cl.Holders() {
		if h.Owner == c.owner {
			return true
		}
	}
	return false
}

// runningAny reports whether a task runs here: its claim may be on the line although the Doc
// does not say so (the call that claimed it was killed before recording it, or could not).
func (c *clone) runningAny() bool {
	for _, t := range c.wf.Tasks {
		if t.Status == workflow.TaskRunning {
			return true
		}
	}
	return false
}

// ClaimStep ends the warning of a task set running out of reach: cairn-mcp syncs by itself;
// the CLI names the command a person runs, who may run no cairn-mcp.
const ClaimStep = "the next sync claims it or says which machine holds it"

// RemoteStep is the step for a remote no sync gets past until someone acts on it there (its
// repository damaged, a claims line Cairn cannot read): git's own step deletes a ref every
// machine shares, so it is the person's, and cairn sync gives it to them. The CLI puts the
// person's own in its place.
const RemoteStep = "ask the user to run `cairn sync`, which says what to do there"

// blockedStep ends that warning when the remote fails every sync alike (nameable): its own
// step, said before, ends that.
const blockedStep = "no sync claims it until that is resolved"

// DoctorStep ends refusedNote: the agent's step goes through the user (doctor is a command of
// the person's); the CLI puts the person's own in its place.
const DoctorStep = "ask the user to run `cairn doctor`, which says what the host must allow"

// refusedNote says a task runs here without a claim because the host refuses the claims ref.
func refusedNote(task, remote string) string {
	return fmt.Sprintf("task %s is running here unclaimed: %s refuses the claims ref; %s",
		secrets.Line(task, 64), secrets.Line(remote, 40), DoctorStep)
}

// refused reports a claim the host's rules refuse, which no sync would do better at. A remote
// whose repository is damaged refuses every push too, until it is repaired: that claim is one
// made offline, which a sync after the repair confirms.
func refused(err error) bool {
	re, ok := errors.AsType[*gitremote.RefusedError](err)
	return errors.Is(err, gitremote.ErrRefused) && !(ok && re.Damaged())
}

// unreached is why a claim made offline did not reach the remote: that its repository is
// damaged or its claims line unreadable (RemoteStep ends that), err when it pushes elsewhere
// than it fetches (its step ends that) or a git of this clone held a ref's lock (git's words say
// so, and the step), that the call was interrupted, else that it could not be reached.
func unreached(err error) string {
	re, ok := errors.AsType[*gitremote.RefusedError](err)
	switch {
	case ok && re.Damaged():
		return "its repository is damaged: " + RemoteStep
	case errors.Is(err, remote.ErrUnreadable):
		return "its claims line there is not one Cairn can read: " + RemoteStep
	case nameable(err) || errors.Is(err, gitremote.ErrLocked):
		return err.Error()
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return "it could not be reached"
}

// interrupted reports a call interrupted (Ctrl-C) before the remote answered err, which is not
// the remote out of reach: the call changes nothing, rather than go on as offline.
func interrupted(ctx context.Context, err error) bool {
	return err != nil && errors.Is(ctx.Err(), context.Canceled)
}

func interruptedError(task string) error {
	return fmt.Errorf("interrupted: task %s was not changed", secrets.Line(task, 64))
}

// nameable reports an error of the remote that says more than that it could not be reached:
// its repository is damaged, it pushes elsewhere than it fetches, or the claims line holds
// what Cairn did not write (reached, but no sync can read it); or of this clone, which no
// sync gets past either.
func nameable(err error) bool {
	re, ok := errors.AsType[*gitremote.RefusedError](err)
	// A Cairn process of this clone stopped while it synced holds the clone's copy of the
	// remote's refs until it is resumed: its error says how.
	le, locked := errors.AsType[*durable.LockTimeoutError](err)
	return ok && re.Damaged() || errors.Is(err, gitremote.ErrSplit) || errors.Is(err, remote.ErrUnreadable) || locked && le.Stopped
}

// holds reports whether this clone held task at the last read of the line.
func (c *clone) holds(task string) bool {
	h, ok := c.cl.Holders()[task]
	return ok && h.Owner == c.owner
}

// who is a holder for people: the owner and how long ago it claimed, by the claimer's clock
// (so off by as much as the two clocks are: "in the future" when the claimer's is ahead, and
// not known when it is so far behind that the claim predates the workflow it is on).
func (c *clone) who(h claim.Holder) string {
	s := textsafe.Line(h.Owner, 80)
	switch {
	case h.At.IsZero():
	case h.At.Before(c.wf.CreatedAt):
		s += " (claimed at an unknown time: clock skew?)"
	case h.At.After(c.now()): // not workflow.Ago's "in the future (clock skew?)": one parenthesis
		s += " (claimed in the future: clock skew?)"
	default:
		s += " (claimed " + workflow.Ago(c.now().Sub(h.At)) + ")"
	}
	return s
}

// DoneStep ends finishedError: cairn-mcp syncs by itself; the CLI names the command a person
// runs, who may run no cairn-mcp.
const DoneStep = "the next sync brings its done here"

// finishedError refuses task, whose claim h released as done: finished on that machine.
func (c *clone) finishedError(task string, h claim.Holder) error {
	return fmt.Errorf("task %s was finished by %s on another machine: nothing was changed; %s; pick another task",
		secrets.Line(task, 64), textsafe.Line(h.Owner, 80), DoneStep)
}

func (c *clone) heldError(task string, h claim.Holder, left time.Duration) error {
	return fmt.Errorf("task %s is held by %s on another machine, free to take over in %s if not renewed: nothing was changed; pick another task",
		secrets.Line(task, 64), c.who(h), workflow.Age(left))
}

// keepAndMoveOn is the step for work done on a task another machine now holds, in the agent's
// tools (engine.KeepData); the CLI puts the person's command in its place.
const keepAndMoveOn = engine.KeepData + ", then pick another task"

func (c *clone) takenError(task string, h claim.Holder, ours bool) error {
	why := ""
	if ours {
		why = "; this machine's claim lapsed or was never confirmed"
	}
	return fmt.Errorf("task %s is held by %s on another machine%s: nothing was changed; %s",
		secrets.Line(task, 64), c.who(h), why, keepAndMoveOn)
}

// nowHeld says that task, running here, is held by h, another machine, since this clone's
// claim of it lapsed or went from the line.
func (c *clone) nowHeld(task string, h claim.Holder) string {
	return fmt.Sprintf("task %s, running here, is now held by %s on another machine (this machine's claim lapsed or went from %s): %s",
		secrets.Line(task, 64), c.who(h), secrets.Line(c.remote, 40), keepAndMoveOn)
}

// takenAndReleased says that task, running here, was taken over by h, another machine, which
// has released it since (its task done there, or set back): this machine no longer holds it.
func (c *clone) takenAndReleased(task string, h claim.Holder) string {
	return fmt.Sprintf("task %s was taken over by %s on another machine (this machine's claim lapsed), which has released it since: %s",
		secrets.Line(task, 64), c.who(h), keepAndMoveOn)
}

// lostNote says that task, whose claim this clone kept, was taken over by h, another machine,
// which has released it since when released: nowHeld or takenAndReleased for a task running
// here, doneTaken for one done here (its claim kept until the done is pushed).
func (c *clone) lostNote(task string, h claim.Holder, released bool) string {
	switch {
	case c.status(task) == workflow.TaskDone:
		return c.doneTaken(task, h)
	case released:
		return c.takenAndReleased(task, h)
	}
	return c.nowHeld(task, h)
}

// doneTaken says that task, done here and not yet pushed, was taken over by h, another
// machine, which may run it again: only the push of the done tells it the task is done.
func (c *clone) doneTaken(task string, h claim.Holder) string {
	return fmt.Sprintf("task %s, done here, was taken over by %s on another machine before the done was pushed (this machine's claim lapsed): that machine may run it again until the next sync pushes the done",
		secrets.Line(task, 64), c.who(h))
}

// takenOver says which tasks running here (or done here, not yet pushed), but task, this
// clone held when the call began and another machine holds as the call read the line, or took
// over and released since: said once, as the line saved then has them held there or by none,
// so the next sync finds them no longer this clone's (decide says those it reads).
func (c *clone) takenOver(task string) (notes []string) {
	now := c.cl.Holders()
	for _, t := range slices.Sorted(maps.Keys(c.restored.Holders)) {
		if t == task || c.restored.Holders[t].Owner != c.owner || !c.keeps(t) {
			continue
		}
		h, held := now[t]
		by, taken := c.cl.TakenOver(t)
		switch {
		case held && h.Owner != c.owner:
			notes = append(notes, c.lostNote(t, h, false))
		case !held && taken:
			notes = append(notes, c.lostNote(t, by, true))
		}
	}
	return notes
}

// runsUnclaimed records that task's run in rec, running, is this clone's, though the host
// refuses the claim that would show it (mirror.RunsElsewhere), for the next save of task.
func (c *clone) runsUnclaimed(rec *workflow.Record, task string) bool {
	i := slices.IndexFunc(rec.Tasks, func(t workflow.Task) bool { return t.ID == task && t.Status == workflow.TaskRunning })
	if i >= 0 {
		c.unclaimed[task] = rec.Tasks[i].StartedAt
	}
	return i >= 0
}

// settled forgets task's offline claim (confirmed, undone or moot), here and in the Doc.
func (c *clone) settled(task string) {
	delete(c.pending, task)
	c.save(task)
}

// settleIf forgets task's offline claim made at at, out of the turn: one made again since is
// kept.
func (c *clone) settleIf(task string, at time.Time) {
	delete(c.pending, task)
	id := c.wf.WorkflowID
	c.st.Update(Doc, func(cur []byte) ([]byte, error) {
		var s state
		if cur == nil || json.Unmarshal(cur, &s) != nil || s.Workflow != id || !s.Pending[task].Equal(at) {
			return nil, nil
		}
		delete(s.Pending, task)
		return json.Marshal(s)
	})
}

// Sync confirms the claims this clone made offline on the active workflow and renews (or
// releases) the ones it holds; run it before the workflow's own sync, so that a task whose
// claim another machine holds is set back here before this machine's revisions are pushed.
// revert sets a task back to pending through the state machine with a note; it is called
// outside the turn, so that it may wait for whatever a task tool call waits for. It returns
// one line per claim that was not confirmed, for people; an error after which the workflow's
// sync may still go on is a *NoticeError.
func Sync(ctx context.Context, o Options, revert func(task, note string) error) ([]string, error) {
	c, err := open(o)
	if c == nil && err == nil {
		if err := releaseEnded(ctx, o); err != nil {
			return nil, &NoticeError{Err: err} // no claim made offline waits: the workflow's sync goes on
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer c.st.Close()
	notes, last, err := c.sync(ctx, revert)
	last.releaseLeft(ctx) // after: out of reach, the sync's own part says so, once
	notes = append(slices.Clone(c.notices), notes...)
	if err != nil && len(last.pending) == 0 {
		err = &NoticeError{Err: err}
	}
	return notes, err
}

// NoticeError is a claims sync's error that leaves no claim made offline undecided: no task
// another machine holds is running here unknown to this clone, so the workflow's own sync may
// go on, with this error said as a notice (a broken claims line on the host must not stop the
// workflow's sharing).
type NoticeError struct{ Err error }

func (e *NoticeError) Error() string { return e.Err.Error() }
func (e *NoticeError) Unwrap() error { return e.Err }

// sync is Sync's work on c; last is the view whose pending claims are left undecided.
func (c *clone) sync(ctx context.Context, revert func(task, note string) error) (_ []string, last *clone, _ error) {
	if len(c.pending) == 0 && !c.holdsAny() && !c.runningAny() {
		return nil, c, nil // nothing of this clone's on the line: no network
	}
	var (
		t     = c
		notes []string
		lost  map[string]lostClaim
	)
	// Most syncs only renew: the line is read first out of the turn, so that task calls wait
	// for a sync only when it has claims to confirm or to release.
	routine, err := c.routine(ctx)
	if err != nil {
		return nil, c, err // out of reach: nothing to decide on, and no turn held meanwhile
	}
	if !routine {
		t = nil
		terr := c.turn(func(tc *clone, lerr error) {
			if t, err = tc, lerr; t == nil || err != nil {
				return
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			notes, lost, err = t.decide(ctx)
		})
		if terr != nil {
			return nil, c, terr
		}
		if t == nil {
			return nil, c, err
		}
	}
	for _, task := range slices.Sorted(maps.Keys(lost)) {
		l, by := lost[task], textsafe.Line(lost[task].Owner, 80)
		note, did := "claimed first by "+by+" on another machine", t.who(l.Holder)+" holds it"
		if l.done {
			note, did = "finished by "+by+" on another machine", by+" finished it on another machine"
		}
		what := "it went back to pending here"
		if rerr := revert(task, note); rerr != nil {
			what = "it is still running here; " + keepAndMoveOn // as update_task's refusal says
		}
		t.settleIf(task, t.pending[task])
		notes = append(notes, fmt.Sprintf("task %s was set running here offline, but %s: %s", secrets.Line(task, 64), did, what))
	}
	if err != nil {
		return notes, t, err
	}
	// Renewing needs no turn: a renewal of a claim released meanwhile is refused (fenced).
	renew := map[string]int64{}
	for task, h := range t.cl.Holders() {
		if h.Owner == t.owner && t.keeps(task) && t.cl.Due(task) {
			renew[task] = h.Rev
		}
	}
	if len(renew) > 0 {
		if err := t.cl.RenewAll(ctx, renew); err != nil {
			t.save("")
			return notes, t, err
		}
		now := t.cl.Holders() // the renewal's read may find one taken over meanwhile: said once
		for _, task := range slices.Sorted(maps.Keys(renew)) {
			if h := now[task]; h.Owner != "" && h.Owner != t.owner {
				notes = append(notes, t.lostNote(task, h, false))
			}
		}
	}
	if err := t.save(""); err != nil {
		return notes, t, err
	}
	return notes, t, t.over
}

// refresh reads the line on (claim.Refresh), saving a read cut short as far as it went: a line
// too long to read in one call's time is read on by the next, not from the start again.
func (c *clone) refresh(ctx context.Context) error {
	err := c.cl.Refresh(ctx)
	if err != nil && c.cl.State().Head != c.restored.Head {
		c.save("")
	}
	return err
}

// keeps reports whether this clone keeps its claim of task, renewed: running here, or done here
// and not yet pushed. Done is final, and reaches other machines only with a push: released (or
// left to lapse) before, the claim would let another machine that has not read the done run
// the task again.
func (c *clone) keeps(task string) bool {
	st := c.status(task)
	return st == workflow.TaskRunning || st == workflow.TaskDone && !c.pushed
}

// routine reads the line and reports whether this sync has nothing to do but renew: no claim
// made offline, and every claim this clone held before still its own and its task running
// here. A sync that is not routine decides in its turn, on the workflow read again.
func (c *clone) routine(ctx context.Context) (bool, error) {
	if len(c.pending) > 0 {
		return false, nil
	}
	before := c.cl.Holders()
	if err := c.refresh(ctx); err != nil {
		return false, err
	}
	now := c.cl.Holders()
	for task, h := range before {
		if h.Owner == c.owner && (now[task].Owner != h.Owner || now[task].Rev != h.Rev || !c.keeps(task)) {
			return false, nil
		}
	}
	for task, h := range now {
		if h.Owner == c.owner && !c.keeps(task) {
			return false, nil
		}
	}
	return true, nil
}

// lostClaim is a claim made offline that another machine's claim beat: the claim, and whether
// it was released as done (claim.Finished).
type lostClaim struct {
	claim.Holder
	done bool
}

// decide is Sync's part in the turn: it claims the tasks set running offline (returning those
// another machine holds or finished, for Sync to set back once out of the turn), claims again those
// running here whose claim went from the line (deleted or rewound on the host) and says which
// of those (and of those done here, not yet pushed) another machine now holds, or took over
// and released since, and releases the claims of tasks
// no longer running here (of one done, once the done is pushed).
func (c *clone) decide(ctx context.Context) (notes []string, lost map[string]lostClaim, err error) {
	lost = map[string]lostClaim{}
	var mine []string // held here before this sync read the line
	for task, h := range c.cl.Holders() {
		if h.Owner == c.owner {
			mine = append(mine, task)
		}
	}
	offline := maps.Clone(c.pending)
	for _, task := range slices.Sorted(maps.Keys(offline)) { // claimed, and said, in task order
		var err error
		if c.status(task) == workflow.TaskRunning { // else there is nothing left to claim
			_, err = c.cl.TryClaim(ctx, task)
		}
		var he *claim.HeldError
		var de *claim.DoneError
		held, done, byHost := errors.As(err, &he), errors.As(err, &de), refused(err)
		if err != nil && !held && !done && !byHost {
			c.save("")
			return notes, lost, err
		}
		switch {
		case held: // settled once set back, so a crash before that leaves it to the next sync
			lost[task] = lostClaim{Holder: he.Holder}
		case done:
			lost[task] = lostClaim{Holder: de.By, done: true}
		case byHost: // never to be confirmed: said once, not retried
			c.runsUnclaimed(c.wf, task)
			c.settled(task)
			notes = append(notes, refusedNote(task, c.remote))
		default:
			c.settled(task)
		}
	}
	if err := c.refresh(ctx); err != nil {
		return notes, lost, err
	}
	read := c.cl.Holders() // each task's entry changes only with its own claim below
	slices.Sort(mine)
	for _, task := range mine {
		if _, ok := offline[task]; ok || !c.keeps(task) {
			continue // the offline ones were claimed above
		}
		var err error
		h, held := read[task]
		if by, ok := c.cl.TakenOver(task); ok && !held {
			// Taken over, then released (done or set back there): not the line rewound.
			notes = append(notes, c.lostNote(task, by, true))
			continue
		}
		if c.status(task) != workflow.TaskRunning { // done here, not yet pushed: kept, not claimed again
			if held && h.Owner != c.owner {
				notes = append(notes, c.lostNote(task, h, false))
			}
			continue
		}
		if !held { // the line no longer has it: claimed again, or another machine is told it is free
			_, err = c.cl.TryClaim(ctx, task)
		}
		var he *claim.HeldError
		var de *claim.DoneError
		switch {
		case errors.As(err, &he):
			h, held = he.Holder, true
		case errors.As(err, &de): // said once: the line saved now has it finished there
			notes = append(notes, fmt.Sprintf("task %s, running here, was finished by %s on another machine: %s",
				secrets.Line(task, 64), textsafe.Line(de.By.Owner, 80), keepAndMoveOn))
		case refused(err):
			notes = append(notes, refusedNote(task, c.remote))
		case err != nil:
			c.save("")
			return notes, lost, err
		}
		if held && h.Owner != c.owner { // said once: the line saved now has it held there
			notes = append(notes, c.lostNote(task, h, false))
		}
	}
	release, finished := map[string]int64{}, map[string]bool{}
	for task, h := range c.cl.Holders() {
		if h.Owner == c.owner && !c.keeps(task) {
			release[task] = h.Rev
			finished[task] = c.status(task) == workflow.TaskDone // and pushed: no machine runs it again
		}
	}
	if len(release) > 0 {
		if err := c.cl.ReleaseAll(ctx, release, finished); err != nil {
			c.save("")
			return notes, lost, err
		}
	}
	return notes, lost, nil
}
