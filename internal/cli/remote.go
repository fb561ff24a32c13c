package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/store"
)

// The remote commands register themselves here, after commands.go's table (files initialise
// in name order), so the sync work stays in its own file.
func init() {
	register([]*command{
		{name: "remote enable", usage: "remote enable [REMOTE] [--yes] [--json]", max: 1, run: runRemoteEnable, onState: true, noState: true,
			lookup:  "Cairn syncs with no remote so named (git remote -v lists them)",
			summary: "Share workflows through the project's git remote (default origin).",
			doc: `Checks which refs the host accepts by pushing and deleting a probe ref: refs/cairn/*
when it can, else one branch per workflow under cairn-state/ (said so). Uses your own git,
with its credentials. Then cairn sync pushes and pulls, and cairn-mcp in every Claude Code
session of this project syncs in the background (CAIRN_SYNC_INTERVAL). Per clone. A remote
anyone can read (git ls-remote works without credentials: an http(s) or git:// address, or
an SSH address on github.com, gitlab.com, bitbucket.org or codeberg.org tried over https)
is refused unless --yes says sharing there is fine.`},
		{name: "remote status", usage: "remote status [--json]", run: runRemoteStatus, readOnly: true,
			summary: "Say whether sync is on and what is unpushed, without touching the network."},
		{name: "remote disable", usage: "remote disable [--json]", run: runRemoteDisable, onState: true, noState: true,
			summary: "Stop syncing this clone; nothing on the remote is deleted."},
		{name: "sync", usage: "sync [ID] [--json]", max: 1, run: runSync, onState: true, noState: true,
			lookup:  "no workflow has such an ID",
			summary: "Sync the active workflow with the remote once (for CI and people).",
			doc: `Pushes the revisions the remote lacks and pulls the ones this machine lacks. When
both moved, the remote's line (acknowledged first) wins and this machine's copy is kept
under archive/conflict-... With no active workflow, takes ID from the remote (or its only
one). After a lost race, this machine's changes (moves, tasks, variables, notes, approvals)
are replayed on the remote's line where the workflow still allows them and the remote did
not change the same thing first, and pushed; the rest is named and kept in the archive.
Exit 1 when the remote cannot be reached; local state is unchanged then.`},
	})
}

// publicCheckTimeout bounds remote enable's anonymous read of the remote.
const publicCheckTimeout = 15 * time.Second

// syncTimeout bounds one cairn sync end to end; a variable for the tests, which shorten it.
var syncTimeout = 2 * time.Minute

// remoteContext is a.ctx for a command that runs git against the remote, ended after timeout
// or by Ctrl-C, SIGTERM or SIGHUP (the terminal closed). Its git runs in a session of its own,
// so that it cannot prompt there (gitremote), and never has those signals: ending the context
// ends it. done, once the command's git has ended, ends cairn by the signal, as the signal
// would have (silently, its exit status the signal's); a second signal ends cairn at once.
func (a *app) remoteContext(timeout time.Duration) (ctx context.Context, done func()) {
	got := make(chan os.Signal, 1)
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) { // nohup's SIGHUP, a background job's SIGINT: left ignored
			signal.Notify(got, s)
		}
	}
	ctx, cancel := context.WithTimeout(a.ctx, timeout)
	ended := make(chan os.Signal, 1)
	go func() {
		select {
		case s := <-got:
			signal.Stop(got)
			a.sig.Lock()
			if a.sig.local { // no git to end: as without sharing
				endBy(s)
			}
			a.sig.signaled = true
			cancel()
			a.sig.Unlock()
			ended <- s
		case <-ctx.Done():
			ended <- nil
		}
	}()
	return ctx, func() {
		cancel()
		signal.Stop(got)
		if s := <-ended; s != nil {
			endBy(s)
		}
	}
}

// endBy ends cairn by the signal s, as s would have.
func endBy(s os.Signal) {
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second) // the signal ends cairn meanwhile
	}
}

// local makes a change here alone, with no git running (a task's update once its claim is
// made), under remoteContext: not at all when a signal came already, and a signal while it
// runs (waiting for the workflow lock) ends cairn at once, as without sharing, rather than
// once the change is made. It reports whether change ran.
func (a *app) local(change func()) bool {
	a.sig.Lock()
	if a.sig.signaled {
		a.sig.Unlock()
		return false
	}
	a.sig.local = true
	a.sig.Unlock()
	change()
	a.sig.Lock()
	a.sig.local = false
	a.sig.Unlock()
	return true
}

// remoteStore opens the store under the engine's state directory, for the sync settings and
// the journal the sync reads, with the project's archive retention (engine.OpenStore): a lost
// race's archive must not prune the older archives down to the store's default.
func remoteStore(e *engine.Engine, opts ...store.Option) (*store.Store, error) {
	st, err := e.OpenStore(opts...)
	if err != nil {
		return nil, &stateError{err}
	}
	return st, nil
}

// remoteSettings is remoteStore with the clone's sync settings read; the caller closes st. A
// missing state directory is not created: there sharing is off, and nothing is to be done.
func remoteSettings(e *engine.Engine) (*store.Store, mirror.Settings, error) {
	st, err := remoteStore(e, store.WithNoCreate())
	if err != nil {
		return nil, mirror.Settings{}, err
	}
	s, err := mirror.Load(st)
	if err != nil {
		st.Close()
		return nil, mirror.Settings{}, err
	}
	return st, s, nil
}

// syncOff says remote sync is off (where, as the caller words it) and the step that turns it
// on: cairn remote enable, or, where no git repository is, the step of its refusal there.
func syncOff(e *engine.Engine, where string) string {
	if !e.InGit() {
		return "remote sync is off: " + noGitToShare(e.ProjectRoot())
	}
	return "remote sync is off" + where + ": cairn remote enable [REMOTE] turns it on"
}

// noGitToShare is cairn remote enable's refusal where no git repository holds root.
func noGitToShare(root string) string {
	return engine.NoGit(root) + ", and remote sync shares workflows through one's remote: run it in a git project"
}

func runRemoteEnable(a *app, pos []string, e *engine.Engine) error {
	name, root := optional(pos, "origin"), e.ProjectRoot()
	ctx, done := a.remoteContext(syncTimeout)
	defer done()
	// The remote must be one of the project's: a URL typed here could carry a token into
	// the settings file.
	if err := gitremote.HasRemote(ctx, root, name, syncTimeout); err != nil {
		if errors.Is(err, gitremote.ErrNoGit) {
			return err
		}
		if !e.InGit() {
			// Not "no remote by that name": there is no repository to have one.
			return errors.New(noGitToShare(root))
		}
		if !gitremote.NoSuchRemote(err) {
			// Not git's "no such remote": git could not be asked (not installed, timed out).
			return fmt.Errorf("git could not tell whether this project has that remote: %v", err)
		}
		that := "by that name" // a name typed here is not echoed: it may be a URL with a token
		if len(pos) == 0 {
			that = name + " (the default REMOTE)"
		}
		return fmt.Errorf("this project has no git remote %s: git remote -v lists the ones it has", that)
	}
	// Before anything (the probe included) is pushed: a remote anyone can read (see
	// gitremote.Public) needs --yes; for others Cairn cannot tell, so everyone is told, once
	// sharing is on (a failed enable leaves nothing to disable).
	var readers string
	switch {
	case !gitremote.Public(ctx, root, name, publicCheckTimeout):
		readers = "cairn sync pushes each workflow's record (context, phases, tasks, notes, variables; not checkpoints or logs) to " +
			name + ": everyone who can read that remote can read them; if it is public, run cairn remote disable"
	case !a.opt.yes:
		return fmt.Errorf("%s can be read without credentials, so anyone could read the workflows cairn sync pushes there (context, phases, tasks, notes, variables): nothing was pushed; if that is fine, run cairn remote enable %s --yes",
			name, name)
	default:
		readers = name + " can be read without credentials: anyone can read the workflows cairn sync pushes there (context, phases, tasks, notes, variables)"
	}
	layout, err := gitremote.Probe(ctx, gitremote.Config{Dir: root, Remote: name})
	if _, kept := errors.AsType[*gitremote.KeptError](err); kept {
		a.warn(err.Error()) // the layout works: Cairn deletes no ref
		err = nil
	}
	if err != nil {
		return unreached(root, name, "nothing here changed", "cairn remote enable", err)
	}
	// Only now, with the remote checked, is the state directory made, for the settings.
	st, err := remoteStore(e)
	if err != nil {
		return err
	}
	defer st.Close()
	// Enabled again (after a disable, or as doctor advises after a host change), or on the
	// remote the last sync went through under its new name (git remote rename), what the last
	// sync left stays: remotesync's shareLeft needs it.
	prev, _ := mirror.Load(st)
	s, err := mirror.Enable(st, name, string(layout), renamedFrom(ctx, st, root, name, layout))
	if err != nil {
		return err
	}
	// The tasks running here are this clone's runs, which the next sync claims.
	if err := claimsync.Adopt(claimsync.Options{StateDir: e.StateDir(), Root: root, Getenv: a.getenv}, prev.Workflow); err != nil {
		step := "run cairn remote enable " + name + " again"
		if store.BrokenChain(err) { // again alone reads the same damaged line
			step = remotesync.RestoreStep + ", then " + step
		}
		a.warn("the tasks running here could not be queued to be claimed on " + name + " (" + err.Error() + "): " + step)
	}
	a.warn(readers)
	if layout == gitremote.Branches && !a.json {
		a.warn(gitremote.FallbackNote)
	}
	return a.answer(s, "remote %s enabled: cairn sync, and cairn-mcp in every Claude Code session of this project (in the background), share the active workflow under %s<id>", name, layout)
}

// renamedFrom is the remote the last sync of the settings in st went through when it is
// name's repository under another name (git remote rename): name's line of the workflow that
// sync was about (with layout) holds the head this clone last fetched from it. "" otherwise.
func renamedFrom(ctx context.Context, st *store.Store, root, name string, layout gitremote.Layout) string {
	prev, err := mirror.Load(st)
	if err != nil || prev.Remote == "" || prev.Remote == name || prev.Workflow == "" {
		return ""
	}
	was, err := gitremote.New(gitremote.Config{Dir: root, Remote: prev.Remote, Layout: gitremote.Layout(prev.Layout)})
	if err != nil {
		return ""
	}
	now, err := gitremote.New(gitremote.Config{Dir: root, Remote: name, Layout: layout})
	if err != nil || !now.Holds(ctx, was, prev.Workflow) {
		return ""
	}
	return prev.Remote
}

func runRemoteDisable(a *app, _ []string, e *engine.Engine) error {
	st, err := remoteStore(e, store.WithNoCreate())
	if err != nil {
		return err
	}
	defer st.Close()
	// Settings Load refuses (planted, unreadable, naming an address) are what disable is there
	// to clear; none of them is kept, nor repeated.
	prev, perr := mirror.Load(st)
	s, err := mirror.Disable(st)
	if err != nil {
		return err
	}
	if perr == nil && prev.Enabled {
		a.warn(heldLeft(st, prev.Remote, mirror.Lease(a.getenv)))
	}
	return a.answer(s, "remote sync off for this clone; nothing on the remote was deleted")
}

// heldLeft says which claims this clone leaves held on remoteName as sharing stops: no sync
// renews or releases them now, so other machines wait for them to lapse, and a task done here
// but not pushed is one they may run again. The claims may be of workflows no longer active
// here (archived or replaced since the last claims call, or replaced out of the remote's
// reach), which it then names; when the claims state is unreadable, that they are not known.
// "" when it holds none.
func heldLeft(st *store.Store, remoteName string, lease time.Duration) string {
	held, err := mirror.HeldHere(st)
	if err != nil { // the next claims call would rebuild it: none comes now
		// No step: a sync rebuilding it no longer knows which of the line's claims to release.
		return fmt.Sprintf("the claims state (%s.json) is not readable, so the claims this clone may hold on %s are not known: other machines cannot take those tasks until the claims lapse, within %s",
			mirror.ClaimsDoc, secrets.Line(remoteName, 40), workflow.Age(lease))
	}
	if len(held) == 0 {
		return ""
	}
	var r workflow.Record
	w, err := st.ReadWorkflow()
	if err != nil || json.Unmarshal(w.Data, &r) != nil {
		w.ID = ""
	}
	var of, done []string
	for _, h := range held {
		active := h.Workflow == w.ID
		var tasks []string
		for _, task := range h.Tasks {
			tasks = append(tasks, secrets.Line(task, 64))
			if t, ok := workflow.FindTask(&r, task); active && ok && t.Status == workflow.TaskDone {
				done = append(done, secrets.Line(task, 64))
			}
		}
		s := strings.Join(tasks, ", ")
		if !active {
			s += " of workflow " + secrets.Line(h.Workflow, 64) + ", no longer active here,"
		}
		of = append(of, s)
	}
	msg := fmt.Sprintf("this clone still holds the claims of %s on %s: other machines cannot take those tasks until the claims lapse, within %s", strings.Join(of, " and "), secrets.Line(remoteName, 40), workflow.Age(lease))
	if len(done) > 0 {
		msg += fmt.Sprintf(", and then may run %s again, whose done was not pushed", strings.Join(done, ", "))
	}
	return msg + fmt.Sprintf("; to release them, cairn remote enable %s and cairn sync", secrets.Line(remoteName, 40))
}

// remoteStatus is remote status's --json answer.
type remoteStatus struct {
	mirror.Settings
	Workflow string `json:"workflow_id,omitempty"`
	Local    int64  `json:"local_revision"`
	Mirrored int64  `json:"remote_revision"` // as of the last sync
	Unpushed int64  `json:"unpushed"`
	// Unconfirmed counts the tasks set running here offline whose claims no sync confirmed yet.
	Unconfirmed int `json:"unconfirmed_claims"`
	// Unreadable is set when the last fetch found the workflow's line on the remote one no
	// sync can read: remote_revision is then no revision of it.
	Unreadable bool `json:"remote_unreadable,omitempty"`
	// NoRemote is set when the clone has no git remote by the name sharing goes through any
	// more (renamed or removed): every sync fails until it is enabled on one it has.
	NoRemote bool `json:"remote_missing,omitempty"`
}

func runRemoteStatus(a *app, _ []string, e *engine.Engine) error {
	st, s, err := remoteSettings(e)
	if err != nil {
		return err
	}
	defer st.Close()
	out := remoteStatus{Settings: s}
	var unreadable *remote.LeftOut // the active workflow's line, when no sync can read it
	var unmatched int64            // the head of the remote's line of its id, when no sync matched it with it
	var toTake int                 // with none active, the remote's lines an idle sync could take, as of the last fetch
	var ends []string              // with none active, workflows finished here whose end the remote lacks
	if s.Enabled {
		w, err := st.ReadWorkflow()
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		for _, n := range w.Notices { // what this read repaired: no later one says it
			a.warn(n.Message)
		}
		out.Workflow, out.Local = w.ID, w.Revision
		h, err := mirroredHeads(a.ctx, e.ProjectRoot(), s) // local refs only: no network
		if errors.Is(err, gitremote.ErrNoGit) {
			// What it tells is this clone's: without git, the remote as the last sync left it.
			a.warn(err.Error() + "; the remote is as the last sync left it")
			h, err = remote.Heads{}, nil
			if s.Workflow != "" {
				h[s.Workflow] = s.Mirrored
			}
		}
		if ue, ok := errors.AsType[*remote.UnreadableError](err); ok {
			err = nil // another line than Cairn's: the others' heads are there
			for _, l := range ue.LeftOut() {
				if l.ID == w.ID {
					unreadable = &l
				}
			}
		}
		if err != nil {
			return err
		}
		out.Unreadable = unreadable != nil
		out.Mirrored = h[w.ID]
		if w.Data == nil {
			if toTake, ends, err = idleView(st, h); err != nil {
				return err
			}
		}
		if w.ID != s.Workflow && out.Mirrored > 0 {
			// No sync here matched the remote's line of this id with this workflow: it may be
			// another workflow under the same id (remotesync.ErrOtherWorkflow), whose head
			// is none of this one's.
			unmatched, out.Mirrored = out.Mirrored, 0
		}
		// Local, as the rest: a remote renamed or removed since fails every sync alike.
		out.NoRemote = gitremote.NoSuchRemote(gitremote.HasRemote(a.ctx, e.ProjectRoot(), s.Remote, syncTimeout))
		// Counted from where the last sync left both lines, as the shared line counts: the
		// head fetched since may be another clone's changes, which push none of these.
		if sh := mirror.Shared(s, out.Workflow, out.Local, time.Now()); sh != nil {
			out.Unpushed, out.Unconfirmed = sh.Unpushed, sh.Unconfirmed
		}
	}
	if a.json {
		return a.printJSON(out)
	}
	switch {
	case !s.Enabled:
		fmt.Fprintln(a.stdout, syncOff(e, ""))
	case out.Workflow == "" && out.NoRemote:
		fmt.Fprintf(a.stdout, "remote %s: no active workflow here; %s: %s\n", s.Remote, noRemote(s.Remote), remoteEnableStep)
	case out.Workflow == "" && (toTake > 0 || s.LastSync.IsZero()):
		fmt.Fprintf(a.stdout, "remote %s: no active workflow here; cairn sync takes the remote's\n", s.Remote)
	case out.Workflow == "":
		held := fmt.Sprintf(", and %s held none to take at the last sync (%s)", s.Remote, s.LastSync.UTC().Format(time.RFC3339))
		var steps []string
		if len(ends) > 0 {
			steps = append(steps, "pushes the end of "+strings.Join(ends, ", ")+", finished here")
		}
		switch {
		case s.Workflow != "":
			// The last sync was of one workflow, which fetches only its line: what else the
			// remote held then is not known here.
			held, steps = "", append(steps, "looks on "+s.Remote+" for one to take")
		case len(steps) == 0:
			steps = append(steps, "looks again")
		}
		fmt.Fprintf(a.stdout, "remote %s: no active workflow here%s; cairn sync %s\n", s.Remote, held, strings.Join(steps, ", and "))
	default:
		fmt.Fprintln(a.stdout, report.SharedLine(*mirror.Shared(s, out.Workflow, out.Local, time.Now())))
		last := "never synced"
		if !s.LastSync.IsZero() {
			last = "last sync " + s.LastSync.UTC().Format(time.RFC3339)
		}
		if out.NoRemote {
			fmt.Fprintf(a.stdout, "remote %s: %s at r%d here; %s: %s; %d unpushed\n",
				s.Remote, out.Workflow, out.Local, noRemote(s.Remote), remoteEnableStep, out.Unpushed)
			break
		}
		if unreadable != nil {
			fmt.Fprintf(a.stdout, "remote %s: %s at r%d here; its line on %s cannot be read (%s): cairn sync names the step (%s); %d unpushed\n",
				s.Remote, out.Workflow, out.Local, s.Remote, leftOutWhy(s.Remote, *unreadable), last, out.Unpushed)
			break
		}
		if unmatched > 0 {
			fmt.Fprintf(a.stdout, "remote %s: %s at r%d here; the line of %s on %s (at r%d) was never synced with it, so it may be another workflow under this id: cairn sync says which; %d unpushed\n",
				s.Remote, out.Workflow, out.Local, out.Workflow, s.Remote, unmatched, out.Unpushed)
			break
		}
		fmt.Fprintf(a.stdout, "remote %s: %s at r%d here, r%d on the remote (%s); %d unpushed\n",
			s.Remote, out.Workflow, out.Local, out.Mirrored, last, out.Unpushed)
	}
	return nil
}

// mirroredHeads is the remote's heads as this clone's copy of its refs holds them (s's remote,
// fetched by the last sync), read by git from the clone at root.
func mirroredHeads(ctx context.Context, root string, s mirror.Settings) (remote.Heads, error) {
	b, err := gitremote.New(gitremote.Config{Dir: root, Remote: s.Remote, Layout: gitremote.Layout(s.Layout)})
	if err != nil {
		return nil, err
	}
	return b.Mirrored(ctx)
}

// idleView is what an idle sync would find as of the last fetch (h, the remote's heads): how
// many of the remote's lines it could take (those of workflows not finished here; one another
// machine finished is counted, as telling it needs its records, which only a sync reads), and
// the workflows finished here whose end it would push.
func idleView(st *store.Store, h remote.Heads) (toTake int, ends []string, err error) {
	archives, err := remotesync.EndsHere(st)
	if err != nil {
		return 0, nil, err
	}
	done := map[string]bool{}
	for _, a := range archives {
		done[a.WorkflowID] = true
		if h[a.WorkflowID] > 0 && h[a.WorkflowID] < a.Revision {
			ends = append(ends, clean(a.WorkflowID))
		}
	}
	for id := range h {
		if !done[id] {
			toTake++
		}
	}
	slices.Sort(ends)
	return toTake, ends, nil
}

func runSync(a *app, pos []string, e *engine.Engine) error {
	st, s, err := remoteSettings(e)
	if err != nil {
		return err
	}
	defer st.Close()
	if !s.Enabled {
		return errors.New(syncOff(e, " for this clone"))
	}
	root := e.ProjectRoot()
	b, err := gitremote.New(gitremote.Config{Dir: root, Remote: s.Remote, Layout: gitremote.Layout(s.Layout)})
	if err != nil {
		return err
	}
	ctx, done := a.remoteContext(syncTimeout)
	defer done()
	// Claims first: a task another machine holds goes back here before this clone pushes.
	claims := func() error {
		notes, err := claimsync.Sync(ctx, claimsync.Options{StateDir: e.StateDir(), Root: root, Getenv: a.getenv},
			func(task, note string) error {
				_, err := e.UpdateTask(engine.TaskRequest{ID: task, Status: "pending", Note: note})
				return err
			})
		if a.json {
			a.warn(notes...) // stdout holds only the JSON
		} else {
			for _, n := range notes {
				fmt.Fprintln(a.stdout, clean(shellSteps(n, a.inClaudeCode())))
			}
		}
		if ne, ok := errors.AsType[*claimsync.NoticeError](err); ok {
			// No claim made offline waits on the claims line: the workflow is synced all the same.
			why, ok := notReached(s.Remote, ne.Err)
			if !ok {
				why = ne.Error()
			}
			a.warn("the task claims could not be synced: " + why)
			err = nil
		}
		return err
	}
	if err := claims(); err != nil {
		const what = "the task claims could not be synced, so nothing was pushed"
		if ue := unreached(root, s.Remote, what, "cairn sync", err); ue != err {
			return ue
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	out, err := remotesync.Sync(ctx, st, b, s.Remote, optional(pos, ""), remotesync.EngineReplayer(e))
	if errors.Is(err, remotesync.ErrOtherActive) {
		// One that ended (another machine's end, pulled by a sync) is no workflow in progress:
		// archived as the next session start would, it leaves the slot to the one asked for.
		freed, warnings := e.ArchiveEnded()
		a.warn(warnings...)
		if freed {
			out, err = remotesync.Sync(ctx, st, b, s.Remote, optional(pos, ""), remotesync.EngineReplayer(e))
		}
	}
	if errors.Is(err, remotesync.ErrOtherActive) {
		return fmt.Errorf("%s is active here, and cairn sync ID takes ID only when none is: cairn sync syncs %s", out.Workflow, out.Workflow)
	}
	if errors.Is(err, remotesync.ErrNoSuch) || errors.Is(err, remotesync.ErrChoose) {
		a.sharedLine(s.Remote, out)
		ids := strings.Join(slices.Sorted(maps.Keys(out.Available)), ", ")
		switch {
		case errors.Is(err, remotesync.ErrChoose):
			return fmt.Errorf("%s holds several workflows and none is active here: cairn sync ID with one of %s", s.Remote, ids)
		case ids == "":
			return fmt.Errorf("%s holds no workflow %s, nor any other to take", s.Remote, pos[0])
		}
		return fmt.Errorf("%s holds no workflow %s: cairn sync ID with one of %s", s.Remote, pos[0], ids)
	}
	if err != nil {
		if rerr := remotesync.RecordCut(st, s.Remote, out); rerr != nil {
			a.warn("what the sync took from " + s.Remote + " was not recorded, so cairn remote status counts it as unpushed until a sync goes through: " + rerr.Error())
		}
		return a.syncFailed(root, s.Remote, out, err)
	}
	a.warn(out.Notices...)
	if err := mirror.Synced(st, s.Remote, out.Workflow, out.Remote, time.Now()); err != nil {
		a.warn("the sync is done but its time was not recorded: " + err.Error())
	}
	if out.Taken {
		// The claims read above were of no workflow here: the one taken runs its tasks under
		// claims of its own, which say which of them run on another machine.
		if err := claims(); err != nil {
			a.warn("the task claims of " + out.Workflow + " could not be read: " + err.Error() + "; the next cairn sync reads them")
		}
	}
	if a.json {
		return a.printJSON(out)
	}
	a.sharedLine(s.Remote, out)
	for _, l := range out.LeftOut {
		fmt.Fprintln(a.stdout, leftOutLine(s.Remote, l))
	}
	switch {
	case out.ArchivedHere:
		fmt.Fprintf(a.stdout, "%s was archived here, so it was not taken back from %s; cairn list shows it\n", out.Workflow, s.Remote)
	case out.Workflow == "" && out.Shared > 0:
		fmt.Fprintf(a.stdout, "no other workflow on %s to take\n", s.Remote)
	case out.Workflow == "":
		fmt.Fprintf(a.stdout, "nothing to sync: no active workflow here and none on %s to take\n", s.Remote)
	case out.Conflict != nil:
		fmt.Fprintln(a.stdout, conflictLine(out, s.Remote, true))
	case out.Pushed > 0:
		fmt.Fprintf(a.stdout, "%s: pushed %d revision%s to %s, now r%d\n", out.Workflow, out.Pushed, workflow.Plural(out.Pushed), s.Remote, out.Remote)
	case out.Pulled > 0:
		said := endedThere(out)
		if said == "" && out.Taken {
			// None of it was here: the person must know whose work it is (cairn-mcp's notice says so).
			said = ": it was started on another machine, which may still be working in it"
		}
		fmt.Fprintf(a.stdout, "%s: pulled %d revision%s from %s, now r%d%s\n", out.Workflow, out.Pulled, workflow.Plural(out.Pulled), s.Remote, out.Local, said)
	default:
		fmt.Fprintf(a.stdout, "%s: up to date with %s at r%d\n", out.Workflow, s.Remote, out.Local)
	}
	return nil
}

// sharedLine says how many revisions of workflows finished here a sync pushed, if any.
func (a *app) sharedLine(remoteName string, out remotesync.Outcome) {
	if out.Shared > 0 && !a.json {
		fmt.Fprintf(a.stdout, "pushed %d revision%s of workflows finished here to %s\n", out.Shared, workflow.Plural(out.Shared), remoteName)
	}
}

// syncFailed is sync's error, err, after it did out. A race lost before the failure has
// changed this clone (its copy archived, the remote's line taken, its changes replayed but not
// pushed): that is said first, as a sync that ends well says it, with what the archive did.
func (a *app) syncFailed(root, remoteName string, out remotesync.Outcome, err error) error {
	a.warn(out.Notices...)
	if out.Conflict != nil {
		line := conflictLine(out, remoteName, false)
		if a.json {
			a.warn(line) // stdout holds only JSON, which a failed command does not print
		} else {
			fmt.Fprintln(a.stdout, line)
		}
	}
	here := "nothing here changed"
	switch {
	case out.Conflict != nil:
		here = "this clone changed as said above"
	case out.Pulled > 0:
		// A pull cut short: what it wrote here stays, and the next sync pulls the rest.
		here = fmt.Sprintf("%s: pulled %d revision%s from %s before that, now r%d here, the rest not yet", out.Workflow, out.Pulled, workflow.Plural(out.Pulled), remoteName, out.Local)
	}
	if errors.Is(err, store.ErrLineTooLarge) {
		return fmt.Errorf("%w; every sync fails the same way: cairn remote disable stops them, and nothing here or on %s is lost", err, remoteName)
	}
	if errors.Is(err, remotesync.ErrOtherWorkflow) {
		return fmt.Errorf("%w; every sync fails the same way until one of the two is started again under another id: cairn remote disable stops them meanwhile, and loses nothing", err)
	}
	if we, ok := errors.AsType[*store.WriteError](err); ok && errors.Is(we.Err, syscall.ENOSPC) {
		return diskFull(fmt.Sprintf("cannot write %s in %s (%v)", we.Name, we.Dir, we.Err), here, "cairn sync", we.NoInodes)
	}
	if ue := unreached(root, remoteName, here, "cairn sync", err); ue != err || out.Pulled == 0 {
		return ue
	}
	return fmt.Errorf("%w; %s", err, here)
}

// diskFull is the error of a command that a full disk stopped, cause saying what failed:
// that, what it left here (here) and the step, with exit 3 as every write a full disk refuses.
func diskFull(cause, here, command string, inodes bool) error {
	what, step := noRoom(inodes)
	return &codeError{code: ExitInternal, msg: fmt.Sprintf("%s: %s; %s; %s, then run %s again", cause, what, here, step, command)}
}

// noRoom says what a write refused with ENOSPC met, and the step before the command is run
// again. With inodes the file system had room for data but no free inode, where "the disk is
// full" would send a person to a df -h that shows free space.
func noRoom(inodes bool) (what, step string) {
	if inodes {
		return "its file system has no free inodes, though it may have room for data (df -i counts them)", "free some inodes there (each file takes one)"
	}
	return "the disk is full", "free some space"
}

// unreached is the error of a command (cairn sync, cairn remote enable) when git could not talk
// to the remote (a fetch or push that failed: the host down, the network gone, credentials
// refused): what git said, what that left here (here), and how to find out why before the
// command runs again; or when git could not write here for a full disk, the remote is no
// remote of the clone any more, or a lock file a stopped git left holds a ref here: that, here,
// and its own step. Other errors are returned as they are.
func unreached(root, remoteName, here, command string, err error) error {
	if errors.Is(err, gitremote.ErrNoGit) {
		return gitremote.ErrNoGit // not the remote's doing: its one step is installing git
	}
	if ge, ok := errors.AsType[*gitremote.GitError](err); ok {
		// This clone's git could not write: the disk is full, as a state write refused says (exit
		// 3), or out of inodes where git writes its objects (in a linked worktree .git is a file:
		// the worktree's own file system is looked at), which git may not say ("Unable to add
		// (null) to database").
		inodes := durable.NoFreeInodes(filepath.Join(root, ".git", "objects")) || durable.NoFreeInodes(root)
		if inodes || errors.Is(ge, syscall.ENOSPC) {
			return diskFull(err.Error(), here, command, inodes)
		}
	}
	why, ok := notReached(remoteName, err)
	if !ok {
		return err
	}
	switch {
	case errors.Is(err, gitremote.ErrNoRemote):
		return fmt.Errorf("%s: %s; %s", why, here, remoteEnableStep)
	case errors.Is(err, gitremote.ErrLocked):
		return fmt.Errorf("%s: %s; once that lock file is gone, run %s again", why, here, command)
	}
	return fmt.Errorf("%s: %s; %s, then run %s again", why, here, reachStep(remoteName, err), command)
}

// reachStep is the step after git failed to talk to the remote (err): a failed push may be a
// remote that lets this clone read but not write (a read-only key or token, a daemon that
// serves fetches only), where git fetch works and checking it finds nothing.
func reachStep(remoteName string, err error) string {
	if ge, ok := errors.AsType[*gitremote.GitError](err); ok && ge.Op == "push" {
		return "check that this clone can reach " + remoteName + " and push there (its credentials may allow only reading)"
	}
	return "check that git fetch " + remoteName + " works from this clone"
}

// remoteEnableStep is the step when the remote sharing goes through is no remote of the clone
// any more (renamed or removed): sharing through one it has.
const remoteEnableStep = "cairn remote enable REMOTE, with one that git remote -v lists, shares through it"

// noRemote says that remoteName is no longer a remote of the clone.
func noRemote(remoteName string) string {
	return remoteName + " is no longer a git remote of this clone (renamed or removed)"
}

// notReached says that the remote could not be reached and what git said, when err is a
// fetch or push that failed; ok is false for any other error.
func notReached(remoteName string, err error) (why string, ok bool) {
	ge, ok := errors.AsType[*gitremote.GitError](err)
	if !ok || ge.Op != "fetch" && ge.Op != "push" {
		return "", false
	}
	if ge.NoRemote {
		return noRemote(remoteName), true // git's line names a repository, which misleads
	}
	if errors.Is(ge, gitremote.ErrLocked) { // the remote was reached: this clone could not write
		return fmt.Sprintf("this clone's git could not update its copy of %s's refs (git %s: %s)", remoteName, ge.Op, ge.Stderr), true
	}
	said := cmp.Or(ge.Stderr, fmt.Sprint(ge.Err))
	if ge.Op == "push" { // reached or not: a read-only remote refuses a push as git's words say
		return fmt.Sprintf("%s did not take the push (git push: %s)", remoteName, said), true
	}
	return fmt.Sprintf("%s could not be reached (git %s: %s)", remoteName, ge.Op, said), true
}

// leftOutLine says why a sync left one of the remote's lines out, and its own step: a twin's or
// a damaged ref's told as a foreign line's ("delete it there") could delete someone's work.
// The ids and steps name refs anyone who can push there chose: cleaned like any stored text.
func leftOutLine(remoteName string, l remote.LeftOut) string {
	line := fmt.Sprintf("%s: %s was left out of this sync: %s", remoteName, clean(l.ID), leftOutWhy(remoteName, l))
	if l.Step != "" {
		line += "; " + clean(l.Step)
	}
	return line
}

// leftOutWhy says why a sync leaves l, one of the remote's lines, out (leftOutLine).
func leftOutWhy(remoteName string, l remote.LeftOut) string {
	ref := cmp.Or(clean(l.Ref), "its ref")
	switch l.Reason {
	case remote.CaseTwin:
		return "its id differs only in case from " + clean(l.Twin) + ", which is synced here, and this machine's file system holds the two refs as one file"
	case remote.Damaged:
		return ref + " points at an object " + remoteName + " does not have (its repository is damaged)"
	}
	return ref + " holds commits Cairn did not write"
}

// conflictLine says what a sync that lost a race did; pushed says whether the changes it
// replayed reached the remote. The session, phase and event kind are the remote's, written by
// whoever can push there: cleaned like any stored text.
func conflictLine(out remotesync.Outcome, remote string, pushed bool) string {
	c := out.Conflict
	who := ""
	if c.Session != "" {
		who = " by session " + textsafe.OneLine(c.Session)
	}
	replayed := ""
	if c.Replayed > 0 {
		then := " and pushed"
		if !pushed {
			then = ", for the next sync to push"
		}
		replayed = fmt.Sprintf("; %d of its %d change%s replayed on top%s", c.Replayed, c.Lost, workflow.Plural(c.Lost), then)
	}
	if n := c.NotReplayed(); n != "" {
		replayed += "; not replayed, kept only in the archive: " + n
	}
	line := fmt.Sprintf("%s: %s changed it first%s (%s, in %s, after r%d); this machine's r%d is kept in archive/%s%s; now at r%d",
		out.Workflow, remote, who, textsafe.OneLine(c.By.Kind), textsafe.OneLine(c.State), c.Common, c.Archive.Revision, c.Archive.Dir, replayed, out.Local)
	return line + endedThere(out)
}

// endedThere is ": it was completed on another machine" when what a sync took from the remote
// ended the workflow (Outcome.Ended), for the end of its line; "" while the workflow goes on.
func endedThere(out remotesync.Outcome) string {
	if out.Ended == "" {
		return ""
	}
	return ": " + remotesync.EndedThere(out)
}

// remoteChecks is doctor's check that the host accepts Cairn's refs, when sharing is on: it
// pushes and deletes a probe ref as remote enable does, then one in the claims line's namespace,
// and says in one line whether refs/cairn/* work, the branch fallback is in use, the host refuses
// both, or it refuses only the claims (tasks then run unclaimed).
func (a *app) remoteChecks(e *engine.Engine) []engine.Check {
	st, err := store.Open(e.StateDir(), store.WithNoCreate(), store.WithNoRepair()) // doctor creates and repairs nothing
	if err != nil {
		return nil // the state checks already say why
	}
	defer st.Close()
	s, err := mirror.Load(st)
	if err != nil {
		return []engine.Check{{Name: "remote refs", Detail: err.Error(), Fix: "run cairn remote enable again"}}
	}
	if !s.Enabled {
		return nil
	}
	var out []engine.Check
	// What the next sync would refuse of this machine's own line, before the remote is asked.
	if je, ok := errors.AsType[*remotesync.JournalError](remotesync.CheckJournal(st, s.Remote)); ok {
		out = append(out, engine.Check{Name: "workflow journal", Detail: je.Why, Fix: je.Step})
	}
	// Every sync fails while a stopped one holds the clone's copy of the remote's refs.
	if b, err := gitremote.New(gitremote.Config{Dir: e.ProjectRoot(), Remote: s.Remote}); err == nil {
		if te := b.StoppedSync(); te != nil {
			return append(out, engine.Check{Name: "remote refs", Detail: "every sync fails while a stopped Cairn process holds this clone's copy of the remote's refs: " + te.Path + " is held " + te.Who(),
				Fix: te.Resume() + ", then run cairn doctor again"})
		}
	}
	ctx, done := a.remoteContext(doctorProbeTimeout)
	defer done()
	got, err := gitremote.Probe(ctx, gitremote.Config{Dir: e.ProjectRoot(), Remote: s.Remote, Timeout: doctorProbeTimeout})
	kept, _ := errors.AsType[*gitremote.KeptError](err)
	if kept != nil {
		err = nil // the layout works: Cairn deletes no ref
	}
	c := engine.Check{Name: "remote refs"}
	if d, ok := damagedCheck(s.Remote, err); ok {
		return append(out, d)
	}
	switch {
	case errors.Is(err, gitremote.ErrRefused):
		c.Detail = s.Remote + " refuses both refs/cairn/* and cairn-state/* branches, so nothing can be shared" + hostSaid(err)
		c.Fix = "ask the host's admin to allow pushes to refs/cairn/* (or to cairn-state/* and cairn-claims/* branches), or run cairn remote disable"
	case errors.Is(err, gitremote.ErrNoGit):
		c.Detail, c.Fix = "no git on PATH, and sharing workflows runs git", "install git 2.29 or later"
	case errors.Is(err, gitremote.ErrNoRemote):
		c.Detail, c.Fix = noRemote(s.Remote), "run cairn remote enable REMOTE with one that git remote -v lists"
	case errors.Is(err, gitremote.ErrSplit):
		c.Detail = gitremote.SplitWhy(s.Remote) + ", so what Cairn pushes there is never read back"
		c.Fix = "run cairn remote enable REMOTE with a remote that fetches and pushes one repository"
	case err != nil:
		c.Detail, c.Fix = probeFailed(s.Remote, "", err)
	case got != gitremote.Layout(s.Layout):
		c.Detail = fmt.Sprintf("%s now takes %s<id>, but this clone is set up for %s<id>", s.Remote, got, s.Layout)
		c.Fix = "run cairn remote enable " + s.Remote + " again"
	default:
		c = claimsCheck(s.Remote, got, kept, gitremote.ProbeClaims(ctx, gitremote.Config{Dir: e.ProjectRoot(), Remote: s.Remote, Timeout: doctorProbeTimeout}, got))
	}
	return append(out, c)
}

// claimsCheck is doctor's line once the host took the workflow layout l: whether it also takes
// the claims line's namespace (probed with gitremote.ProbeClaims, which returned err), and,
// when the host kept a probe ref (kept, or err), that it keeps it.
func claimsCheck(remote string, l gitremote.Layout, kept *gitremote.KeptError, err error) engine.Check {
	if d, ok := damagedCheck(remote, err); ok {
		return d
	}
	if k, ok := errors.AsType[*gitremote.KeptError](err); ok {
		kept, err = cmp.Or(kept, k), nil
	}
	keeps := ""
	if kept != nil {
		keeps = "; " + kept.Error()
	}
	c := engine.Check{Name: "remote refs"}
	wf, claims := "refs/cairn/wf/*", "refs/cairn/claims/*"
	if l == gitremote.Branches {
		wf, claims = "cairn-state/* branches", "cairn-claims/* branches"
	}
	switch {
	case errors.Is(err, gitremote.ErrRefused):
		c.Detail = remote + " takes " + wf + " but refuses " + claims + ", so tasks run unclaimed: two machines may run the same task" + hostSaid(err)
		c.Fix = "ask the host's admin to allow pushes to " + claims + "; until then, agree who runs which task"
	case err != nil:
		c.Detail, c.Fix = probeFailed(remote, " its claims refs", err)
	case l == gitremote.Branches:
		c.OK, c.Detail = true, remote+" refuses custom refs; fallback in use: one branch per workflow under cairn-state/ (they show in the host's branch list and may start CI)"+keeps
	default:
		c.OK, c.Detail = true, remote+" accepts refs/cairn/*"+cmp.Or(keeps, " (a probe ref was pushed and deleted)")
	}
	return c
}

// probeFailed is doctor's line when git failed to probe what (" its claims refs", or "" for
// the workflows' refs) on remote with err: a probe pushes first, which a remote this clone
// may only read refuses as one out of reach fails it.
func probeFailed(remote, what string, err error) (detail, fix string) {
	detail = remote + " could not be reached to probe it" + what
	if ge, ok := errors.AsType[*gitremote.GitError](err); ok && ge.Op == "push" {
		detail = remote + " did not take the push that probes it" + what
	}
	return detail + " (cairn keeps working offline)", reachStep(remote, err) + ", then run cairn doctor again"
}

// hostSaid is, for doctor's line about a refusal, what the host said of it (a hook's reason,
// which may be why it refuses, whatever the refs), or "".
func hostSaid(err error) string {
	if re, ok := errors.AsType[*gitremote.RefusedError](err); ok && re.HostSaid != "" {
		return "; it said: " + re.HostSaid
	}
	return ""
}

// damagedCheck is doctor's line when the probe was refused because the remote's repository is
// damaged (gitremote.RefusedError.Damaged): every push there fails, whatever the host allows, so
// the host's rules are not what to change.
func damagedCheck(remote string, err error) (engine.Check, bool) {
	re, ok := errors.AsType[*gitremote.RefusedError](err)
	if !ok || !re.Damaged() {
		return engine.Check{}, false
	}
	c := engine.Check{Name: "remote refs", Detail: remote + "'s repository is damaged (a ref there points at an object it does not have), so it refuses every push"}
	if re.Broken != "" {
		c.Detail += ": " + re.Broken
		c.Fix = re.Step
	} else {
		c.Fix = "git fsck in that repository names the ref that points at a missing object"
	}
	return c, true
}

// doctorProbeTimeout bounds doctor's probe of the remote.
const doctorProbeTimeout = 30 * time.Second
