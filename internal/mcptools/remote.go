package mcptools

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// EnvSyncInterval overrides how often cairn-mcp syncs with the remote when sharing is on (a Go
// duration, "10s" by default); tests shorten it.
const EnvSyncInterval = "CAIRN_SYNC_INTERVAL"

const (
	defaultSyncInterval = 10 * time.Second
	// syncRunTimeout bounds one background sync, fetch, push and replay included: a remote
	// that hangs costs one poll, never a stuck server.
	syncRunTimeout = time.Minute
)

// firstSyncWait bounds how long start_workflow and resume_check wait for the first sync (see
// awaitFirstSync): a remote that hangs holds that sync up to syncRunTimeout, and the model
// waiting on the call all that time is told nothing. A variable for the tests.
var firstSyncWait = 10 * time.Second

// firstSyncLate is the notice of a call (tool) that went on without the first sync
// (awaitFirstSync), and what that leaves undone.
func firstSyncLate(tool string) string {
	undone := "a shared workflow that expired here may yet be taken back by it"
	if tool == "start_workflow" {
		undone = "a shared workflow that expired here while another machine kept it going is not taken back while the one started here is active"
	}
	return fmt.Sprintf("Notice: the first sync with the remote did not answer within %s (the remote is slow or out of reach), so %s went on without it: %s. The sync goes on in the background, and a later result says what it brings.", firstSyncWait, tool, undone)
}

// syncer runs remotesync in the background while sharing is on (cairn remote enable): once
// shortly after start, then every interval with jitter, one run at a time, each under
// syncRunTimeout. The engine's writes stay local; a sync pulls and pushes through the store.
// What a sync brought, and a failure, become one notice on the next tool result, never a
// tool error.
type syncer struct {
	s     *Server
	every time.Duration
	// failTold is the notice of the failure last told: a failure that says the same is only
	// logged until a sync succeeds.
	failTold string
	// claimsFailing: a claims failure the workflow's sync went past was told; the next one
	// is only logged until the claims sync again.
	claimsFailing bool
	// unreadableTold is the notice of the remote's lines a sync left out, as last told: the
	// same ones are not told again at every sync.
	unreadableTold string
	// chooseTold is the notice of the remote's workflows to choose from (none active here), as
	// last told: the same ones are not told again at every sync.
	chooseTold string
	// told is the notices (remotesync.Outcome.Notices) of the last sync that succeeded.
	told []string
	// first is closed once the first run has ended (or the loop stopped before it); kick asks
	// the loop to run that first one now (awaitFirstSync).
	first, kick chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startSyncer starts the background sync for an engine that knows its project root; the
// loop itself checks, each time, whether sharing is on, so cairn remote enable during a
// session takes effect without a restart.
func (s *Server) startSyncer(eng Engine) {
	if _, ok := eng.(syncEngine); !ok || s.sync != nil {
		return
	}
	every := defaultSyncInterval
	if v := s.opt.Getenv(EnvSyncInterval); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			every = d
		} else {
			s.opt.Log.Printf("%s is not a positive duration; syncing every %s", EnvSyncInterval, every)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	y := &syncer{s: s, every: every, ctx: ctx, cancel: cancel, first: make(chan struct{}), kick: make(chan struct{}, 1)}
	s.sync = y
	y.wg.Go(y.loop)
}

// syncEngine is an engine the background sync can work beside: it knows its project root and
// opens its state directory again with the project's options (engine.OpenStore): archive
// retention, so that a lost race's archive keeps the archives the project keeps, clock and
// lock wait.
type syncEngine interface {
	Engine
	ProjectRoot() string
	OpenStore(...store.Option) (*store.Store, error)
}

// jitter spreads d by ±20%, so that clones started together do not poll in step.
func jitter(d time.Duration) time.Duration {
	return d*4/5 + rand.N(d*2/5+1)
}

func (y *syncer) loop() {
	wait := jitter(min(y.every, time.Second)) // shortly after start
	t := time.NewTimer(wait)
	defer t.Stop()
	first := y.first
	defer func() {
		if first != nil {
			close(first)
		}
	}()
	for {
		select {
		case <-y.ctx.Done():
			return
		case <-t.C:
		case <-y.kick:
		}
		y.run()
		if first != nil {
			close(first)
			first = nil
		}
		if ran := y.s.opt.syncRan; ran != nil {
			ran()
		}
		t.Reset(jitter(y.every))
	}
}

// awaitFirstSync is for a call that must not act before the first sync (start_workflow,
// resume_check): a shared workflow this machine expired at session start while another kept it
// going is taken back only by a sync that finds nothing active here, so a workflow started
// before it would stay the only one. Called holding the turn, it lets go of it while the first
// sync, run now, ends (it needs the turn), and returns why the call (tool) cannot go on with
// eng, or nil. It waits firstSyncWait at most: past that the call goes on, and its result says
// why. A plugin update ends the wait at once, and so does the client's cancelling the call:
// neither is then run.
func (s *Server) awaitFirstSync(ctx context.Context, tool string, eng Engine) error {
	y := s.sync
	if y == nil {
		return nil
	}
	select {
	case <-y.first:
		return nil
	default:
	}
	select {
	case y.kick <- struct{}{}:
	default:
	}
	s.release()
	t := time.NewTimer(firstSyncWait)
	defer t.Stop()
	late := false
	select {
	case <-y.first:
	case <-ctx.Done():
	case <-s.restart:
	case <-t.C:
		late = true
	}
	_ = s.acquire(context.Background()) // held again for the caller's release
	if err := s.updateRefusal(tool); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s was not run: the call was cancelled while waiting for the first sync with the remote; nothing was changed", tool)
	}
	if s.closed || s.eng != eng {
		return errShuttingDown
	}
	if late {
		s.addSyncNoticeLocked(nil, firstSyncLate(tool))
	}
	return nil
}

// run is one sync, when sharing is on.
func (y *syncer) run() {
	if y.s.update.updated() {
		y.s.restartAsNew() // old binaries: the new ones sync (update.go)
		return
	}
	st, stateDir, root, err := y.openStore()
	if st == nil && err == nil {
		return // no engine open: nothing to sync
	}
	if err != nil {
		y.fail("", err)
		return
	}
	defer st.Close()
	s, err := mirror.Load(st)
	if err != nil || !s.Enabled {
		if err != nil {
			y.fail("", err)
		}
		return
	}
	b, err := gitremote.New(gitremote.Config{Dir: root, Remote: s.Remote, Layout: gitremote.Layout(s.Layout)})
	if err != nil {
		y.fail(s.Remote, err)
		return
	}
	ctx, cancel := context.WithTimeout(y.ctx, syncRunTimeout)
	defer cancel()
	claimsErr := y.claims(ctx, stateDir, root)
	if _, ok := errors.AsType[*claimsync.NoticeError](claimsErr); ok {
		// No claim made offline waits on the claims line: the workflow is synced all the same.
		y.s.opt.Log.Printf("task claims sync with %s failed: %v", s.Remote, claimsErr)
	} else if claimsErr != nil {
		y.fail(s.Remote, claimsFailed{claimsErr})
		return
	}
	g := &turnGuard{s: y.s, Backend: b}
	out, err := remotesync.Background(ctx, st, g, s.Remote, g.replay)
	g.drop()
	if err == nil && out.Taken {
		// The claims read above were of no workflow here: the one taken runs its tasks under
		// claims of its own, read before the notice tells the model which run elsewhere.
		if cerr := y.claims(ctx, stateDir, root); cerr != nil {
			y.s.opt.Log.Printf("task claims sync with %s after taking %s failed: %v", s.Remote, out.Workflow, cerr)
		}
	}
	choose := ""
	if errors.Is(err, remotesync.ErrChoose) {
		// Nothing active here and several on the remote: a person picks with cairn sync ID,
		// and the model, told nothing, would start another beside them.
		err, choose = nil, chooseNotice(s.Remote, out.Available)
	}
	if errors.Is(err, remotesync.ErrRunningElsewhere) {
		err, choose = nil, runningNotice(s.Remote, out.Available)
	}
	if err == nil && choose != y.chooseTold {
		y.chooseTold = choose
		if choose != "" {
			y.s.addSyncNotice(y.ctx, choose)
		}
	}
	if errors.Is(err, remotesync.ErrMoved) && out.Pulled == 0 && out.Conflict == nil {
		// Other machines pushing at the same moment: nothing lost, the next run retries. One
		// that first took revisions here or lost a race is told below, as any failure after it.
		y.s.opt.Log.Printf("sync with %s: %v", s.Remote, err)
		return
	}
	if y.ctx.Err() != nil {
		return // stopping: not a failure
	}
	if err != nil {
		if err := remotesync.RecordCut(st, s.Remote, out); err != nil {
			y.s.opt.Log.Printf("what the sync with %s took was not recorded: %v", s.Remote, err)
		}
		if out.Pulled > 0 || out.Conflict != nil {
			// What the sync did here before it failed (revisions taken, a race lost and this
			// machine's copy archived) stays, and is told as a sync that ends well tells it,
			// with the failure after it, told before or not: not all of it is pushed.
			y.failTold = ""
			y.s.syncBrought(y.ctx, s.Remote, out, y.failNotice(s.Remote, err))
			return
		}
		y.fail(s.Remote, err)
		return
	}
	y.failTold = ""
	if claimsErr == nil {
		y.claimsFailing = false
	} else if !y.claimsFailing {
		y.claimsFailing = true
		y.s.addSyncNotice(y.ctx, "Notice: the task claims could not be synced with "+secrets.Line(s.Remote, 40)+
			" (the log says why); the workflow was synced all the same, and the next sync retries the claims.")
	}
	if n := leftOutNotice(s.Remote, out.LeftOut); n != "" && n != y.unreadableTold {
		y.unreadableTold = n
		y.s.addSyncNotice(y.ctx, n)
	}
	if err := mirror.Synced(st, s.Remote, out.Workflow, out.Remote, time.Now()); err != nil {
		y.s.opt.Log.Printf("synced with %s but could not record it: %v", s.Remote, err)
	}
	out.Notices = y.untold(out.Notices)
	if out.Pulled > 0 || out.Conflict != nil {
		y.s.syncBrought(y.ctx, s.Remote, out, "")
	} else if len(out.Notices) > 0 {
		y.s.addSyncNotice(y.ctx, "Notice:"+syncSaid(out))
	}
}

// untold is, of a sync's notices, those the sync before did not tell: an end finished here and
// not shared is found again by every sync until the remote's line changes.
func (y *syncer) untold(notices []string) []string {
	var out []string
	for _, n := range notices {
		if !slices.Contains(y.told, n) {
			out = append(out, n)
		}
	}
	y.told = notices
	return out
}

// openStore opens the state directory of the engine the server holds now (it may have opened
// it again since the syncer started: the directory was removed under it), under the turn and
// with that engine's options; none when the server holds no engine. A directory removed
// (cairn uninstall) is not made again: sharing is off.
func (y *syncer) openStore() (st *store.Store, stateDir, root string, err error) {
	y.s.whenOpen(y.ctx, func() {
		e, ok := y.s.eng.(syncEngine)
		if !ok {
			return
		}
		stateDir, root = e.StateDir(), e.ProjectRoot()
		st, err = e.OpenStore(store.WithNoCreate())
	})
	return st, stateDir, root, err
}

// refNames joins the names of refs for a notice, within 200 characters: a cut that would make
// a secret of a token glued to more text ends before that word (secrets.Cut).
func refNames(names []string) string {
	s := secrets.JoinNames(names, ", ")
	return secrets.Line(s, 200)
}

// leftOutNotice says which of the remote's lines the syncs leave out, grouped by why, or "" for
// none. The steps differ by reason and each names one ref (taken for another, a step can delete
// someone's work), so the notice points to cairn sync for them rather than advising any: the
// user runs it: the step is theirs to take. A ref is named by anyone who can push to the
// remote: one whose name has a secret's shape is not repeated.
func leftOutNotice(name string, lines []remote.LeftOut) string {
	var foreign, twins, damaged []string
	for _, l := range lines {
		switch l.Reason {
		case remote.CaseTwin:
			twins = append(twins, secrets.Shown(l.ID)+" (twin of "+secrets.Shown(l.Twin)+", which syncs here)")
		case remote.Damaged:
			damaged = append(damaged, secrets.Shown(l.ID))
		default:
			foreign = append(foreign, secrets.Shown(l.ID))
		}
	}
	r := secrets.Line(name, 40)
	var parts []string
	if len(foreign) > 0 {
		parts = append(parts, r+" holds refs Cairn did not write: "+refNames(foreign))
	}
	if len(twins) > 0 {
		parts = append(parts, r+" holds workflow ids that differ only in case, which this machine's file system cannot keep apart: "+refNames(twins))
	}
	if len(damaged) > 0 {
		parts = append(parts, r+" holds refs to objects its repository does not have (it is damaged): "+refNames(damaged))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Notice: " + strings.Join(parts, "; ") + ". They are left out of the syncs, and the other workflows sync as before; ask the user to run `cairn sync`, which names the one step that ends each: delete no ref before reading it."
}

// chooseNotice says that the remote (name) holds the workflows open, none active here, and
// that taking one is the user's step: which is theirs to choose.
func chooseNotice(name string, open remote.Heads) string {
	ids := make([]string, 0, len(open))
	for id := range open {
		ids = append(ids, secrets.Shown(id))
	}
	slices.Sort(ids)
	return fmt.Sprintf("Notice: %s holds %d workflows and none is active here: %s. To go on with one of them here, ask the user to run `cairn sync ID` with its id.",
		secrets.Line(name, 40), len(ids), refNames(ids))
}

// runningNotice tells the model that the remote's only workflow (out.Available) was not taken
// here, a live session on another machine working in it (remotesync.ErrRunningElsewhere).
func runningNotice(name string, open remote.Heads) string {
	id := ""
	for k := range open {
		id = secrets.Shown(k)
	}
	// Not how recent that session is: the notice is told again whenever its text changes.
	return fmt.Sprintf("Notice: %s holds workflow %s, which a live session on another machine works in, so it was not taken here; a workflow started here is this machine's own. To work in %[2]s here as well, ask the user to run `cairn sync %[2]s`.",
		secrets.Line(name, 40), id)
}

// claimsFailed is the error of a claims sync (claims) that stopped the workflow's sync.
type claimsFailed struct{ error }

func (e claimsFailed) Unwrap() error { return e.error }

// claims syncs this clone's task claims before the workflow (claimsync.Sync): a task set
// running offline that another machine holds goes back to pending, under the server's turn,
// and the next tool result says who holds it.
func (y *syncer) claims(ctx context.Context, stateDir, root string) error {
	revert := func(task, note string) error {
		if err := y.s.acquire(ctx); err != nil {
			return err
		}
		defer y.s.release()
		if y.s.eng == nil || y.s.closed {
			return errors.New("cairn-mcp is shutting down")
		}
		_, err := y.s.eng.UpdateTask(engine.TaskRequest{ID: task, Status: "pending", Note: note})
		return err
	}
	notes, err := claimsync.Sync(ctx, claimsync.Options{StateDir: stateDir, Root: root, Getenv: y.s.opt.Getenv}, revert)
	for _, n := range notes {
		y.s.addSyncNotice(y.ctx, "Notice: "+sentence(n))
	}
	return err
}

// turnGuard makes a sync's local writes take turns with tool calls, without holding tool calls
// up on the network. remotesync reads the remote's line (Since) before it writes anything
// here; after a lost race it installs the remote's line in one store write and then replays
// this machine's changes: a tool call in between would act on a copy the replay has not yet
// caught up with. So the guard takes the server's turn once Since has its answer and keeps it until the sync
// ends, letting go for every network call (Since again, Append) and every wait between rounds.
type turnGuard struct {
	remote.Backend
	s    *Server
	held bool // only the sync's goroutine touches it
}

func (g *turnGuard) take(ctx context.Context) error {
	if g.held {
		return nil
	}
	if err := g.s.acquire(ctx); err != nil {
		return err
	}
	g.held = true
	return nil
}

func (g *turnGuard) drop() {
	if g.held {
		g.held = false
		g.s.release()
	}
}

func (g *turnGuard) Since(ctx context.Context, workflow string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, g, workflow, rev)
}

// Each reads without the turn, as Since does: the sync's fn only reads what it is handed.
func (g *turnGuard) Each(ctx context.Context, workflow string, rev int64, fn func(remote.Record) error) error {
	g.drop()
	if err := remote.Each(ctx, g.Backend, workflow, rev, fn); err != nil {
		return err
	}
	if err := g.take(ctx); err != nil {
		return err
	}
	if g.s.closed {
		return errors.New("cairn-mcp is shutting down")
	}
	return nil
}

// Append writes without the turn, as Each reads: data reads this machine's journal as it goes,
// and a change made meanwhile has the sync compare again.
func (g *turnGuard) Append(ctx context.Context, workflow string, after int64, data remote.Data) (int64, error) {
	g.drop()
	return g.Backend.Append(ctx, workflow, after, data)
}

// Wait is a backoff between the sync's rounds (remotesync.Waiter): the next round reads both
// lines again before it writes, so tool calls are served meanwhile.
func (g *turnGuard) Wait(ctx context.Context, d time.Duration) error {
	g.drop()
	if f := g.s.opt.syncBackoff; f != nil {
		f()
	}
	return remote.Sleep(ctx, d)
}

// replay re-applies this machine's lost changes through the engine, holding the server's
// turn as a tool call does.
func (g *turnGuard) replay(ctx context.Context, c *remotesync.Conflict) (int, error) {
	if err := g.take(ctx); err != nil {
		return 0, err
	}
	e, ok := g.s.eng.(*engine.Engine)
	if !ok || g.s.closed {
		return 0, nil
	}
	return remotesync.EngineReplayer(e)(ctx, c)
}

// fail logs a failed sync and, unless the failure before it in a row said the same, leaves a
// notice for the next tool result. Git's own words stay in the log: they may name a host or a
// credential helper.
func (y *syncer) fail(name string, err error) {
	if n := y.failNotice(name, err); n != "" {
		y.s.addSyncNotice(y.ctx, n)
	}
}

// failNotice logs a failed sync and returns fail's notice, "" when the failure before it in a
// row said the same.
func (y *syncer) failNotice(name string, err error) string {
	y.s.opt.Log.Printf("sync with %s failed: %v", name, err)
	what := "the remote settings could not be read"
	if name != "" {
		what = "cairn-mcp could not sync with " + secrets.Line(name, 40)
	}
	then, unsaid := "the next sync retries", what
	te, locked := errors.AsType[*durable.LockTimeoutError](err)
	je, broken := errors.AsType[*remotesync.JournalError](err)
	// A retry of these reads the same line and fails the same way.
	switch {
	case locked && te.Stopped: // held until it is resumed: a retry finds it held
		what += fmt.Sprintf(": a process of this clone (pid %d) was stopped (Ctrl-Z) holding a lock the sync needs", te.Holder.PID)
		then = "every sync fails the same way until the user " + strings.Replace(te.Resume(), "resume it", "resumes it", 1)
	case errors.Is(err, store.ErrLineTooLarge):
		what += ": the workflow changed both here and there, and the remote's line is too large to take here"
		then = "every sync fails the same way until the user stops them with cairn remote disable, which loses nothing"
	case errors.Is(err, gitremote.ErrNoRemote):
		what += ": it is no longer a git remote of this clone (renamed or removed)"
		then = "every sync fails the same way until the user shares through one the clone has: cairn sync tells them how"
	case errors.Is(err, gitremote.ErrSplit):
		what += ": it pushes to another repository than it fetches from, so what it pushes is never read back"
		then = "every sync fails the same way until the user shares through a remote that fetches and pushes one repository: cairn sync tells them how"
	case errors.Is(err, gitremote.ErrLocked):
		// A sync clears a lock file a killed git left: what holds it past git's wait is a git
		// that runs on, and removing its file would let it write over another's refs.
		what += ": another git in this clone held a lock on its copy of the remote's refs for longer than git waits"
		then = "the next sync retries; if the syncs keep failing so, ask the user whether a git of theirs here is stopped (Ctrl-Z): resuming it frees the lock"
	case errors.Is(err, remotesync.ErrOtherWorkflow):
		what += ": it holds another workflow, started elsewhere, under the id of the one active here"
		then = "every sync fails the same way until the user starts one of the two again under another id, or stops the syncs with cairn remote disable, which loses nothing"
	case errors.Is(err, gitremote.ErrRefused):
		// A hook's words are the only ones that say why (a freeze, a rule of the host's).
		what += ": the remote refused the push"
		if re, ok := errors.AsType[*gitremote.RefusedError](err); ok && re.HostSaid != "" {
			what += ", and said: " + re.HostSaid
		}
		then = "every sync fails the same way until the host takes it: cairn sync tells the user why"
	case broken: // its words name the journal and the revision; only the user has a copy to restore
		what += ": " + je.Why
		then = "every sync fails the same way; ask the user to " + je.Step
	case errors.Is(err, remote.ErrUnreadable):
		line := "its line of the workflow"
		if _, ok := errors.AsType[claimsFailed](err); ok {
			line = "its line of the task claims"
		}
		what += ": " + line + " is not one Cairn can read"
		then = "every sync fails the same way until the user acts on the remote: cairn sync tells them why"
	}
	if what == unsaid { // the log has git's words, which may name a host or a credential helper
		what += " (its log says why)"
	}
	if n := "Notice: " + what + "; your changes are kept here and " + then + "."; n != y.failTold {
		y.failTold = n
		return n
	}
	return ""
}

// stop ends the loop and waits for a run in progress, whose git is killed by the context.
func (y *syncer) stop() {
	y.cancel()
	y.wg.Wait()
}

// syncBrought leaves the notice for a change a sync brought from elsewhere: who moved the
// workflow, to what, and where this machine's copy is after a lost race.
// ctx is the syncer's: a Close holding the turn while it stops the syncer cancels the wait.
// then, when not "", is queued with it, in the same turn: the failure that ended the sync.
func (s *Server) syncBrought(ctx context.Context, remote string, out remotesync.Outcome, then string) {
	s.whenOpen(ctx, func() {
		if snap, err := s.eng.Snapshot(); err == nil {
			s.addSyncNoticeLocked(&snap, syncMessage(remote, out, snap))
			// A plain move's notice says only where the workflow is now: the next one's says it
			// better, and takes its place.
			s.syncMoved = out.Conflict == nil && out.Ended == "" && len(out.Notices) == 0
		}
		if then != "" {
			s.addSyncNoticeLocked(nil, then)
		}
	})
}

func syncMessage(remote string, out remotesync.Outcome, snap engine.Snapshot) string {
	id := func(x string) string { return textsafe.Line(x, 120) }
	r := secrets.Line(remote, 40)
	c := out.Conflict
	if c == nil && out.Ended != "" {
		return fmt.Sprintf("Notice: workflow %s ended (via %s): %s, at phase %s (revision %d).",
			id(out.Workflow), r, remotesync.EndedThere(out), id(snap.Phase), snap.Revision) + syncSaid(out) + callResume
	}
	if c == nil && out.Taken {
		// None of it was here: "moved" would tell the model a workflow of its own went on.
		return fmt.Sprintf("Notice: nothing was active here, so the sync took workflow %s from %s, started on another machine (which may still be working on it): it is at phase %s (revision %d).",
			id(out.Workflow), r, id(snap.Phase), snap.Revision) + syncSaid(out) + callResume
	}
	if c == nil {
		return fmt.Sprintf("Notice: another machine moved workflow %s (via %s): it is now at phase %s (revision %d).",
			id(out.Workflow), r, id(snap.Phase), snap.Revision) + syncSaid(out) + callResume
	}
	now := "it is now"
	if out.Ended != "" {
		now = remotesync.EndedThere(out) + ","
	}
	msg := fmt.Sprintf("Notice: another machine changed workflow %s first (via %s): %s at phase %s (revision %d); this machine's revision %d is kept in archive/%s",
		id(out.Workflow), r, now, id(snap.Phase), snap.Revision, c.Archive.Revision, id(c.Archive.Dir))
	if c.Replayed > 0 {
		was := "were"
		if c.Replayed == 1 {
			was = "was"
		}
		msg += fmt.Sprintf(", and %d of its %d change%s %s replayed on top", c.Replayed, c.Lost, workflow.Plural(c.Lost), was)
	}
	if n := c.NotReplayed(); n != "" {
		msg += "; not replayed: " + n
	}
	return msg + "." + syncSaid(out) + callResume
}

// syncSaid is what the sync told besides (Outcome.Notices: what making the conflict archive
// left, and where), a sentence each, capitalised, cut to 400 characters (cutMiddle).
func syncSaid(out remotesync.Outcome) string {
	var b strings.Builder
	for _, n := range out.Notices {
		b.WriteString(" " + sentence(cutMiddle(n, 400)))
	}
	return b.String()
}

// cutMiddle is n as one safe line (textsafe.Line) of at most max runes. One longer is cut in
// the middle, where a notice names its ids and archives (over 100 characters each): its start
// says what happened and its end the step, which a cut at the end lost. The long words are
// shortened first, all but the last, which the step acts on; then what is still too long loses
// its middle. No cut makes a secret of a token glued to more text: failing that, n is cut at
// the end (secrets.Line), as it was.
func cutMiddle(n string, max int) string {
	whole := textsafe.Line(n, 2*len(n)+2) // never cut: each byte is at most an escape's two runes
	if utf8.RuneCountInString(whole) <= max {
		return whole
	}
	words := strings.Split(whole, " ")
	last := -1
	for i, w := range words {
		if utf8.RuneCountInString(w) > longWord {
			if last >= 0 {
				r := []rune(words[last])
				words[last] = string(r[:24]) + textsafe.Ellipsis + string(r[len(r)-8:])
			}
			last = i
		}
	}
	cut := []rune(strings.Join(words, " "))
	if len(cut) > max {
		head, tail := string(cut[:max*3/8]), string(cut[len(cut)-(max-max*3/8-1):])
		if i := strings.LastIndexByte(head, ' '); i > 0 {
			head = head[:i]
		}
		if _, after, ok := strings.Cut(tail, " "); ok {
			tail = after
		}
		cut = []rune(head + " " + textsafe.Ellipsis + " " + tail)
	}
	if secrets.ScanString(string(cut)) != nil && secrets.ScanString(whole) == nil {
		return secrets.Line(n, max)
	}
	return string(cut)
}

// longWord is the length past which cutMiddle shortens a word of a notice: an id or an archive
// name, never one of Cairn's words.
const longWord = 40

// addSyncNotice queues a notice for the next tool result.
func (s *Server) addSyncNotice(ctx context.Context, msg string) {
	if err := s.acquire(ctx); err != nil {
		return
	}
	defer s.release()
	s.addSyncNoticeLocked(nil, msg)
}

// addSyncNoticeLocked queues msg; left, when not nil, is the workflow as the sync that brought
// msg's change left it. Such a notice is never dropped (it says where the workflow is now, and
// where a lost race put this machine's copy); the others stop at a few.
func (s *Server) addSyncNoticeLocked(left *engine.Snapshot, msg string) {
	switch {
	case left != nil && s.syncMoved:
		s.syncNotes[len(s.syncNotes)-1] = msg // the last queued, a plain move's: msg says it better
	case left != nil || len(s.syncNotes) < 3: // a flood says no more than the first few
		s.syncNotes = append(s.syncNotes, msg)
	}
	s.syncMoved = false
	if left != nil {
		s.syncLeft = left
	}
}

// withSyncNotices puts the queued sync notices before generic, the notice of another process's
// change; generic is dropped when the workflow is as the sync left it (the sync's notice
// already says who moved it, and better).
func (s *Server) withSyncNotices(pre engine.Snapshot, preOK bool, generic string) string {
	if len(s.syncNotes) == 0 {
		return generic
	}
	out := strings.Join(s.syncNotes, " ")
	if generic != "" && !(preOK && s.syncLeft != nil && pre.WorkflowID == s.syncLeft.WorkflowID && pre.Revision == s.syncLeft.Revision) {
		out += " " + generic
	}
	s.syncNotes, s.syncLeft, s.syncMoved = nil, nil, false
	return resumeOnce(out)
}

// resumeOnce keeps, of notices that each say what changed, the instruction of the last that
// says it: what to do about them is said once.
func resumeOnce(notices string) string {
	if n := strings.Count(notices, callResume); n > 1 {
		notices = strings.Replace(notices, callResume, "", n-1)
	}
	return notices
}

// withSyncNoticesDuring adds to notice, a call's, the sync notices queued while the call let
// go of the turn (a person asked to approve): they tell what happened before the call's own
// change landed, so its result says them; the next call's would say the workflow is where it
// was before that change.
func (s *Server) withSyncNoticesDuring(notice string) string {
	during := s.withSyncNotices(engine.Snapshot{}, false, "")
	if during == "" || notice == "" {
		return notice + during
	}
	return resumeOnce(notice + " " + during)
}
