package mcptools_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/yamldoc"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// clone is one machine's checkout of a project shared through a bare repository over file://,
// with sharing on and approval gates off.
func clone(t *testing.T, bare string) (dir string, getenv func(string) string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "proj")
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "remote", "add", "origin", "file://" + bare}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	state := filepath.Join(dir, ".claude", "cairn")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(`{"approvals": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin", Layout: string(gitremote.Refs)}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": filepath.Join(base, "home"), "CLAUDE_PROJECT_DIR": dir,
		"CLAUDE_CODE_SESSION_ID": "s-" + filepath.Base(base), mcptools.EnvSyncInterval: "100ms"}
	return dir, func(k string) string { return vars[k] }
}

// bareRepo is an empty bare repository, shared.git, in a folder of its own.
func bareRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	bare := filepath.Join(t.TempDir(), "shared.git")
	git(t, "", "init", "-q", "--bare", bare)
	return bare
}

// machineA is a clone of remote whose cairn-mcp server has started workflow wf-1.
func machineA(t *testing.T, remote, context string) (dir string, c *client.Client) {
	t.Helper()
	dir, c, _ = machineARuns(t, remote, context)
	return dir, c
}

// machineARuns is machineA, with the count of its server's background sync runs so far; setup
// runs on the clone before its server starts.
func machineARuns(t *testing.T, remote, context string, setup ...func(dir string, env func(string) string)) (dir string, c *client.Client, runs *atomic.Int64) {
	t.Helper()
	return machineAWith(t, remote, context, func(o mcptools.Options) mcptools.Options { return o }, setup...)
}

// machineAWith is machineARuns, its server's options passed through with.
func machineAWith(t *testing.T, remote, context string, with func(mcptools.Options) mcptools.Options, setup ...func(dir string, env func(string) string)) (dir string, c *client.Client, runs *atomic.Int64) {
	t.Helper()
	dir, env := clone(t, remote)
	for _, f := range setup {
		f(dir, env)
	}
	runs = new(atomic.Int64)
	_, c = startServer(t, with(mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, runs)))
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"`+context+`","workflow_id":"wf-1"}`)
	return dir, c, runs
}

// waitRuns waits until n more background sync runs than now have ended: the last of them
// began after the call. It counts runs, not time: a loaded machine makes each run slow, and
// the server lets one run take a minute (syncRunTimeout), so only past n of those is a run
// that never ends a failure.
func waitRuns(t *testing.T, runs *atomic.Int64, n int64) {
	t.Helper()
	want := runs.Load() + n
	waitWithin(t, runsEnd(n), func() bool { return runs.Load() >= want })
}

// runsEnd is how long n background sync runs may take before one that never ends is a failure.
func runsEnd(n int64) time.Duration { return time.Duration(n) * (time.Minute + time.Second) }

// machine is a second clone with an engine and a state of its own, which syncs as cairn sync
// does.
type machine struct {
	dir string
	env func(string) string
	e   *engine.Engine
	st  *store.Store
	gr  *gitremote.Backend
}

func machineB(t *testing.T, bare string) *machine {
	t.Helper()
	m := new(machine)
	m.dir, m.env = clone(t, bare)
	var err error
	if m.e, err = engine.Open(engine.Config{Getenv: m.env, WorkDir: m.dir, Actor: "test", YAML: yamldoc.Codec{}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.e.Close() })
	if m.st, err = store.Open(m.e.StateDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.st.Close() })
	if m.gr, err = gitremote.New(gitremote.Config{Dir: m.dir, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	return m
}

// pickedUp is machineARuns with machine B, which has taken the workflow A's server pushed.
func pickedUp(t *testing.T, bare, context string) (aDir string, c *client.Client, runs *atomic.Int64, b *machine) {
	t.Helper()
	aDir, c, runs = machineARuns(t, bare, context)
	return aDir, c, runs, pickUp(t, bare, runs)
}

// pickUp is machine B, which has taken the workflow that A's server (counting its sync runs
// in runs) started and pushed to bare.
func pickUp(t *testing.T, bare string, runs *atomic.Int64) *machine {
	t.Helper()
	b := machineB(t, bare)
	waitRuns(t, runs, 2) // a sync begun after start_workflow has ended
	if out := b.sync(t); out.Local < 1 {
		t.Fatalf("B found %d workflows after A's server synced: A's server did not push on its own", out.Local)
	}
	return b
}

func (m *machine) trySync(t *testing.T) (remotesync.Outcome, error) {
	return remotesync.Sync(testCtx(t), m.st, m.gr, "origin", "", nil)
}

func (m *machine) sync(t *testing.T) remotesync.Outcome {
	t.Helper()
	out, err := m.trySync(t)
	if err != nil {
		t.Fatalf("sync on B: %v", err)
	}
	return out
}

// nextNotice waits for a tool result that starts with a notice, of a change made before the
// call, and returns its first line. It counts the server's background sync runs, not time: a
// run begun after the call tells the change, so no notice by the end of the second run from
// now is a failure, however slow the machine.
func nextNotice(t *testing.T, c *client.Client, runs *atomic.Int64) string {
	t.Helper()
	return nextNoticeOf(t, c, runs, "get_vars")
}

// nextNoticeOf is nextNotice, calling the tool name (without arguments).
func nextNoticeOf(t *testing.T, c *client.Client, runs *atomic.Int64, name string) string {
	t.Helper()
	want := runs.Load() + 2
	var got string
	waitWithin(t, runsEnd(2), func() bool {
		ended := runs.Load() >= want // before the call: the run ended before the result was made
		got = text(mustOK(t, c, name, `{}`))
		return ended || strings.HasPrefix(got, "Notice:")
	})
	notice, _, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(notice, "Notice:") {
		t.Fatalf("no notice after two sync runs begun since the change: %s", clip(got))
	}
	return notice
}

// TestBackgroundSyncBringsOtherMachinesChanges: cairn-mcp on machine A shares the workflow it
// starts; machine B picks it up and moves it; A's next tool result says so in one notice, the
// generic "another process" notice not repeated. A remote that goes away is one notice, not a
// tool error, and the tools keep working offline.
func TestBackgroundSyncBringsOtherMachinesChanges(t *testing.T) {
	bare := bareRepo(t)
	aDir, c, runs, b := pickedUp(t, bare, "share me")
	if _, err := b.e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	if out := b.sync(t); out.Pushed != 1 {
		t.Fatalf("B pushed %d revisions, want 1", out.Pushed)
	}

	notice := nextNotice(t, c, runs)
	noticeSays(t, notice, "another machine moved workflow", "via origin", "phase plan", "revision 2", "resume_check")
	if strings.Contains(notice, "another process") || strings.Count(notice, "Notice:") != 1 {
		t.Errorf("the change is told more than once: %q", notice)
	}
	noNotice(t, c, "get_vars", "notice repeated")
	// The server recorded its syncs in the mirror document the hooks read.
	ast, err := store.Open(filepath.Join(aDir, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	defer ast.Close()
	if s, err := mirror.Load(ast); err != nil || s.LastSync.IsZero() || s.Workflow != "wf-1" || s.Mirrored != 2 {
		t.Errorf("mirror after the server's syncs: %+v, %v; want wf-1 mirrored at r2", s, err)
	}

	// The remote goes away: one notice, tools keep working, local writes stay.
	if err := os.Rename(bare, bare+".gone"); err != nil {
		t.Fatal(err)
	}
	notice = nextNotice(t, c, runs)
	if !strings.Contains(notice, "could not sync with origin") || !strings.Contains(notice, "kept here") {
		t.Errorf("failure notice = %q", notice)
	}
	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"plan.md"}}`)
	waitRuns(t, runs, 2) // more failed polls, one at least begun after the notice was read
	noNotice(t, c, "get_vars", "a failure streak is told more than once")
}

// TestBackgroundSyncTellsWhereTheWorkflowIsNow: B moves the workflow four times, A's server
// pulling each while the model makes no call; the next tool result says the phase and revision
// the workflow is at now, once. Before, the notices queued were capped at the first three, so
// the model read "it is now at ... (revision 4)" with the workflow at revision 5.
func TestBackgroundSyncTellsWhereTheWorkflowIsNow(t *testing.T) {
	_, c, runs, b := pickedUp(t, bareRepo(t), "follow me")
	if _, err := b.e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if i > 0 {
			if _, err := b.e.SetVars(map[string]string{"PLAN_PATH": fmt.Sprintf("p%d.md", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if out := b.sync(t); out.Pushed != 1 {
			t.Fatalf("B pushed %d revisions, want 1", out.Pushed)
		}
		waitRuns(t, runs, 2) // a run of A's begun after the push has ended: it pulled it
	}
	notice := nextNotice(t, c, runs)
	if !strings.Contains(notice, "it is now at phase plan (revision 5)") || strings.Count(notice, "Notice:") != 1 {
		t.Errorf("notice %q, want one saying the workflow is now at phase plan (revision 5)", notice)
	}
}

// TestBackgroundSyncDuringApproval: while the person is asked to approve leaving plan (the
// server's turn let go), B changes the workflow and A's server pulls it; the move then lands on
// top. The transition's own result says what the sync brought during it; before, that notice
// waited for the next call and told the model "it is now at phase plan" with the workflow
// already in implement.
func TestBackgroundSyncDuringApproval(t *testing.T) {
	bare := bareRepo(t)
	dir, env := clone(t, bare)
	if err := os.WriteFile(filepath.Join(dir, ".claude", "cairn", "config.json"), []byte(`{}`), 0o600); err != nil { // approvals on
		t.Fatal(err)
	}
	runs := new(atomic.Int64)
	srv := mcptools.New(mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, runs))
	t.Cleanup(func() { srv.Close(context.Background()) })
	b := machineB(t, bare)
	who := &person{action: mcp.ElicitationResponseActionAccept, yes: true}
	c := connectEliciting(t, srv, who)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate","workflow_id":"wf-1"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	waitRuns(t, runs, 2) // a sync begun after the move has ended: it pushed it
	if out := b.sync(t); out.Local < 2 {
		t.Fatalf("B found %d revisions after A's server synced, want 2", out.Local)
	}
	who.while = func() {
		if _, err := b.e.SetVars(map[string]string{"PLAN_PATH": "b.md"}); err != nil {
			t.Error(err)
		}
		if out := b.sync(t); out.Pushed != 1 {
			t.Errorf("B pushed %d revisions, want 1", out.Pushed)
		}
		waitRuns(t, runs, 2) // A's server pulled it
	}
	got := text(mustOK(t, c, "transition", `{"to":"implement"}`))
	if !strings.Contains(got, "another machine moved workflow wf-1 (via origin)") {
		t.Errorf("the transition's result does not say what the sync brought during it: %q", got)
	}
	noNotice(t, c, "get_vars", "the next call is told again, or told the workflow is where it was before the move")
}

// TestSyncStopsWithTheServer: Close returns promptly with a sync loop running, and no notice
// comes when sharing is off.
func TestSyncStopsWithTheServer(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	bare := filepath.Join(t.TempDir(), "shared.git")
	dir, env := clone(t, bare) // the bare repository does not exist: every sync would fail
	st, err := store.Open(filepath.Join(dir, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.Save(st, mirror.Settings{Remote: "origin"}); err != nil { // off
		t.Fatal(err)
	}
	st.Close()
	var runs atomic.Int64
	srv := mcptools.New(mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242, Log: quietLog(), NoWatch: true}, &runs))
	c := connect(t, srv)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"local only"}`)
	waitRuns(t, &runs, 2)
	noNotice(t, c, "get_vars", "sharing off, yet")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close with the sync loop running: %v", err)
	}
}

// TestBackgroundSyncLeavesARemovedStateDirectoryGone: the state directory removed under a
// running server (cairn uninstall, rm -rf .claude/cairn) is not made again by the background
// sync: with no state directory sharing is off. Before, every sync opened the store, which
// made the directory and its .gitignore again within seconds.
func TestBackgroundSyncLeavesARemovedStateDirectoryGone(t *testing.T) {
	dir, _, runs := machineARuns(t, bareRepo(t), "remove me")
	state := filepath.Join(dir, ".claude", "cairn")
	// A sync run in progress may write a file into it while it is removed ("directory not
	// empty", seen under load): removed again, as a person would.
	for i := 0; ; i++ {
		err := os.RemoveAll(state)
		if err == nil {
			break
		}
		if i == 100 {
			t.Fatal(err)
		}
	}
	waitRuns(t, runs, 2) // a run begun after the removal has ended
	if _, err := os.Lstat(state); err == nil {
		t.Errorf("the background sync made the removed state directory %s again", state)
	}
}

// TestBackgroundSyncLostRace: A is cut off from the remote while both machines move the
// workflow; B's move lands first. When A's link comes back, its server keeps B's line, archives
// A's copy, and the next tool result says who moved it, to what, and where A's work is. The
// archive keeps the archives A's project keeps (archive_retention 6, not the store's default
// 5), and the notice names the one retention removed.
func TestBackgroundSyncLostRace(t *testing.T) {
	bare, link := linkedRemote(t)
	aDir, c, runs := machineARuns(t, link, "race me", func(dir string, env func(string) string) {
		state := filepath.Join(dir, ".claude", "cairn")
		if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(`{"approvals": false, "archive_retention": 6}`), 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := engine.Open(engine.Config{Getenv: env, WorkDir: dir, Actor: "test", YAML: yamldoc.Codec{}})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for i := 1; i <= 6; i++ { // six finished workflows: as many as the project keeps
			if _, err := e.Start(engine.StartRequest{Type: "debug", Context: "old", WorkflowID: fmt.Sprintf("old-%d", i)}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Complete("done"); err != nil {
				t.Fatal(err)
			}
		}
	})
	raceWhileCut(t, bare, link, c, runs, "set_vars", `{"vars":{"PLAN_PATH":"a.md"}}`)
	notice := nextNotice(t, c, runs)
	noticeSays(t, notice, "another machine changed workflow wf-1 first (via origin)", "phase plan", "revision 2 is kept in archive/conflict-wf-1-",
		"not replayed: variable PLAN_PATH: the other machine changed it first", ". Retention removed 1 older archive: old-1-", "resume_check")
	if strings.Count(notice, "Notice:") != 1 {
		t.Errorf("the change is told more than once: %q", notice)
	}
	archives, err := filepath.Glob(filepath.Join(aDir, ".claude", "cairn", "archive", "old-*"))
	if err != nil || len(archives) != 5 {
		t.Errorf("A's archives of finished workflows after the race: %v (%v); want old-2 to old-6, the project keeping 6", archives, err)
	}
}

// linkedRemote is a bare repository and a link to it, through which machine A reaches it, that
// raceWhileCut cuts and restores.
func linkedRemote(t *testing.T) (bare, link string) {
	t.Helper()
	bare = bareRepo(t)
	link = filepath.Join(filepath.Dir(bare), "link.git")
	if err := os.Symlink(bare, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	return bare, link
}

// raceWhileCut makes machine B, which takes the workflow A's server (c, counting its sync runs
// in runs) pushed through link, win a race: A, cut off, makes its r2 with the tool name
// (arguments args); B moves the workflow to plan and sets PLAN_PATH to b.md and pushes both;
// then A's link heals.
func raceWhileCut(t *testing.T, bare, link string, c *client.Client, runs *atomic.Int64, name, args string) {
	t.Helper()
	b := pickUp(t, bare, runs)

	if err := os.Remove(link); err != nil { // A is cut off
		t.Fatal(err)
	}
	nextNotice(t, c, runs) // the cut is noticed once

	mustOK(t, c, name, args) // A's r2, not pushed
	if _, err := b.e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.SetVars(map[string]string{"PLAN_PATH": "b.md"}); err != nil { // B's lands first
		t.Fatal(err)
	}
	if out := b.sync(t); out.Pushed != 2 {
		t.Fatalf("B pushed %d revisions, want 2", out.Pushed)
	}
	if err := os.Symlink(bare, link); err != nil { // the link heals
		t.Fatal(err)
	}
}

// TestBackgroundSyncServesCallsDuringItsBackoff: after a lost race whose replay applied A's
// change, the sync waits a little before the round that pushes it; a tool call made during
// that wait is served, the sync having let go of the server's turn. Before, the wait (up to
// 320 ms a round) held the turn and every tool call waited behind it.
func TestBackgroundSyncServesCallsDuringItsBackoff(t *testing.T) {
	bare, link := linkedRemote(t)
	var c *client.Client
	var backoffs, served atomic.Int64
	ready := make(chan struct{})
	during := func() {
		backoffs.Add(1)
		<-ready
		if res, err := c.CallTool(testCtx(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "get_vars", Arguments: map[string]any{}}}); err == nil && !res.IsError {
			served.Add(1)
		}
	}
	_, c, runs := machineAWith(t, link, "back off", func(o mcptools.Options) mcptools.Options { return mcptools.DuringSyncBackoff(o, during) })
	close(ready)
	raceWhileCut(t, bare, link, c, runs, "set_vars", `{"vars":{"WF_BRANCH":"a"}}`)
	notice := nextNotice(t, c, runs)
	if !strings.Contains(notice, "1 of its 1 change was replayed on top") {
		t.Fatalf("notice %q: A's change was not replayed", notice)
	}
	if backoffs.Load() == 0 || served.Load() != backoffs.Load() {
		t.Errorf("tool calls served during the sync's %d backoff(s): %d", backoffs.Load(), served.Load())
	}
}

// TestBackgroundSyncTellsAnEndNotShared: A completes the workflow while cut off and B moves it
// on the remote meanwhile; A's next sync pulls nothing, and its end cannot be shared on the
// remote's line. The next tool result says so, once. Before, cairn-mcp told a sync's notices
// only when it pulled something or lost a race, and this one never reached the model.
func TestBackgroundSyncTellsAnEndNotShared(t *testing.T) {
	bare, link := linkedRemote(t)
	_, c, runs := machineARuns(t, link, "finish me")
	raceWhileCut(t, bare, link, c, runs, "complete_workflow", `{"outcome":"done here"}`)
	notice := nextNoticeOf(t, c, runs, "resume_check") // nothing active here: get_vars would fail
	noticeSays(t, notice, "Notice: Workflow wf-1, finished here at r2, was not shared: the remote's line of it was changed elsewhere after r1 and is at r3", "archive/wf-1-")
	waitRuns(t, runs, 2) // more idle syncs, one at least begun after the notice was read
	noNotice(t, c, "resume_check", "the end not shared is told again")
}

// TestBackgroundSyncTellsForeignRefsOnce: a ref under refs/cairn/wf/ on the remote that Cairn
// did not write is left out of the server's idle syncs, and the next tool result says so once,
// naming it, not after every sync.
func TestBackgroundSyncTellsForeignRefsOnce(t *testing.T) {
	bare := bareRepo(t)
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-x")
	c, runs, notice := idleServer(t, bare)
	noticeSays(t, notice, "origin holds refs Cairn did not write", "wf-x")
	waitRuns(t, runs, 2) // more idle syncs, one at least begun after the notice was read
	noNotice(t, c, "resume_check", "the foreign ref is told again")
}

// storeCounter is the real engine, counting the stores its OpenStore opens in opens.
type storeCounter struct {
	*engine.Engine
	opens *atomic.Int64
}

func (e storeCounter) OpenStore(o ...store.Option) (*store.Store, error) {
	e.opens.Add(1)
	return e.Engine.OpenStore(o...)
}

// TestBackgroundSyncUsesTheReopenedEngine: after the state directory is removed and a tool call
// opens it again, the background sync opens the store through the engine the server holds now,
// with its options (archive retention, clock, lock wait), not through the first engine's.
func TestBackgroundSyncUsesTheReopenedEngine(t *testing.T) {
	dir, env := clone(t, bareRepo(t))
	var engines []*atomic.Int64 // the stores each engine opened, by the order of opening
	var mu sync.Mutex
	generation := func(i int) *atomic.Int64 {
		mu.Lock()
		defer mu.Unlock()
		return engines[i]
	}
	open := func(cfg engine.Config) (mcptools.Engine, error) {
		e, err := engine.Open(cfg)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		engines = append(engines, new(atomic.Int64))
		return storeCounter{e, engines[len(engines)-1]}, nil
	}
	runs := new(atomic.Int64)
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: open, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, runs))
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"reopen me","workflow_id":"wf-1"}`)
	waitRuns(t, runs, 1)
	if err := os.RemoveAll(filepath.Join(dir, ".claude", "cairn")); err != nil {
		t.Fatal(err)
	}
	// Opens the state directory again (the second engine), and says the workflow went with it.
	mustFail(t, c, "resume_check", `{}`, "the state directory was deleted")
	first := generation(0).Load()
	waitRuns(t, runs, 2) // a run begun after the reopening has ended
	if got := generation(0).Load() - first; got != 0 {
		t.Errorf("the background sync opened the store through the first engine %d more time(s) after it was replaced", got)
	}
	if generation(1).Load() == 0 {
		t.Error("the background sync never opened the store through the engine the server holds now")
	}
}

// TestBackgroundSyncTellsALineNoSyncCanRead: the workflow's ref on the remote is force-pushed
// to a commit Cairn did not write, or given a revision in Cairn's form that is not a Cairn
// entry, or one whose record is larger than Cairn writes (told "the next sync retries" until
// then). Every sync fails the same way until a person acts, so the notice says that and where
// the person finds the step (cairn sync), not that the next sync retries.
func TestBackgroundSyncTellsALineNoSyncCanRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, work, url string)
	}{
		{"commits Cairn did not write", func(t *testing.T, work, url string) {
			git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
			git(t, work, "push", "-q", "-f", url, "HEAD:refs/cairn/wf/wf-1")
		}},
		{"a revision that is not a Cairn entry", func(t *testing.T, work, url string) {
			forgeRevision2(t, work, url, `{"revision":2}`)
		}},
		// Refused from its size before it is read; every sync finds it the same.
		{"a record larger than Cairn writes", func(t *testing.T, work, url string) {
			forgeRevision2(t, work, url, strings.Repeat("x", remote.MaxRecord+1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := bareRepo(t)
			_, c, runs, _ := pickedUp(t, bare, "foreign")
			work := t.TempDir()
			git(t, work, "init", "-q")
			tc.spoil(t, work, "file://"+bare)
			// A revision to push. A sync since the spoiling may have told the failure already,
			// on this result (told once); else the sync begun after it tells it.
			got := text(mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"a.md"}}`))
			if !strings.HasPrefix(got, "Notice:") {
				waitRuns(t, runs, 2)
				got = text(mustOK(t, c, "get_vars", `{}`))
			}
			notice, _, _ := strings.Cut(got, "\n")
			noticeSays(t, notice, "could not sync with origin", "every sync fails the same way", "cairn sync")
			if strings.Contains(notice, "retries") {
				t.Errorf("notice %q says a retry, which fails the same way", notice)
			}
		})
	}
}

// forgeRevision2 pushes to url, from the repository work, a revision 2 of wf-1 in Cairn's form
// whose record is record, as anyone with push access could.
func forgeRevision2(t *testing.T, work, url, record string) {
	t.Helper()
	out := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", work, "-c", "user.name=x", "-c", "user.email=x@example.com"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(b))
	}
	git(t, work, "fetch", "-q", url, "refs/cairn/wf/wf-1")
	blob := out(record, "hash-object", "-w", "--stdin")
	tree := out("100644 blob "+blob+"\trecord\n", "mktree")
	commit := out("cairn wf-1 r2\n", "commit-tree", tree, "-p", "FETCH_HEAD")
	git(t, work, "push", "-q", url, commit+":refs/cairn/wf/wf-1")
}

// TestBackgroundSyncTellsWhenAFailureTurnsPermanent: a sync failure that the next sync may mend
// (the remote out of reach) is told once; when the remote is back but its line of the workflow
// can no longer be read, the notice that every sync fails the same way is told too. Before, a
// failure in a row was only logged, so the model kept "the next sync retries".
func TestBackgroundSyncTellsWhenAFailureTurnsPermanent(t *testing.T) {
	bare, link := linkedRemote(t)
	_, c, runs := machineARuns(t, link, "cut then spoiled")
	pickUp(t, bare, runs)
	if err := os.Remove(link); err != nil { // A is cut off
		t.Fatal(err)
	}
	if notice := nextNotice(t, c, runs); !strings.Contains(notice, "the next sync retries") {
		t.Fatalf("the cut is told as %q", notice)
	}
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	git(t, work, "push", "-q", "-f", "file://"+bare, "HEAD:refs/cairn/wf/wf-1")
	if err := os.Symlink(bare, link); err != nil { // the link heals
		t.Fatal(err)
	}
	if notice := nextNotice(t, c, runs); !strings.Contains(notice, "every sync fails the same way") {
		t.Errorf("the line no sync can read is told as %q", notice)
	}
}

// TestBackgroundSyncTellsALostRaceItsPushFailed: A loses a race and its change is replayed on
// B's line, but the push of it fails: the host refuses it, or the remote's head moves under
// every push (other machines pushing at the same moment), which ends the sync in
// remotesync.ErrMoved. The sync failed, yet it archived A's copy and took B's line: the next
// tool result says so, where A's copy is, and what the next sync does. Before, it said only
// that the sync failed and "your changes are kept here" (refused), or nothing at all (moved,
// only logged), so the model never learnt that its copy was replaced.
func TestBackgroundSyncTellsALostRaceItsPushFailed(t *testing.T) {
	// then is what the notice says of the next sync: a host's refusal stands until the host
	// takes the push, while a line that kept moving is retried.
	then := map[string]string{"refused": "every sync fails the same way until the host takes it", "kept moving": "the next sync retries"}
	for name, hook := range map[string]string{
		// The host refuses every push of a workflow's line (after B's landed).
		"refused": "#!/bin/sh\nwhile read old new ref; do case $ref in refs/cairn/wf/*) echo 'no pushes today' >&2; exit 1;; esac; done\nexit 0\n",
		// Every push to a workflow's line finds its head moved: the hook puts in its place a
		// commit of the same record (a new object id) before the push can land.
		"kept moving": `#!/bin/sh
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
n=$(cat "$GIT_DIR/moves" 2>/dev/null || echo 0); echo $((n+1)) >"$GIT_DIR/moves"
while read old new ref; do
  case $ref in refs/cairn/wf/*)
    [ "$old" = 0000000000000000000000000000000000000000 ] && continue
    parent=$(git rev-parse -q --verify "$old^1")
    moved=$(git log -1 --format=%B "$old" | GIT_COMMITTER_DATE="$((1700000000+n)) +0000" \
      git -c user.name=other -c user.email=other@example.com commit-tree "$old^{tree}" ${parent:+-p $parent})
    git update-ref "$ref" "$moved" "$old";;
  esac
done
exit 0
`,
	} {
		t.Run(name, func(t *testing.T) {
			bare, link := linkedRemote(t)
			aDir, c, runs := machineARuns(t, link, "race then fail")
			raceWhileCut(t, bare, link, c, runs, "set_vars", `{"vars":{"WF_BRANCH":"a"}}`)
			if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			notice := nextNotice(t, c, runs)
			noticeSays(t, notice, "another machine changed workflow wf-1 first (via origin)", "revision 2 is kept in archive/conflict-wf-1-",
				"1 of its 1 change was replayed on top", "could not sync with origin", then[name])
			// B's r2 and r3 came from the remote: only the replayed r4 is unpushed.
			st, err := store.Open(filepath.Join(aDir, ".claude", "cairn"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s, err := mirror.Load(st)
			if err != nil {
				t.Fatal(err)
			}
			if sh := mirror.Shared(s, "wf-1", 4, time.Now()); sh == nil || sh.Unpushed != 1 {
				t.Errorf("the mirror after the failed sync counts %+v unpushed at r4, want 1 (the replayed change)", sh)
			}
		})
	}
}

// TestBackgroundSyncRefusesAnotherWorkflowUnderTheID: another machine shared a workflow of its
// own under the id started here. The background sync took it for a race lost: the workflow
// started here went to the archive and the other machine's became the active one. It is now
// refused, the next tool result says why and that every sync fails alike, and nothing here
// changed.
func TestBackgroundSyncRefusesAnotherWorkflowUnderTheID(t *testing.T) {
	bare, link := linkedRemote(t)
	_, c, runs := machineARuns(t, link, "mine", func(string, func(string) string) {
		if err := os.Remove(link); err != nil { // A is cut off while it starts wf-1
			t.Fatal(err)
		}
	})
	b := machineB(t, bare)
	if _, err := b.e.Start(engine.StartRequest{Type: "apex", Context: "theirs", WorkflowID: "wf-1"}); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	if err := os.Symlink(bare, link); err != nil { // the link heals
		t.Fatal(err)
	}
	notice := nextNotice(t, c, runs)
	noticeSays(t, notice, "it holds another workflow, started elsewhere, under the id of the one active here", "every sync fails the same way until the user starts one of the two again")
	if got := text(mustOK(t, c, "resume_check", `{}`)); !strings.Contains(got, "mine") || strings.Contains(got, "theirs") {
		t.Errorf("the workflow active here after the sync: %s", clip(got))
	}
}

// TestBackgroundSyncTellsABrokenJournal: a damaged line in this machine's journal, after the
// revision the last sync left, breaks the chain of changes no sync can send. The notice said
// "the next sync retries" (after a cut, the same words, so not told again), which fails the
// same way each time; it names the journal and the revision, and the user's step, as cairn
// sync does.
func TestBackgroundSyncTellsABrokenJournal(t *testing.T) {
	bare, link := linkedRemote(t)
	dir, c, runs := machineARuns(t, link, "a gap")
	waitRuns(t, runs, 2)                    // r1 is shared
	if err := os.Remove(link); err != nil { // A is cut off while it makes r2 to r4
		t.Fatal(err)
	}
	nextNotice(t, c, runs)
	for _, v := range []string{"a.md", "b.md", "c.md"} {
		mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"`+v+`"}}`)
	}
	journal := filepath.Join(dir, ".claude", "cairn", "journal", "wf-1.jsonl")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) < 4 || !strings.Contains(lines[2], `"delta":`) {
		t.Fatalf("journal %q: want r3 a delta line", data)
	}
	lines[2] = strings.Replace(lines[2], `"delta":`, `"dElta":`, 1)
	if err := os.WriteFile(journal, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bare, link); err != nil { // the link heals
		t.Fatal(err)
	}
	notice := nextNotice(t, c, runs)
	noticeSays(t, notice, "journal of wf-1", "breaks its chain of changes after revision 2", "every sync fails the same way; ask the user to restore the journal from a backup")
	if strings.Contains(notice, "retries") {
		t.Errorf("notice %q says a retry, which fails the same way", notice)
	}
}
