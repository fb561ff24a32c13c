package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/yamldoc"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Instructions go into the agent's system prompt: one paragraph that teaches the protocol. It
// reaches the model outside Cairn's tool results, so it names each tool as the model sees it.
const Instructions = "Cairn keeps this project's multi-phase workflow state across sessions, /clear and crashes. " +
	"Call " + engine.ToolPrefix + "resume_check when resuming work, and before going on after a result with a notice " +
	"(\"Notice: ...\": another process changed the workflow); " + engine.ToolPrefix + "start_workflow for new " +
	"multi-phase work, " + engine.ToolPrefix + "transition at each phase boundary, " + engine.ToolPrefix +
	"update_task as tasks change and " + engine.ToolPrefix + "complete_workflow at the end."

// Options configure a Server. Zero fields take the process's own values.
type Options struct {
	Open     Opener              // opens the engine; required
	Getenv   func(string) string // default os.Getenv
	WorkDir  string              // default os.Getwd (engine.Open's default)
	PPID     int                 // Claude Code's pid (the server's parent); default os.Getppid()
	Version  string              // reported in initialize
	Log      *log.Logger         // diagnostics, never stdout; default stderr
	Debounce time.Duration       // watcher debounce; default 50 ms
	NoWatch  bool                // do not watch the state directory
	// The plugin this server runs for (default CLAUDE_PLUGIN_ROOT) and the directory of its
	// binaries (default the executable's): a plugin update under it is noticed (update.go).
	PluginRoot, BinDir string

	syncRan     func() // called after each background sync run; set by tests (export_test.go)
	syncBackoff func() // called when a background sync waits between rounds; set by tests
	answering   func() // called when a request ran, before its answer is sent or dropped; set by tests
}

// Server adapts the engine to MCP. Tool calls, session and definition reloads and shutdown
// take turns on one token: serialising calls is what lets the server tell its own writes from another process's,
// and an engine call takes milliseconds, so nothing is lost by it.
type Server struct {
	opt Options
	mcp *server.MCPServer

	turn   chan struct{} // capacity 1: holding it is holding the engine
	update *updateCheck  // nil: not run from a stamped set
	// restart is closed once the plugin was updated: ServeStdio reads until the client is
	// quiet, answers what it read, and returns, and Claude Code starts the server again,
	// through the launcher, at the next call (update.go).
	restart     chan struct{}
	restartOnce sync.Once
	// stopBy, once ServeStdio stops reading, is when its shutdown ends (unix ns): Close waits
	// for a call no later, whoever calls it.
	stopBy atomic.Int64

	// Guarded by turn.
	eng     Engine
	openErr error
	stateFI fs.FileInfo // the state directory as opened, to notice it being deleted
	closed  bool
	session string           // the Claude Code session the engine acts for
	seen    *engine.Snapshot // the workflow as this server last left or saw it
	// What a call the client cancelled changed, its answer dropped (ServeStdio): the next
	// result says it.
	cancelledRan atomic.Pointer[string]
	watch        *watcher
	// The background sync with the remote (remote.go) and what it has to tell.
	sync      *syncer
	syncNotes []string
	syncLeft  *engine.Snapshot // the workflow as the last sync that brought a change left it
	syncMoved bool             // the last of syncNotes is a plain move's, which the next replaces
	pruned    bool             // the records of exited clients were pruned (once per server)
	pruning   sync.WaitGroup
}

// New builds a server and starts opening the engine in the background, so that initialize is
// answered without waiting for the state directory.
func New(opt Options) *Server {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	opt.PPID = cmp.Or(opt.PPID, os.Getppid())
	opt.Version = cmp.Or(opt.Version, "dev")
	opt.PluginRoot = cmp.Or(opt.PluginRoot, opt.Getenv("CLAUDE_PLUGIN_ROOT"))
	if opt.BinDir == "" {
		opt.BinDir = ownBinDir()
	}
	opt.Debounce = cmp.Or(opt.Debounce, 50*time.Millisecond)
	if opt.Log == nil {
		opt.Log = log.New(os.Stderr, "cairn-mcp: ", 0)
	}
	s := &Server{
		opt:     opt,
		turn:    make(chan struct{}, 1),
		session: opt.Getenv("CLAUDE_CODE_SESSION_ID"),
		update:  newUpdateCheck(opt.PluginRoot, opt.BinDir),
		restart: make(chan struct{}),
	}
	s.mcp = server.NewMCPServer("cairn", opt.Version,
		server.WithToolCapabilities(false),
		server.WithInstructions(Instructions),
		server.WithOutputSchemaValidation(),
		server.WithHooks(paramsHooks()),
	)
	for _, sp := range specs {
		s.mcp.AddTool(sp.tool(), s.handler(sp))
	}
	s.turn <- struct{}{}
	go func() {
		defer s.release()
		s.openLocked()
	}()
	return s
}

func (s *Server) acquire(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) release() { <-s.turn }

// reopenIfGone closes the engine when its state directory was deleted or replaced under the
// running server (git clean -fdx, rm -rf .claude), so that openLocked opens it afresh and the
// call writes to the directory that is there now, instead of to a deleted one for the rest
// of the session. One lstat a call. It reports whether it closed the engine.
func (s *Server) reopenIfGone() bool {
	if s.eng == nil || s.closed {
		return false
	}
	fi, err := os.Lstat(s.eng.StateDir())
	if err == nil && s.stateFI != nil && os.SameFile(fi, s.stateFI) {
		return false
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false // unreadable for another reason: the call reports it
	}
	s.opt.Log.Printf("the state directory %s was removed or replaced; opening it again", s.eng.StateDir())
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	if err := s.eng.Close(); err != nil {
		s.opt.Log.Printf("closing the old state directory: %v", err)
	}
	s.eng, s.stateFI = nil, nil
	return true
}

// openLocked opens the engine if it is not open, learns the current session and starts the
// watcher. A failure is kept and retried on the next call.
func (s *Server) openLocked() {
	if s.eng != nil || s.closed {
		return
	}
	// A project directory deleted while its session is open is not made again: Open refuses
	// (engine.ProjectGoneError), and serve says so.
	eng, err := s.opt.Open(engine.Config{
		Getenv: s.opt.Getenv, WorkDir: s.opt.WorkDir, SessionID: s.session, PID: s.opt.PPID,
		Actor: "mcp", YAML: yamldoc.Codec{},
	})
	if err != nil {
		// Retried at every call: the log says a failure when it is new, not once a call.
		if s.openErr == nil || s.openErr.Error() != err.Error() {
			s.opt.Log.Printf("opening the workflow state: %v", err)
		}
		s.openErr = err
		return
	}
	s.eng, s.openErr = eng, nil
	s.stateFI, _ = os.Lstat(eng.StateDir())
	s.reloadDefinitions() // a long-lived server loads them now, so broken files are logged
	// Watch first, then read: a session file written in between is then either read here or
	// reported by the watcher, never missed.
	if !s.opt.NoWatch && s.watch == nil {
		w, err := newWatcher(s, eng.StateDir(), eng.DefinitionsDir(), s.opt.Debounce)
		if err != nil {
			s.opt.Log.Printf("not watching the state directory (%v): session changes after /clear and edited workflow definitions are picked up only on restart", err)
		} else {
			s.watch = w
		}
	}
	s.startSyncer(eng)
	if !s.pruned {
		s.pruned = true
		s.pruning.Go(func() { s.pruneSessions(eng.StateDir()) })
	}
	// The SessionStart hook may have recorded a newer session than our environment says (the
	// server is not restarted on /clear). A file left by an exited client whose pid ours took is
	// not followed (followSession).
	s.followSession()
}

// followSession re-reads which session Claude Code is in (sessions/<ppid>.json) and, when it
// moved (after /clear), acts for the new one from now on. It reports whether it moved. A record
// whose client started at another time than our parent was left by an exited client whose pid
// ours took: its session is not ours, whether or not our SessionStart hook recorded its own yet.
func (s *Server) followSession() bool {
	sess, ok := s.eng.CurrentSession(s.opt.PPID)
	if !ok || sess.SessionID == "" || sess.SessionID == s.session || store.PIDTaken(s.opt.PPID, sess.ClientStart) {
		return false
	}
	s.session = sess.SessionID
	s.eng.SetSession(sess.SessionID)
	return true
}

// pruneLimit bounds how many names in sessions/ one start-up looks at (an lstat each, and a
// kill(pid, 0) for an old record): a large backlog is cleared over several starts.
const pruneLimit = 1000

// pruneSessions removes the session records of clients that exited an hour ago or more
// (store.PruneSessions), keeping our own client's. It runs once per server, in the background
// and with its own handle on the state directory, because nothing else removes them and the
// SessionStart hook, which writes them, has no time to spare. A failure only leaves the records
// for a later start.
func (s *Server) pruneSessions(stateDir string) {
	st, err := store.Open(stateDir, store.WithNoCreate())
	if err == nil {
		_, err = st.PruneSessions(s.opt.PPID, pruneLimit)
		st.Close()
	}
	if err != nil {
		s.opt.Log.Printf("not pruning the records of exited clients: %v", err)
	}
}

func (s *Server) reloadDefinitions() {
	s.eng.ReloadDefinitions()
	for _, w := range s.eng.Warnings() {
		s.opt.Log.Printf("warning: %s", w)
	}
}

// sessionChanged and definitionsChanged are the watcher's reactions.
func (s *Server) sessionChanged(ctx context.Context) {
	s.whenOpen(ctx, func() {
		if s.followSession() {
			s.opt.Log.Printf("session is now %s", s.session)
		}
	})
}

func (s *Server) definitionsChanged(ctx context.Context) { s.whenOpen(ctx, s.reloadDefinitions) }

// whenOpen runs fn holding the turn, unless the server is closed or has no engine.
func (s *Server) whenOpen(ctx context.Context, fn func()) {
	if s.acquire(ctx) != nil {
		return
	}
	defer s.release()
	if s.eng != nil && !s.closed {
		fn()
	}
}

// Close stops the watcher, waits for the call in progress (bounded by ctx, and by the end of
// ServeStdio's shutdown) and closes the engine. Calls after Close get an error result.
func (s *Server) Close(ctx context.Context) error {
	if by := s.stopBy.Load(); by != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Unix(0, by))
		defer cancel()
	}
	select {
	case s.turn <- struct{}{}: // free: taken even past stopBy, as closing then waits for nothing
	default:
		if err := s.acquire(ctx); err != nil {
			return fmt.Errorf("waiting for the call in progress: %w", err)
		}
	}
	defer s.release()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.sync != nil {
		// Its replay waits for the turn Close holds: cancelled first, it gives up.
		s.sync.stop()
		s.sync = nil
	}
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	s.pruning.Wait() // bounded by pruneLimit: nothing is removed once Close returns
	if s.eng == nil {
		return nil
	}
	err := s.eng.Close()
	s.eng = nil
	return err
}

var errShuttingDown = errors.New("cairn-mcp is shutting down; nothing was changed, and the call can be made again once the server is back")

// handler wraps a tool: strict decoding, one engine call, the change notice, and every failure
// as an isError result.
func (s *Server) handler(spec *toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, argErr := decodeArgs(spec, rawArguments(req))
		return s.serve(ctx, spec, a, argErr), nil
	}
}

// serve runs one call whose arguments were decoded (argErr, if any, is reported after the
// change notice and nothing is run).
func (s *Server) serve(ctx context.Context, spec *toolSpec, a args, argErr error) (res *mcp.CallToolResult) {
	if err := s.acquire(ctx); err != nil {
		return errorResult(fmt.Errorf("%s was not run: the call was cancelled while waiting for the previous one; nothing was changed", spec.name), "")
	}
	defer s.release()
	if s.closed {
		return errorResult(errShuttingDown, "")
	}
	// Every tool: reads repair what they find damaged, and the old binaries might take the
	// new version's files for damage.
	if err := s.updateRefusal(spec.name); err != nil {
		return errorResult(err, "")
	}
	gone := s.reopenIfGone()
	s.openLocked()
	if s.eng == nil {
		return errorResult(cmp.Or(argErr, openRefusal(spec.name, s.openErr)), "") // a bad argument is said first
	}
	eng := s.eng
	if spec.name == "start_workflow" || spec.name == "resume_check" {
		if err := s.awaitFirstSync(ctx, spec.name, eng); err != nil {
			return errorResult(err, "")
		}
	}
	// The watcher learns a new session after /clear only after its debounce; a call that
	// arrives first reads sessions/<ppid>.json itself (one small read), so it is never
	// recorded under the session /clear replaced.
	s.followSession()
	// The store's notices are told with whatever this call returns: the calls' own reads will
	// find the state already repaired.
	pre, told, preErr := eng.SnapshotNotices()
	preOK := preErr == nil
	changed := s.noticeFor(eng, pre, preOK)
	// Not ended by anyone: its state went with the directory. Telling the user is the one
	// step: resume_check has nothing of it to say, and the call was made for it.
	lost := gone && changed != "" && pre.WorkflowID == ""
	if lost {
		changed = fmt.Sprintf("Notice: the state directory was deleted or replaced since your last call, and workflow %s with it; nothing completed or archived it. Tell the user before going on.", textsafe.Line(s.seen.WorkflowID, 120))
	}
	notice := s.withSyncNotices(pre, preOK, changed)
	if ran := s.cancelledRan.Swap(nil); ran != nil {
		notice = strings.TrimSpace(*ran + " " + notice)
	}
	if spec.name == "resume_check" {
		notice = stepless(notice) // this result is that call
	}
	var o *outcome
	defer func() {
		if r := recover(); r != nil {
			s.opt.Log.Printf("panic in %s: %v", spec.name, r)
			res = errorResult(fmt.Errorf("%s hit an internal error in cairn-mcp (%v); state on disk is written atomically, so call resume_check to see where things stand", spec.name, r), notice)
			warnText(res, told)
		}
		s.settle(eng, pre, preOK, o)
		if o != nil && o.wrote {
			// Cancelled after it began, it ran on and its answer is not sent: the next result
			// says it. A cancel yet to come, before ServeStdio sends the answer, drops it too:
			// the request keeps the notice for that.
			where := ""
			if s.seen != nil && s.seen.WorkflowID == o.workflowID && s.seen.Phase != "" {
				where = fmt.Sprintf(" (workflow %s is at phase %s)", textsafe.Line(o.workflowID, 120), textsafe.Line(s.seen.Phase, 120))
			}
			ran := fmt.Sprintf("Notice: your cancelled call %s made its change before the cancel arrived%s; do not make it again.", spec.name, where)
			if note, ok := ctx.Value(requestNoteKey{}).(*requestNote); ctx.Err() != nil {
				s.cancelledRan.Store(&ran)
			} else if ok {
				note.ran = ran
			}
		}
	}()
	if lost && spec.name != "start_workflow" {
		return warnText(errorResult(fmt.Errorf("%s was not run, nothing was changed", spec.name), notice), told)
	}
	if argErr != nil {
		return warnText(errorResult(argErr, notice), told)
	}
	if spec.onActive && changed != "" && pre.WorkflowID != "" && pre.WorkflowID != s.seen.WorkflowID {
		// Made for the workflow this session last saw (or, when it saw none active, for one
		// that ended): applied to another one it would land in work the session knows
		// nothing of.
		return warnText(errorResult(fmt.Errorf("%s was not run, nothing was changed: the active workflow is not the one this session last saw (see the notice); call resume_check and decide there whether to go on in it", spec.name), notice), told)
	}
	// In-flight calls finish even when the client goes away or the server is told to stop:
	// the engine's own lock timeout bounds them.
	unlocked := func(fn func()) bool {
		s.release()
		fn()
		_ = s.acquire(context.Background()) // held again for the deferred release
		return !s.closed && s.eng == eng
	}
	o, err := spec.run(&call{ctx: context.WithoutCancel(ctx), live: ctx, srv: s.mcp, eng: eng, args: a, getenv: s.opt.Getenv, unlocked: unlocked})
	notice = s.withSyncNoticesDuring(notice)
	if err != nil {
		return warnText(errorResult(usersToFix(spec.name, err), notice), told)
	}
	o.warn(told)
	return toolResult(o, notice)
}

// openRefusal is a call's error when the state directory could not be opened (err). The fix
// is the user's: this server's environment was fixed when Claude Code started it, and what is
// in the way may be theirs. The step fits the cause: a file or a link where the directory goes
// is not made right by making anything writable.
func openRefusal(tool string, err error) error {
	const restart = "restart Claude Code (a variable set now does not reach this running server)"
	switch gone, isGone := errors.AsType[*engine.ProjectGoneError](err); {
	case isGone:
		return fmt.Errorf("%s was not run: %v; nothing was changed. Tell the user: the workflow state went with it; to go on, they restore it, or start Claude Code again in the project where it is now", tool, gone)
	case strings.Contains(err.Error(), engine.InTheWayLeft):
		// What comes after is the person's step (move the file, which may be anyone's): the
		// agent's is cairn doctor, which names it and its fix; a variable's is the user's.
		what, _, _ := strings.Cut(err.Error(), " "+engine.InTheWayLeft)
		if v := store.DirVariable(err); v != "" {
			return fmt.Errorf("%s was not run, nothing was changed: cairn could not open the workflow state: %s Tell the user: they set %s to a directory, or unset it, and %s", tool, what, v, restart)
		}
		return fmt.Errorf("%s was not run, nothing was changed: cairn could not open the workflow state: %s Cairn left it untouched: %s, then call %s again; %s", tool, what, store.DamagedStep, tool, notYours)
	case store.OtherUsers(err):
		// The workflow is in there: another directory would only hide it.
		return fmt.Errorf("%s was not run: cairn could not open the workflow state (%v); nothing was changed. Tell the user: %s; %s. Call the tool again once it is fixed", tool, err, othersChown, noRoomMaking)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// A link to nothing, or a file, on the way: no permission or room would make it right.
		return fmt.Errorf("%s was not run, nothing was changed: cairn could not open the workflow state (%v). Tell the user: they create the directory it names (a link's target), or set CAIRN_STATE_DIR to a directory and %s. Call the tool again once it is fixed", tool, err, restart)
	case errors.Is(err, durable.ErrSymlinkDir):
		return fmt.Errorf("%s was not run, nothing was changed: cairn could not open the workflow state (%v). Tell the user: cairn doctor, in a terminal, says how to make the link a real directory with its state kept; or they set CAIRN_STATE_DIR to a real directory and %s. Call the tool again once it is fixed", tool, err, restart)
	}
	// The file system's refusal is said as a write's is; otherwise the likeliest cause.
	what := cmp.Or(refusedFor(err), "they can make that directory writable")
	return fmt.Errorf("%s was not run: cairn could not open the workflow state (%v); nothing was changed. Tell the user: %s; they can also set CAIRN_STATE_DIR to a writable directory and %s; %s. Call the tool again once it is fixed", tool, err, what, restart, noRoomMaking)
}

// notYours ends the agent's step for something in the place of state: it is the user's to
// move, and may be someone's.
const notYours = "do not move or delete it yourself (it may be someone's)"

// noRoomMaking is said wherever the fix for a refusal is the user's room or permissions: a
// model with a shell could otherwise make room by deleting what is not its to delete.
const noRoomMaking = "do not delete or move files to make room"

// othersChown is the user's step for state another user owns (cairn run with sudo): the
// store's error gives the command; a mode change alone cannot be made on another's files.
const othersChown = "they can run the sudo chown command it gives, which gives the state directory back to this user"

// usersToFix is err with the model's step when it is a write that the file system refused (the
// disk full or the user's quota used up, the state or memory directory read-only or not
// permitted; the refusal names the directory), or a lock another process held past the wait:
// the store's words are a person's ("free some space"), or give no step the model can take;
// or damaged state, whose step it ends with the call made again. Other errors are returned as
// they are.
func usersToFix(tool string, err error) error {
	if _, ok := errors.AsType[*store.DamagedError](err); ok && strings.HasSuffix(err.Error(), store.DamagedStep) {
		// The store's step ends the text; the agent's, as for any state it cannot use, goes on
		// to the call made again.
		return &userFix{fmt.Sprintf("%s, then call %s again", err, tool), err}
	}
	if store.InTheWay(err) {
		// What is in the file's place may be someone's (another tool's snapshot, refused
		// rather than unusable, too): not the model's to move.
		return &userFix{fmt.Sprintf("%s: %s, then call %s again; %s", store.WithoutPersonStep(err), store.DamagedStep, tool, notYours), err}
	}
	if engine.Classify(err) != engine.StateUnusable {
		return err
	}
	if te, held := errors.AsType[*durable.LockTimeoutError](err); held {
		if te.Stopped {
			// Held until resumed: calls again would all give up the same way.
			return &userFix{fmt.Sprintf("%s. Tell the user that process is stopped and holds the lock until they resume it; call %s again once they have", engine.WithoutRetry(err), tool), err}
		}
		// The model cannot see when the holder finishes: it can call again, then tell the user.
		return &userFix{fmt.Sprintf("%s. Call %s again; if the lock is still held, tell the user which process holds it", engine.WithoutRetry(err), tool), err}
	}
	what := refusedFor(err)
	if what == "" {
		return err
	}
	msg, dont := store.WithoutPersonStep(err), noRoomMaking
	if errors.Is(err, syscall.EIO) {
		dont = "do not check or repair the disk yourself"
	}
	return &userFix{fmt.Sprintf("%s. Tell the user: %s; %s. Call %s again once it is fixed", msg, what, dont, tool), err}
}

// refusedFor says, as the model tells the user, why the file system refused a write (err):
// the disk full or out of inodes, the user's quota used up, the directory read-only or not
// permitted; "" when it was none of those.
func refusedFor(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC) && noInodes(err):
		return "the file system of the directory it names has no free inodes"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.EDQUOT):
		return "this user's disk quota there is used up"
	case store.OtherUsers(err):
		return othersChown
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return "they can make the directory it names writable"
	case errors.Is(err, syscall.EIO):
		return "the disk reported an I/O error, which they can check (the system log names the disk)"
	}
	return ""
}

// noInodes reports whether err, an ENOSPC, was for want of an inode: the store's write says
// so; the state directory's creation, refused before there was a store, is asked of the file
// system of the directory it was to be made in.
func noInodes(err error) bool {
	if _, ok := errors.AsType[*store.WriteError](err); ok {
		return store.NoInodes(err)
	}
	pe, ok := errors.AsType[*fs.PathError](err)
	return ok && durable.NoFreeInodes(filepath.Dir(pe.Path))
}

// userFix is an error whose text is the model's; Unwrap gives the engine's error.
type userFix struct {
	msg string
	err error
}

func (e *userFix) Error() string { return e.msg }
func (e *userFix) Unwrap() error { return e.err }

// callResume ends every change notice: what to do about the change.
const callResume = " Call resume_check before going on."

// stepless is notice without its step, for a result that is resume_check's or says to call it
// itself (errorResult): the step is said once.
func stepless(notice string) string { return strings.ReplaceAll(notice, callResume, "") }

// noticeFor says, in one line, how another process changed the workflow since this server's
// previous call; "" when nothing changed, the change was made for our own session, or !ok.
func (s *Server) noticeFor(eng Engine, now engine.Snapshot, ok bool) string {
	if !ok || s.seen == nil {
		return ""
	}
	old := *s.seen
	if now.WorkflowID == old.WorkflowID && now.Revision == old.Revision {
		return ""
	}
	// Our client is us whatever its session: a client runs one session at a time, so another
	// id from it is the session /clear replaced, whose hooks wrote after our last call. Our
	// session with no client known is us too; in another client (`claude --continue` in a
	// second terminal) it is not.
	// Which session it was is of no use to the model (it cannot reach it); that it was
	// another Claude Code session, rather than a person's command, is.
	by := "another process"
	if now.SessionID != "" && (now.PID > 0 && now.PID == s.opt.PPID || now.SessionID == s.session && (now.PID <= 0 || s.opt.PPID <= 0)) {
		if now.WorkflowID != old.WorkflowID || !byNoSession(eng, old) {
			return ""
		}
	} else if now.SessionID != "" {
		by = "another session"
	}
	id := func(x string) string { return textsafe.Line(x, 120) }
	switch {
	case now.WorkflowID == "":
		return fmt.Sprintf("Notice: workflow %s is no longer active; another process completed, expired or archived it since your last call."+callResume, id(old.WorkflowID))
	case now.WorkflowID != old.WorkflowID:
		return fmt.Sprintf("Notice: the active workflow changed since your last call: it is now %s at phase %s (revision %d), set by %s."+callResume, id(now.WorkflowID), id(now.Phase), now.Revision, by)
	default:
		return fmt.Sprintf("Notice: %s changed workflow %s since your last call: it is now at phase %s (revision %d, was %d)."+callResume, by, id(now.WorkflowID), id(now.Phase), now.Revision, old.Revision)
	}
}

// byNoSession reports whether a change to workflow old since its revision there was made by a
// process of no session (a person's cairn command), which leaves the owner as it was: the
// owner then still reads as this server's session. It reads the journal's lines since (the
// cost of those lines), and only when the owner says the changes were ours. Revisions a sync
// took from the remote are the sync notices' to tell.
func byNoSession(eng Engine, old engine.Snapshot) bool {
	evs, err := eng.HistorySince(old.WorkflowID, old.Revision)
	return err == nil && slices.ContainsFunc(evs, func(ev engine.Event) bool { return ev.Session == "" && ev.Kind != engine.SyncEvent })
}

// settle records the workflow as this call leaves it, so the next call can tell whether
// someone else moved it in between.
func (s *Server) settle(eng Engine, pre engine.Snapshot, preOK bool, o *outcome) {
	if o == nil || !o.wrote {
		if preOK {
			s.seen = &pre
		}
		return
	}
	if post, err := eng.Snapshot(); err == nil && (o.revision == 0 || post.WorkflowID == "" ||
		(post.WorkflowID == o.workflowID && post.Revision <= o.revision)) {
		s.seen = &post
	} else {
		// Someone wrote after us before we looked (or the look failed): remember our revision
		// so the next call reports their change.
		s.seen = &engine.Snapshot{WorkflowID: o.workflowID, Revision: o.revision}
	}
}

// rawArguments returns the call's arguments as sent.
func rawArguments(req mcp.CallToolRequest) json.RawMessage {
	if a, ok := req.GetRawArguments().(json.RawMessage); ok {
		return a
	}
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return json.RawMessage(`"unencodable arguments"`)
	}
	return b
}
