package remotesync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// machine is one project checkout with its own state directory and clock.
type machine struct {
	t   *testing.T
	dir string
	en  *engine.Engine
	st  *store.Store
	now time.Time
}

func newMachine(t *testing.T, offset time.Duration) *machine {
	t.Helper()
	base := t.TempDir()
	m := &machine{t: t, dir: filepath.Join(base, "proj"), now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).Add(offset)}
	if out, err := exec.Command("git", "init", "-q", m.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// The tests move through apex's approval gate (plan): a person turned gates off here.
	state := filepath.Join(m.dir, ".claude", "cairn")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(`{"approvals": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": filepath.Join(base, "home"), "CLAUDE_PROJECT_DIR": m.dir}
	en, err := engine.Open(engine.Config{Getenv: func(k string) string { return vars[k] }, WorkDir: m.dir,
		Now: func() time.Time { m.now = m.now.Add(time.Second); return m.now }, Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	st, err := store.Open(en.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m.en, m.st = en, st
	// Sharing is on, as cairn remote enable leaves it: each sync records in the mirror what it
	// left (m.sync, m.record), and the next reads from there.
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	return m
}

// gitBackend opens the git remote c names.
func gitBackend(t *testing.T, c gitremote.Config) *gitremote.Backend {
	t.Helper()
	r, err := gitremote.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sharing is two machines, their clocks offset by qa and qb (newMachine), sharing a new bare
// repository through the git backends ra and rb.
func sharing(t *testing.T, qa, qb time.Duration) (a, b *machine, ra, rb *gitremote.Backend) {
	t.Helper()
	bare := "file://" + gittest.Bare(t)
	a, b = newMachine(t, qa), newMachine(t, qb)
	return a, b, gitBackend(t, gitremote.Config{Dir: a.dir, Remote: bare}), gitBackend(t, gitremote.Config{Dir: b.dir, Remote: bare})
}

// record keeps in the mirror what a sync left, as cairn sync and the MCP server's background
// sync do. It may run on a goroutine of its own, so it only reports an error.
func (m *machine) record(out remotesync.Outcome) {
	m.t.Helper()
	if err := mirror.Synced(m.st, "origin", out.Workflow, out.Remote, time.Now()); err != nil {
		m.t.Error(err)
	}
}

func (m *machine) phase() (string, int64) {
	m.t.Helper()
	w, err := m.st.ReadWorkflow()
	if errors.Is(err, store.ErrNotFound) {
		return "", 0
	}
	if err != nil {
		m.t.Fatal(err)
	}
	var r struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal(w.Data, &r); err != nil {
		m.t.Fatal(err)
	}
	return r.State, w.Revision
}

// held is the record of the workflow here.
func (m *machine) held() *workflow.Record {
	m.t.Helper()
	w, err := m.st.ReadWorkflow()
	if err != nil {
		m.t.Fatal(err)
	}
	rec, err := w.Record()
	if err != nil {
		m.t.Fatal(err)
	}
	return rec
}

// start starts an apex workflow of that id here.
func (m *machine) start(id, context string) {
	m.t.Helper()
	if _, err := m.en.Start(engine.StartRequest{Type: "apex", Context: context, WorkflowID: id}); err != nil {
		m.t.Fatal(err)
	}
}

// status is the active workflow's status here.
func (m *machine) status() string {
	m.t.Helper()
	return string(m.held().Status)
}

// complete completes the workflow here, which archives it.
func (m *machine) complete() {
	m.t.Helper()
	if _, err := m.en.Complete("shipped"); err != nil {
		m.t.Fatal(err)
	}
}

// startShared starts workflow id on a, then syncs a and b through r, so both hold it.
func startShared(r remote.Backend, a, b *machine, id, context string) {
	a.t.Helper()
	a.start(id, context)
	a.sync(r, "")
	b.sync(r, "")
}

// newSharing is a new machine that started workflow id and pushed it to r.
func newSharing(t *testing.T, r remote.Backend, id, context string) *machine {
	t.Helper()
	m := newMachine(t, 0)
	m.start(id, context)
	m.sync(r, "")
	return m
}

// sharedThenBroken is a machine that shared workflow id, whose line on r then took as its
// revision 2 an entry not Cairn's.
func sharedThenBroken(t *testing.T, r remote.Backend, id string) *machine {
	t.Helper()
	m := newSharing(t, r, id, "done soon")
	if _, err := r.Append(context.Background(), id, 1, remote.Slice([]byte("not a cairn entry"))); err != nil {
		t.Fatal(err)
	}
	return m
}

// addOrigin gives this checkout the git remote origin at url.
func (m *machine) addOrigin(url string) {
	m.t.Helper()
	if out, err := exec.Command("git", "-C", m.dir, "remote", "add", "origin", url).CombinedOutput(); err != nil {
		m.t.Fatalf("%v\n%s", err, out)
	}
}

func (m *machine) move(to string) {
	m.t.Helper()
	if _, err := m.en.Transition(engine.TransitionRequest{To: to}); err != nil {
		m.t.Fatal(err)
	}
}

func (m *machine) sync(b remote.Backend, id string) remotesync.Outcome {
	m.t.Helper()
	out, err := remotesync.Sync(context.Background(), m.st, b, "origin", id, nil)
	if err != nil {
		m.t.Fatalf("sync: %v", err)
	}
	m.record(out)
	return out
}

// TestHandOffAndConflict: machine A plans, B picks the workflow up and implements, A follows;
// then both move at once, B syncs first and wins, and A's copy goes to the conflict archive.
// Clocks an hour apart on either side change nothing.
func TestHandOffAndConflict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		backend func(t *testing.T) func(m *machine) remote.Backend
	}{
		{"memory", func(t *testing.T) func(*machine) remote.Backend {
			b := memremote.New()
			return func(*machine) remote.Backend { return b }
		}},
		{"git", func(t *testing.T) func(*machine) remote.Backend {
			bare := gittest.Bare(t)
			return func(m *machine) remote.Backend {
				return gitBackend(t, gitremote.Config{Dir: m.dir, Remote: "file://" + bare})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := tc.backend(t)
			a, b := newMachine(t, time.Hour), newMachine(t, -time.Hour)
			ra, rb := open(a), open(b)
			a.start("wf-1", "retries")
			a.move("plan")
			if out := a.sync(ra, ""); out.Pushed != 2 || out.Remote != 2 {
				t.Fatalf("A's first sync = %+v, want 2 pushed", out)
			}
			if out := a.sync(ra, ""); out.Pushed != 0 || out.Pulled != 0 {
				t.Fatalf("A's second sync = %+v, want nothing to do", out)
			}
			// B has nothing active: it takes the remote's only workflow.
			if out := b.sync(rb, ""); out.Pulled != 2 || out.Workflow != "wf-1" || !out.Taken {
				t.Fatalf("B's first sync = %+v, want wf-1 taken, pulled at 2", out)
			}
			if ph, rev := b.phase(); ph != "plan" || rev != 2 {
				t.Fatalf("B is at %s r%d, want plan r2", ph, rev)
			}
			b.move("implement")
			b.sync(rb, "")
			if out := a.sync(ra, ""); out.Pulled != 1 || out.Taken {
				t.Fatalf("A's sync after B moved = %+v, want 1 pulled", out)
			}
			if ph, rev := a.phase(); ph != "implement" || rev != 3 {
				t.Fatalf("A is at %s r%d, want implement r3", ph, rev)
			}
			// Both move from r3; B's push is acknowledged first.
			a.move("review")
			b.move("review")
			b.sync(rb, "")
			out := a.sync(ra, "")
			if out.Conflict == nil || out.Conflict.Common != 3 || out.Conflict.Archive.Reason != "conflict" {
				t.Fatalf("A's sync after both moved = %+v, want a conflict from r3 archived", out)
			}
			wa, _ := a.st.ReadWorkflow()
			wb, _ := b.st.ReadWorkflow()
			if wa.Revision != 4 || string(wa.Data) != string(wb.Data) {
				t.Fatalf("A holds r%d, B r%d; want both B's r4, the same bytes", wa.Revision, wb.Revision)
			}
			archives, err := a.st.ListArchives()
			if err != nil || len(archives) != 1 || archives[0].Revision != 4 || archives[0].WorkflowID != "wf-1" {
				t.Fatalf("A's archives = %+v, %v; want its own r4 kept as a conflict", archives, err)
			}
		})
	}
}

// TestChoose: with nothing active and several workflows on the remote, sync asks which.
func TestChoose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := memremote.New()
	for _, id := range []string{"wf-1", "wf-2"} {
		if _, err := b.Append(ctx, id, 0, remote.Slice([]byte(`{}`))); err != nil {
			t.Fatal(err)
		}
	}
	m := newMachine(t, 0)
	out, err := remotesync.Sync(ctx, m.st, b, "origin", "", nil)
	if !errors.Is(err, remotesync.ErrChoose) || len(out.Available) != 2 {
		t.Fatalf("Sync = %+v, %v; want ErrChoose listing 2", out, err)
	}
	if _, err := os.Stat(filepath.Join(m.en.StateDir(), store.WorkflowFile)); !os.IsNotExist(err) {
		t.Fatalf("a workflow was written: %v", err)
	}
}

// finishedOnA is machines A and B both holding wf-f, which A has since completed (and
// archived) without syncing.
func finishedOnA(t *testing.T) (r *memremote.Backend, a, b *machine) {
	t.Helper()
	r = memremote.New()
	a, b = newMachine(t, 0), newMachine(t, 0)
	startShared(r, a, b, "wf-f", "done soon")
	a.move("plan")
	a.complete()
	return r, a, b
}

// TestFinishedHereIsShared: A completes the workflow (which archives it) before syncing; the
// next sync pushes the end so B sees it, and A does not take the workflow back.
func TestFinishedHereIsShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, a, b := finishedOnA(t)
	if ph, _ := a.phase(); ph != "" {
		t.Fatalf("A still has an active workflow in %s after completing", ph)
	}
	out := a.sync(r, "")
	if out.Shared < 2 || out.Workflow != "" {
		t.Fatalf("A's sync after completing = %+v, want its last revisions shared and nothing taken", out)
	}
	if ph, _ := a.phase(); ph != "" {
		t.Fatal("A took its finished workflow back from the remote")
	}
	if out, err := remotesync.Sync(ctx, a.st, r, "origin", "wf-f", nil); err != nil || !out.ArchivedHere {
		t.Fatalf("A's sync naming its finished workflow = %+v, %v; want it refused as archived here", out, err)
	}
	out = b.sync(r, "")
	h, _ := r.Heads(ctx)
	if out.Local != h["wf-f"] {
		t.Fatalf("B after A finished: %+v, want the remote's r%d", out, h["wf-f"])
	}
	if st := b.status(); st != "completed" {
		t.Fatalf("B's copy is %q, want completed", st)
	}
}

// TestIdleSyncReadsNothingShared: once the end of a workflow finished here is on the remote,
// the syncs that follow with nothing active (cairn-mcp's, every few seconds) read none of its
// line again: the remote's head already says there is nothing left to share.
func TestIdleSyncReadsNothingShared(t *testing.T) {
	t.Parallel()
	r := &counting{Backend: memremote.New()}
	a := newMachine(t, 0)
	a.start("wf-idle", "finished")
	a.move("plan")
	a.sync(r, "")
	a.complete()
	if out := a.sync(r, ""); out.Shared == 0 {
		t.Fatalf("A's sync after completing = %+v, want its end shared", out)
	}
	for i := range 3 {
		r.read.Store(0)
		if out := a.sync(r, ""); out.Shared != 0 || out.Workflow != "" || r.read.Load() != 0 {
			t.Fatalf("idle sync %d = %+v after reading %d records; want nothing shared after reading none", i, out, r.read.Load())
		}
	}
}

// TestFinishedThenStartedIsShared: A completes the workflow and starts the next one before
// its next sync. That sync (about the new workflow) still pushes the end of the finished one,
// so B, still on it, learns it is over instead of going on with it alone.
func TestFinishedThenStartedIsShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, a, b := finishedOnA(t)
	a.start("wf-g", "next")
	out := a.sync(r, "")
	if out.Workflow != "wf-g" || out.Pushed != 1 || out.Shared < 2 {
		t.Fatalf("A's sync after finishing wf-f and starting wf-g = %+v, want wf-g pushed and wf-f's end shared", out)
	}
	out = b.sync(r, "")
	h, _ := r.Heads(ctx)
	if out.Workflow != "wf-f" || out.Pulled < 2 || out.Local != h["wf-f"] {
		t.Fatalf("B's sync = %+v, want wf-f pulled to the remote's r%d", out, h["wf-f"])
	}
	if st := b.status(); st != "completed" {
		t.Fatalf("B's copy of wf-f is %q, want completed", st)
	}
}

// TestFinishedLineBrokenDoesNotBlock: the finished workflow's line on the remote is not
// Cairn's past what this machine shared (something else appended to it). Sharing its end is
// then impossible, and the sync of the workflow started since goes ahead rather than failing
// on it at every run; the first says that the end was not shared, and why.
func TestFinishedLineBrokenDoesNotBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a := sharedThenBroken(t, r, "wf-f")
	a.move("plan")
	a.complete()
	a.start("wf-g", "next")
	for i := range 2 {
		out, err := remotesync.Sync(ctx, a.st, r, "origin", "", nil)
		if err != nil || out.Workflow != "wf-g" {
			t.Fatalf("A's sync %d of wf-g = %+v, %v; want it synced despite wf-f's line", i, out, err)
		}
		if said := strings.Join(out.Notices, "\n"); i == 0 && !strings.Contains(said, "wf-f, finished here at r3, was not shared: the remote's revision 2 of wf-f is not a Cairn entry") {
			t.Fatalf("A's first sync told %q; want it to say why wf-f's end was not shared", said)
		}
	}
}

// TestIdleWithBrokenFinishedLine: with nothing active here, a finished workflow whose end
// cannot be shared (its remote line holds something not Cairn's) does not stop the sync from
// taking the remote's other workflow, which says that end was not shared, and why.
func TestIdleWithBrokenFinishedLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a := sharedThenBroken(t, r, "wf-f")
	a.move("plan")
	a.move("implement")
	a.complete()
	newSharing(t, r, "wf-o", "other")
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", nil)
	if err != nil || out.Workflow != "wf-o" || out.Pulled != 1 {
		t.Fatalf("A's idle sync = %+v, %v; want wf-o taken despite wf-f's line", out, err)
	}
	if said := strings.Join(out.Notices, "\n"); !strings.Contains(said, "wf-f, finished here at r4, was not shared: the remote's revision 2 of wf-f is not a Cairn entry") {
		t.Fatalf("A's idle sync told %q; want it to say why wf-f's end was not shared", said)
	}
}

// TestEntryWithoutSnapshotIsRefused: a remote revision that carries no snapshot (another
// program's record, a format this Cairn does not know) is refused by name, not counted as
// pulled while nothing was written: that would report this machine at the remote's revision
// while it stays behind, sync after sync.
func TestEntryWithoutSnapshotIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a := newSharing(t, r, "wf-odd", "odd")
	if _, err := r.Append(ctx, "wf-odd", 1, remote.Slice([]byte(`{"revision":2,"event":{"kind":"transition"}}`))); err != nil {
		t.Fatal(err)
	}
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", nil)
	if err == nil || !strings.Contains(err.Error(), "not a Cairn entry") {
		t.Fatalf("A's sync = %+v, %v; want revision 2 refused as not a Cairn entry", out, err)
	}
	if _, rev := a.phase(); rev != 1 {
		t.Fatalf("A is at r%d, want r1", rev)
	}
}

// lostRace is A's transition and B's variable made from the same revision of wf-r, B's synced
// first: A's next sync loses the race.
func lostRace(t *testing.T) (r *memremote.Backend, a, b *machine) {
	r = memremote.New()
	a, b = newMachine(t, 0), newMachine(t, 0)
	a.start("wf-r", "replay")
	a.move("plan")
	a.sync(r, "")
	b.sync(r, "")
	a.move("implement")
	b.setVar(7)
	b.sync(r, "")
	return r, a, b
}

// TestReplayAfterLostRace: B changes a variable and syncs first; A's transition made from the
// same revision is replayed through the state machine on B's line and pushed, so both
// machines end with both changes. A transition that no longer applies is not forced.
func TestReplayAfterLostRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, a, b := lostRace(t)
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Conflict; c == nil || c.Replayed != 1 || c.Lost != 1 || out.Pushed != 1 || out.Remote != 4 {
		t.Fatalf("A's sync = %+v (conflict %+v), want its transition replayed and pushed as r4", out, out.Conflict)
	}
	b.sync(r, "")
	agree(t, r, a, b)
	if ph, _ := b.phase(); ph != "implement" {
		t.Fatalf("B is in %s, want implement", ph)
	}
	if v, err := b.en.GetVars([]string{"WF_N"}); err != nil || v["WF_N"] != "7" {
		t.Fatalf("B's WF_N = %v, %v; want 7 kept", v, err)
	}

	// Both move on from r4 to the same phase: A's move is already there, nothing is replayed.
	a.move("review")
	b.move("review")
	b.sync(r, "")
	out, err = remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
	if err != nil || out.Conflict == nil || out.Conflict.Replayed != 0 || out.Pushed != 0 {
		t.Fatalf("A's sync = %+v, %v; want a conflict with nothing replayed", out, err)
	}
	agree(t, r, a, b)
}

// TestReplayOwedAfterAnAdoptionNotDurable: A's sync adopts B's line, but journal/ cannot be
// synced after the replace, so the adoption may not survive a power loss and the sync fails.
// The replay of A's change it owes is kept all the same: the next sync makes it and B gets A's
// move.
func TestReplayOwedAfterAnAdoptionNotDurable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, a, b := lostRace(t)
	d, err := durable.OpenDir(a.en.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f := &durabletest.DirSyncFails{FS: d, Dir: "journal"}
	st, err := store.Open(a.en.StateDir(), store.WithFS(f))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f.Fails.Store(1)
	if _, err := remotesync.Sync(ctx, st, r, "origin", "", remotesync.EngineReplayer(a.en)); !durable.IsNotDurable(err) {
		t.Fatalf("the sync whose adoption is not durable said %v", err)
	}
	if f.Fails.Load() > 0 {
		t.Fatal("journal/ was never synced: the test proved nothing")
	}
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
	if err != nil || out.Conflict == nil || out.Conflict.Replayed != 1 || out.Pushed != 1 {
		t.Fatalf("A's next sync = %+v (conflict %+v), %v; want its transition replayed and pushed", out, out.Conflict, err)
	}
	b.sync(r, "")
	if ph, _ := b.phase(); ph != "implement" {
		t.Fatalf("B is in %s, want implement", ph)
	}
}

// TestReplayEveryKind: A adds a task, sets two variables, moves on and adds a task in the new
// phase while B changes one of the same variables and syncs first. A's sync replays each of
// its changes on B's line through the state machine and pushes them, except the variable B
// changed first, which stays only in A's conflict archive and is named; then both agree.
func TestReplayEveryKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a, b := newMachine(t, time.Hour), newMachine(t, -time.Hour)
	startShared(r, a, b, "wf-k", "every kind")
	must := func(_ *engine.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.en.UpdateTask(engine.TaskRequest{ID: "T1", Status: "pending", Note: "first"}))
	must(a.en.SetVars(map[string]string{"WF_MINE": "a", "WF_SHARED": "a"}))
	a.move("plan")
	must(a.en.UpdateTask(engine.TaskRequest{ID: "T2", Status: "running"}))
	must(b.en.SetVars(map[string]string{"WF_SHARED": "b"}))
	b.sync(r, "")

	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
	if err != nil {
		t.Fatal(err)
	}
	c := out.Conflict
	if c == nil || c.Lost != 4 || c.Replayed != 4 || out.Pushed != 4 {
		t.Fatalf("A's sync = %+v (conflict %+v), want its 4 changes replayed and pushed", out, c)
	}
	if len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], "WF_SHARED") {
		t.Fatalf("skipped %q, want only the variable B set first", c.Skipped)
	}
	b.sync(r, "")
	agree(t, r, a, b)
	rec := b.held()
	var tasks []string
	for _, tk := range rec.Tasks {
		tasks = append(tasks, tk.ID+":"+string(tk.Status)+":"+tk.Phase)
	}
	if rec.State != "plan" || rec.Vars["WF_MINE"] != "a" || rec.Vars["WF_SHARED"] != "b" || strings.Join(tasks, ",") != "T1:pending:analyze,T2:running:plan" {
		t.Fatalf("B holds %s, vars %v, tasks %v", rec.State, rec.Vars, tasks)
	}
}

// counting is a Backend that counts the records Since returns: what a sync reads.
type counting struct {
	remote.Backend
	read atomic.Int64
}

func (c *counting) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	recs, err := c.Backend.Since(ctx, id, rev)
	c.read.Add(int64(len(recs)))
	return recs, err
}

// TestIncrementalReads: a sync reads the remote's line from the revision the last sync left
// (one record, to check both lines still hold it) rather than all of it, on the side that
// pushes and the side that pulls, so n changes synced one by one read about n records, not
// n²/2; where the mirror's record no longer matches the lines (the remote's line reset, a
// record past this machine's revision) it reads everything and still syncs right, and a lost
// race after incremental reads is found and archived as before.
func TestIncrementalReads(t *testing.T) {
	t.Parallel()
	const n = 12
	ra := &counting{Backend: memremote.New()}
	a, b := newMachine(t, 0), newMachine(t, time.Hour)
	startShared(ra, a, b, "wf-r", "reads")
	for i := range n {
		if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t" + strconv.Itoa(i), Status: "pending"}); err != nil {
			t.Fatal(err)
		}
		ra.read.Store(0)
		if out := a.sync(ra, ""); out.Pushed != 1 || ra.read.Load() != 1 {
			t.Fatalf("A's sync %d = %+v after reading %d records; want 1 pushed after reading 1", i, out, ra.read.Load())
		}
		if i%3 == 2 { // B pulls every third change: 3 new records and the one it checks
			ra.read.Store(0)
			if out := b.sync(ra, ""); out.Pulled != 3 || ra.read.Load() != 4 {
				t.Fatalf("B's sync %d = %+v after reading %d records; want 3 pulled after reading 4", i, out, ra.read.Load())
			}
		}
	}
	agree(t, ra, a, b)

	// Both move from the same revision; B lands first. A reads incrementally, sees both
	// moved, and reads both lines whole to archive its copy and take the remote's.
	_, common := a.phase()
	a.move("plan")
	b.move("plan")
	b.sync(ra, "")
	out := a.sync(ra, "")
	if out.Conflict == nil || out.Conflict.Common != common || out.Conflict.Lost != 1 || out.Conflict.Base == nil {
		t.Fatalf("A's sync after both moved = %+v, want a conflict from r%d losing 1 change", out, common)
	}
	agree(t, ra, a, b)

	// The remote's line is gone (a new remote under the same name): the record in the
	// mirror matches nothing there, so A reads everything and pushes its whole line.
	fresh := &counting{Backend: memremote.New()}
	_, rev := a.phase()
	if out := a.sync(fresh, ""); out.Pushed != int(rev) || out.Remote != rev {
		t.Fatalf("A's sync to an empty remote = %+v, want all %d revisions pushed", out, rev)
	}
	// A record past this machine's revision (another workflow's): read whole, nothing to do.
	if err := mirror.Synced(a.st, "origin", "wf-r", rev+5, a.now); err != nil {
		t.Fatal(err)
	}
	fresh.read.Store(0)
	if out := a.sync(fresh, ""); out.Pushed != 0 || out.Pulled != 0 || fresh.read.Load() != rev {
		t.Fatalf("A's sync with a record past its revision = %+v after reading %d records; want nothing to do after reading all %d", out, fresh.read.Load(), rev)
	}
	agree(t, fresh, a)
}

// TestResumeKeepsLaterLocalChanges: a sync that lost a race is killed after taking the
// remote's line and before replaying this machine's changes, so the next sync owes the replay.
// Before that sync, a change is made here, on the adopted line, to a variable the lost change
// also set. The owed replay must not put the older, lost value over it: the change made after
// the adoption was acknowledged later; the lost one stays in the conflict archive and is named
// as not replayed.
func TestResumeKeepsLaterLocalChanges(t *testing.T) {
	ctx := context.Background()
	r := memremote.New()
	a, b := newMachine(t, 0), newMachine(t, 0)
	raceOnWFX(a, b, r, "wf-resume")

	killAfterAdoption(t, a.st, r, a.en)

	a.setVarKey("WF_X", "3") // acknowledged here after the adoption
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.en.GetVars([]string{"WF_X", "WF_B"})
	if err != nil || v["WF_X"] != "3" || v["WF_B"] != "b" {
		t.Fatalf("after the owed replay A holds %v (%v); want WF_X=3 kept and WF_B=b", v, err)
	}
	if out.Conflict == nil || !strings.Contains(out.Conflict.NotReplayed(), "WF_X") {
		t.Fatalf("the owed replay's report = %+v, want the lost WF_X=2 named as not replayed", out.Conflict)
	}
	b.sync(r, "")
	agree(t, r, a, b)
}

// TestLineOfAnotherWorkflowIsRefused: a remote line whose records hold another workflow, or
// other revisions than their place on the line (a line copied under another id, by anyone who
// can push), is refused by name. Pulled with nothing active here, it would make that other
// workflow active, even one finished and archived here, which a sync never takes back.
func TestLineOfAnotherWorkflowIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a := newMachine(t, 0)
	a.start("wf-f", "done soon")
	a.move("plan")
	a.sync(r, "")
	recs, err := r.Since(ctx, "wf-f", 0)
	if err != nil || len(recs) < 2 {
		t.Fatalf("wf-f's line: %d records, %v", len(recs), err)
	}
	a.complete()
	a.sync(r, "")
	for name, line := range map[string][][]byte{
		"wf-copy": {recs[0].Data, recs[1].Data}, // wf-f's revisions under another id
		"wf-skip": {recs[1].Data},               // wf-f's revision 2 as revision 1
	} {
		if name == "wf-skip" {
			line[0] = bytes.Replace(line[0], []byte(`"revision":2,`), []byte(`"revision":1,`), 1)
			line[0] = bytes.ReplaceAll(line[0], []byte(`"wf-f"`), []byte(`"wf-skip"`))
		}
		if _, err := r.Append(ctx, name, 0, remote.Slice(line...)); err != nil {
			t.Fatal(err)
		}
		out, err := remotesync.Sync(ctx, a.st, r, "origin", name, nil)
		// The step names the line at fault and why deleting it loses nothing ("move the
		// ref back or delete it on the remote" named neither).
		if err == nil || !strings.Contains(err.Error(), "deleting that line then loses no workflow: every machine keeps its own copy of "+name) {
			t.Fatalf("sync of %s = %+v, %v; want it refused by name, with the step", name, out, err)
		}
		if ph, rev := a.phase(); ph != "" {
			t.Fatalf("after the sync of %s a workflow is active here in %s at r%d", name, ph, rev)
		}
	}
}

// TestOwedReplayIsFoundExactly: a sync killed between taking the remote's line and replaying
// this machine's changes owes the replay, and the next sync does it although the store's clock
// was stepped back an hour since the intent was written (the conflict archive is dated before
// it), or although more than twenty archives were made since (retention keeps them all).
func TestOwedReplayIsFoundExactly(t *testing.T) {
	for _, name := range []string{"clock stepped back", "many archives since"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, 0)
			opts := []store.Option{store.WithRetention(50)}
			if name == "clock stepped back" {
				opts = append(opts, store.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }))
			}
			st, err := store.Open(a.en.StateDir(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			raceOnWFX(a, b, r, "wf-owed")

			killAfterAdoption(t, st, r, a.en)
			if name == "many archives since" {
				for i := range 21 {
					doc := fmt.Sprintf(`{"version":"2.0","workflow_id":"other-%d","type":"apex","state":"analyze","status":"active","revision":1}`, i)
					if _, err := st.ArchiveRecord([]byte(doc), "replaced", nil); err != nil {
						t.Fatal(err)
					}
				}
			}

			if _, err := remotesync.Sync(ctx, st, r, "origin", "", remotesync.EngineReplayer(a.en)); err != nil {
				t.Fatal(err)
			}
			v, err := a.en.GetVars([]string{"WF_X", "WF_B"})
			if err != nil || v["WF_X"] != "2" || v["WF_B"] != "b" {
				t.Fatalf("after the next sync A holds %v (%v); want the owed WF_X=2 replayed beside WF_B=b", v, err)
			}
			b.sync(r, "")
			agree(t, r, a, b)
		})
	}
}

// killAfterAdoption runs a sync that dies (a panic standing in for kill -9) right after it
// adopted the remote's line, before replaying this machine's changes: the next sync owes the
// replay.
func killAfterAdoption(t *testing.T, st *store.Store, r remote.Backend, en *engine.Engine) {
	t.Helper()
	t.Cleanup(func() { remotesync.SetStepHook(nil) })
	remotesync.SetStepHook(func(step string) {
		if step == "adopted" {
			panic("killed")
		}
	})
	defer remotesync.SetStepHook(nil)
	defer func() {
		if recover() == nil {
			t.Fatal("the sync did not reach the adoption")
		}
	}()
	remotesync.Sync(context.Background(), st, r, "origin", "", remotesync.EngineReplayer(en))
}

// raceOnWFX starts workflow id on a, shares it with b, then a sets WF_X=2 while b sets WF_B=b
// and syncs first: a's change loses the race, and its next sync adopts b's line.
func raceOnWFX(a, b *machine, r remote.Backend, id string) {
	a.start(id, strings.TrimPrefix(id, "wf-"))
	a.setVarKey("WF_X", "1")
	a.sync(r, "")
	b.sync(r, "")
	a.setVarKey("WF_X", "2") // loses the race
	b.setVarKey("WF_B", "b")
	b.sync(r, "")
}

// TestIdleSyncSkipsForeignRef: a ref under refs/cairn/wf/ that Cairn did not write (pushed by
// hand, or by another tool) does not stop an idle sync: the remote's workflow beside it is
// taken, and the sync names the ref it skipped.
func TestIdleSyncSkipsForeignRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := "file://" + gittest.Bare(t)
	a, b := newMachine(t, 0), newMachine(t, 0)
	backend := func(m *machine) remote.Backend {
		return gitBackend(t, gitremote.Config{Dir: m.dir, Remote: url})
	}
	a.start("wf-o", "shared")
	a.sync(backend(a), "")
	work := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn"},
		{"push", "-q", url, "HEAD:refs/cairn/wf/wf-x"}} {
		if out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := remotesync.Sync(ctx, b.st, backend(b), "origin", "", nil)
	if err != nil || out.Workflow != "wf-o" || out.Pulled != 1 {
		t.Fatalf("B's idle sync = %+v, %v; want wf-o taken beside the foreign ref", out, err)
	}
	if len(out.Unreadable) != 1 || out.Unreadable[0] != "wf-x" {
		t.Fatalf("B's idle sync says it skipped %q, want [wf-x]", out.Unreadable)
	}
	if len(out.LeftOut) != 1 || out.LeftOut[0].ID != "wf-x" || out.LeftOut[0].Reason != remote.NotCairns || out.LeftOut[0].Step == "" {
		t.Fatalf("B's idle sync says of what it skipped %+v, want wf-x as not Cairn's, with its step", out.LeftOut)
	}
}

// TestConflictArchiveSaysRetentionFailed: the archive a lost race makes of this machine's copy
// says, as any other archive does (engine.ArchiveReport), when retention could not remove
// older archives and why. Before, the sync dropped what the store said of that archive.
func TestConflictArchiveSaysRetentionFailed(t *testing.T) {
	t.Parallel()
	for _, replay := range []bool{false, true} {
		t.Run(fmt.Sprintf("replay=%v", replay), func(t *testing.T) {
			conflictArchiveSaysRetentionFailed(t, replay)
		})
	}
}

func conflictArchiveSaysRetentionFailed(t *testing.T, replay bool) {
	r := memremote.New()
	a, b := newMachine(t, 0), newMachine(t, 0)
	startShared(r, a, b, "wf-1", "race")
	storetest.UnplaceableArchive(t, a.en.StateDir()) // retention fails, and says why
	// A's change is replayable: with a Replayer, a second round pushes it.
	if _, err := a.en.SetVars(map[string]string{"PLAN_PATH": "a.md"}); err != nil {
		t.Fatal(err)
	}
	b.move("plan")
	b.sync(r, "")
	var rep remotesync.Replayer
	if replay {
		rep = remotesync.EngineReplayer(a.en) // rounds after the race replace its outcome
	}
	out, err := remotesync.Sync(context.Background(), a.st, r, "origin", "", rep)
	if err != nil || out.Conflict == nil || replay && out.Conflict.Replayed != 1 {
		t.Fatalf("A's sync = %+v, %v; want a lost race", out, err)
	}
	said := strings.Join(out.Notices, "\n")
	if !strings.Contains(said, "older archives were not removed this time") || !strings.Contains(said, "damaged line") {
		t.Errorf("notices %q do not say that retention failed and why", out.Notices)
	}
}

// TestLostRaceThenRemoteGone: a sync that lost a race and replayed this machine's change, and
// then found the remote gone before pushing it, returns git's error with the race it lost in
// its outcome (where this machine's copy went, what was replayed), so the caller can say what
// the sync changed here; the next sync, with the remote back, pushes the replayed change.
func TestLostRaceThenRemoteGone(t *testing.T) {
	bare := gittest.Bare(t)
	a, b := newMachine(t, 0), newMachine(t, 0)
	open := func(m *machine) remote.Backend {
		return gitBackend(t, gitremote.Config{Dir: m.dir, Remote: "file://" + bare})
	}
	ra := open(a)
	raceOnWFX(a, b, ra, "wf-gone")
	t.Cleanup(func() { remotesync.SetStepHook(nil) })
	remotesync.SetStepHook(func(step string) {
		if step == "replayed" {
			if err := os.Rename(bare, bare+".gone"); err != nil {
				t.Error(err)
			}
		}
	})
	out, err := remotesync.Sync(context.Background(), a.st, ra, "origin", "", remotesync.EngineReplayer(a.en))
	remotesync.SetStepHook(nil)
	if _, ok := errors.AsType[*gitremote.GitError](err); !ok {
		t.Fatalf("sync with the remote gone after the replay: %v; want git's error", err)
	}
	if c := out.Conflict; c == nil || c.Archive.Dir == "" || c.Replayed != 1 {
		t.Fatalf("the outcome does not hold the race lost before the failure: %+v", out.Conflict)
	}
	if err := os.Rename(bare+".gone", bare); err != nil {
		t.Fatal(err)
	}
	if out := a.sync(ra, ""); out.Pushed != 1 {
		t.Fatalf("the next sync pushed %d revisions; want the replayed change", out.Pushed)
	}
	b.sync(open(b), "")
	agree(t, ra, a, b)
}

// TestFinishedHereAfterTheRemoteMovedIsTold: B completes the workflow after A moved it on the
// remote since B's last sync. B's end cannot be appended to a line it does not extend, so the
// machines on it go on without it; B's sync says so, naming the archive that holds B's end,
// rather than "nothing to sync", once however many rounds the sync takes. Whether B syncs with
// nothing active or with the next workflow started, and whether A's line is shorter than B's
// end or as long or longer (its head then says nothing of B's end), the remote's line is left
// as A made it, and the notice says whether it goes on there or A ended it too.
func TestFinishedHereAfterTheRemoteMovedIsTold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		next    string
		changes int  // A's, pushed; B's end is at r3
		ends    bool // A completes it too
	}{{"", 1, false}, {"wf-g", 1, false}, {"", 3, false}, {"wf-g", 3, false}, {"", 1, true}, {"wf-g", 1, true}} {
		t.Run(fmt.Sprintf("next=%s,changes=%d,ends=%v", tc.next, tc.changes, tc.ends), func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, time.Hour)
			startShared(r, a, b, "wf-f", "done soon")
			for i := range tc.changes {
				a.setVar(i)
			}
			status := "active"
			if tc.ends {
				a.complete()
				status = "completed"
			}
			a.sync(r, "")
			h, _ := r.Heads(ctx)
			moved := h["wf-f"]
			b.move("plan")
			b.complete()
			if tc.next != "" {
				b.start(tc.next, "next")
			}
			archives, err := b.st.ListArchives()
			if err != nil || len(archives) != 1 {
				t.Fatalf("B's archives = %v, %v; want the completed wf-f", archives, err)
			}
			// B's first push loses a race, so its sync takes a second round.
			out := b.sync(&conflictOnce{Backend: r}, "")
			h, _ = r.Heads(ctx)
			if h["wf-f"] != moved || out.Shared != 0 {
				t.Fatalf("B's sync = %+v with the remote at %v; want nothing of wf-f shared on A's r%d", out, h, moved)
			}
			said := strings.Join(out.Notices, "\n")
			if len(out.Notices) != 1 || !strings.Contains(said, fmt.Sprintf("wf-f, finished here at r3, was not shared: the remote's line of it was changed elsewhere after r1 and is at r%d, %s;", moved, status)) ||
				!strings.Contains(said, "archive/"+archives[0].Dir) {
				t.Fatalf("B's sync told %q; want it to say once that wf-f's end was not shared and where it is kept", said)
			}
		})
	}
}

// conflictOnce is a backend whose first Append loses a race.
type conflictOnce struct {
	remote.Backend
	lost bool
}

func (c *conflictOnce) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if !c.lost {
		c.lost = true
		return 0, remote.ErrConflict
	}
	return c.Backend.Append(ctx, id, after, data)
}

// TestRepairBySyncIsTold: the snapshot here is damaged and the sync is the first to read it
// (cairn sync and cairn-mcp run the claims sync first, which says it in their place). The
// store moves it to quarantine/ and rebuilds it from the journal, and says so; the sync passes
// that on, since no later read finds anything left to say and the file in quarantine/ would
// otherwise go unexplained.
func TestRepairBySyncIsTold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memremote.New()
	a := newSharing(t, r, "wf-q", "repaired")
	a.setVar(1)
	if err := os.WriteFile(filepath.Join(a.en.StateDir(), store.WorkflowFile), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := remotesync.Sync(ctx, a.st, r, "origin", "", nil)
	if err != nil || out.Pushed != 1 {
		t.Fatalf("A's sync = %+v, %v; want the rebuilt revision pushed", out, err)
	}
	said := strings.Join(out.Notices, "\n")
	if !strings.Contains(said, "quarantine/") || !strings.Contains(said, "rebuilt") {
		t.Fatalf("A's sync told %q; want the snapshot's move to quarantine/ and its rebuild said", said)
	}
}

// TestResumedRaceSaysWhoWon: a sync killed right after it took the remote's line leaves the
// replay to the next sync, whose outcome reports that race. It names the remote's change and
// the phase the remote's line is in, as the sync that lost the race live does, not the
// local journal's record of taking it ("sync") in no phase ("in ,").
func TestResumedRaceSaysWhoWon(t *testing.T) {
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, 0)
			raceOnWFX(a, b, r, "wf-who")
			recs, err := r.Since(ctx, "wf-who", 0)
			if err != nil {
				t.Fatal(err)
			}
			var tip remotesync.Entry
			if err := json.Unmarshal(recs[len(recs)-1].Data, &tip); err != nil {
				t.Fatal(err)
			}
			if killed {
				killAfterAdoption(t, a.st, r, a.en)
			}
			out, err := remotesync.Sync(ctx, a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
			if err != nil || out.Conflict == nil || out.Conflict.Replayed != 1 {
				t.Fatalf("A's sync = %+v, %v; want the race reported with WF_X replayed", out, err)
			}
			if c := out.Conflict; c.By != tip.Event || c.State != "analyze" {
				t.Fatalf("the race is reported as won by %+v in %q; want the remote's %+v in analyze", c.By, c.State, tip.Event)
			}
		})
	}
}

// TestExpiredHereTakenBack: machine B, idle past the TTL, expires at its next session start a
// workflow that A kept working on and pushed. B's next sync takes A's line back as the active
// workflow (B's expired copy stays archived) and says so once. Changes B made before it went
// idle and never pushed stay only in that archive: the notice names them and the step that
// lists them (cairn history DIR); before, it named no way to them. A line stale on the remote
// too is not taken back: it stays expired here.
func TestExpiredHereTakenBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		aMoved  time.Duration // how long before B's start A last changed it
		bMoved  bool          // B changed it too before going idle, and never pushed that
		named   bool          // B's last sync was about nothing: a person names it, cairn sync wf-x
		takenOn string        // what B's sync says when it takes A's line back; "" when it does not
	}{
		{"changed elsewhere within the ttl", 2 * time.Hour, false, false, "workflow wf-x expired here at r2, but another machine changed it after r1, so it was taken back from origin and is active again; this machine's expired copy stays in archive/%s"},
		{"named", 2 * time.Hour, false, true, "workflow wf-x expired here at r2, but another machine changed it after r1, so it was taken back from origin and is active again; this machine's expired copy stays in archive/%s"},
		{"changed on both", 2 * time.Hour, true, false, "workflow wf-x expired here at r3, but another machine changed it after r1, so it was taken back from origin and is active again; this machine's expired copy stays in archive/%[1]s with the changes it made after r1, which were not replayed: ask the user to list them with cairn history %[1]s and make again what is still wanted"},
		{"stale everywhere", 26 * time.Hour, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, ra, rb := sharing(t, 0, 0)
			// The TTL is judged against the real clock: the machines' clocks are set from it.
			now := time.Now()
			a.now, b.now = now.Add(-30*time.Hour), now.Add(-30*time.Hour)
			a.start("wf-x", "retries")
			a.sync(ra, "")
			b.sync(rb, "")
			if tc.bMoved {
				b.move("plan")
			}
			a.now = now.Add(-tc.aMoved)
			a.move("plan")
			a.sync(ra, "")
			b.now = now
			rep := b.en.Resume(engine.ResumeOptions{Apply: true})
			if ph, _ := b.phase(); ph != "" {
				t.Fatalf("B's start left wf-x active in %s; want it expired: %+v", ph, rep)
			}
			id := ""
			if tc.named {
				if err := mirror.Synced(b.st, "origin", "", 0, time.Now()); err != nil {
					t.Fatal(err)
				}
				id = "wf-x"
			}
			out := b.sync(rb, id)
			archives, err := b.st.ListArchives()
			if err != nil || len(archives) != 1 || archives[0].Reason != "expired" {
				t.Fatalf("B's archives = %+v, %v; want its expired copy kept", archives, err)
			}
			said := strings.Join(out.Notices, "\n")
			if tc.takenOn == "" {
				if ph, _ := b.phase(); ph != "" || out.Workflow != "" {
					t.Fatalf("B's sync = %+v, phase %q; want the workflow stale everywhere left expired", out, ph)
				}
				return
			}
			ph, rev := b.phase()
			if ph != "plan" || rev != 2 || out.Workflow != "wf-x" || out.Pulled != 2 || out.Taken {
				t.Fatalf("B's sync = %+v, B at %q r%d; want A's line taken back, plan r2", out, ph, rev)
			}
			if want := fmt.Sprintf(tc.takenOn, archives[0].Dir); said != want {
				t.Fatalf("B's sync said %q, want %q", said, want)
			}
			if tc.bMoved { // the step it names lists B's own change, never pushed
				evs, _, _, err := b.en.HistoryNotices(archives[0].Dir)
				if err != nil || !slices.ContainsFunc(evs, func(e engine.Event) bool { return e.Revision == 2 && e.Kind == "transition" }) {
					t.Fatalf("the history of archive %s = %+v, %v; want B's move to plan at r2", archives[0].Dir, evs, err)
				}
			}
			if out := b.sync(rb, ""); len(out.Notices) != 0 || out.Pulled != 0 || out.Pushed != 0 {
				t.Fatalf("B's next sync = %+v, want nothing to do or say", out)
			}
			b.en.Resume(engine.ResumeOptions{Apply: true})
			if ph, _ := b.phase(); ph != "plan" {
				t.Fatalf("B's next read left wf-x at %q; want it live at plan", ph)
			}
			b.move("implement")
			if out := b.sync(rb, ""); out.Pushed != 1 {
				t.Fatalf("B's sync after moving = %+v, want its change pushed", out)
			}
			if out := a.sync(ra, ""); out.Pulled != 1 {
				t.Fatalf("A's sync = %+v, want B's change pulled", out)
			}
		})
	}
}

// TestEntryNotCairnsNamesTheStep: a remote revision that is no Cairn entry (or holds another
// workflow) fails every sync the same way, so the error is the step that ends it, as the
// backend names it (the git one: the ref to look at, and how deleting it loses no workflow),
// and it does not open with the package's name: cairn sync prints it to a person. Before, it
// read "remotesync: the remote's revision 2 of wf-odd is not a Cairn entry: it cannot be
// synced", with no step.
func TestEntryNotCairnsNamesTheStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, entry, want string
	}{
		{"not an entry", `not a cairn entry`, "is not a Cairn entry"},
		{"another workflow", `{"revision":2,"at":"2026-11-23T10:00:00Z","event":{"kind":"transition"},"snapshot":{"workflow_id":"wf-other","revision":2}}`, "holds another workflow or revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, b := range []struct {
				name string
				open func(t *testing.T, m *machine) remote.Backend
				step string
			}{
				{"memory", func(*testing.T, *machine) remote.Backend { return memremote.New() }, "every machine keeps its own copy of wf-odd"},
				{"git", func(t *testing.T, m *machine) remote.Backend {
					m.addOrigin("file://" + gittest.Bare(t))
					return gitBackend(t, gitremote.Config{Dir: m.dir, Remote: "origin"})
				}, "git fetch origin refs/cairn/wf/wf-odd, then git log FETCH_HEAD"},
			} {
				t.Run(b.name, func(t *testing.T) {
					ctx := context.Background()
					a := newMachine(t, 0)
					r := b.open(t, a)
					a.start("wf-odd", "odd")
					a.sync(r, "")
					if _, err := r.Append(ctx, "wf-odd", 1, remote.Slice([]byte(tc.entry))); err != nil {
						t.Fatal(err)
					}
					_, err := remotesync.Sync(ctx, a.st, r, "origin", "", nil)
					if err == nil || !errors.Is(err, remote.ErrUnreadable) || !strings.Contains(err.Error(), tc.want) ||
						!strings.Contains(err.Error(), b.step) || strings.HasPrefix(err.Error(), "remotesync:") {
						t.Fatalf("sync over a foreign revision 2 = %v; want %q with the step %q, not opening with the package", err, tc.want, b.step)
					}
				})
			}
		})
	}
}

// TestEntryTheStoreRefusesNamesTheStep: a remote revision in Cairn's form whose record this
// machine's store refuses (larger than a record may be, or holding what its rules take for a
// secret, as another machine's Cairn or anyone who can push may have written it) failed every
// sync with the store's "workflow not saved: ..." and no step, and cairn-mcp told "the next
// sync retries"; after a lost race, "keeping this machine's copy ... while taking the
// remote's: ..." the same. It is now a line no sync can take here (remote.ErrUnreadable), with
// the step, and the secret is not repeated.
func TestEntryTheStoreRefusesNamesTheStep(t *testing.T) {
	t.Parallel()
	secret := secrettest.Shapes()[0]
	for _, tc := range []struct {
		name, context string
		raced         bool // B changed the workflow too: its sync loses the race and takes the line whole
	}{
		{"over the record's size", strings.Repeat("x", 2<<20), false},
		{"a secret", "deploy with " + secret.Text, false},
		{"a secret, in a lost race", "deploy with " + secret.Text, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			newSharing(t, r, "wf-big", "big")
			b := newMachine(t, 0)
			b.sync(r, "")
			recs, err := r.Since(ctx, "wf-big", 0)
			if err != nil {
				t.Fatal(err)
			}
			var e map[string]any
			if err := json.Unmarshal(recs[0].Data, &e); err != nil {
				t.Fatal(err)
			}
			snap := e["snapshot"].(map[string]any)
			snap["revision"], snap["context"], e["revision"] = 2, tc.context, 2
			data, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(ctx, "wf-big", 1, remote.Slice(data)); err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.raced {
				b.move("plan")
				want = 2
			}
			out, err := remotesync.Sync(ctx, b.st, r, "origin", "", nil)
			if !errors.Is(err, remote.ErrUnreadable) || !strings.Contains(err.Error(), "the remote's revision 2 of wf-big cannot be kept here") ||
				!strings.Contains(err.Error(), "every machine keeps its own copy of wf-big") || strings.Contains(err.Error(), secret.Core) {
				t.Fatalf("B's sync over a revision its store refuses = %+v, %v; want it named as no sync can take it, with the step", out, err)
			}
			if _, rev := b.phase(); rev != int64(want) {
				t.Fatalf("B is at r%d, want r%d", rev, want)
			}
		})
	}
}

// NotReplayed cuts each step it names to fit, and a cut never makes a secret the step did not
// hold: a phase holding a key glued to more text ("sk_live_...-x"), named after a long task
// id and cut after the key's body, ends the cut before that word.
func TestNotReplayedCutMakesNoSecret(t *testing.T) {
	t.Parallel()
	head := "task " + strings.Repeat("t", 60) + " running: the workflow has moved to "
	key := secrettest.GluedKey(t, 160-len(head)) // the phase's runes before a cut at 160
	c := &remotesync.Conflict{Skipped: []string{head + key + " since"}}
	if got := c.NotReplayed(); secrets.ScanString(got) != nil || !strings.HasPrefix(got, head[:len(head)-len(" to ")]) {
		t.Fatalf("not replayed: %q", got)
	}
}

// TestSameIDAnotherWorkflowIsNotTaken: two machines each started a workflow of their own
// under one id, neither having seen the other's; the second to sync found the remote's line
// sharing no revision with its own and took it as a race lost: its own workflow went to the
// conflict archive and the other machine's, about other work, became the one active here. A
// line with no revision in common is another workflow: the sync now refuses it, saying so,
// and changes nothing here. The refusal names the remote cut to 40 characters, and a name
// with no secret's shape (a key glued to more text) cut after the key's body is one: the cut
// ends before that word.
func TestSameIDAnotherWorkflowIsNotTaken(t *testing.T) {
	t.Parallel()
	r := memremote.New()
	a, b := newMachine(t, 0), newMachine(t, time.Minute)
	a.start("wf-x", "A's own work")
	a.move("plan")
	a.sync(r, "")
	b.start("wf-x", "B's other work")
	out, err := remotesync.Sync(context.Background(), b.st, r, secrettest.GluedKey(t, 40), "", remotesync.EngineReplayer(b.en))
	if !errors.Is(err, remotesync.ErrOtherWorkflow) || out.Conflict != nil {
		t.Errorf("B's sync = %+v, %v; want it refused as another workflow's line", out, err)
	} else if secrets.ScanString(err.Error()) != nil {
		t.Errorf("the refusal shows a secret's shape: %q", err)
	}
	if got := b.held().Context; got != "B's other work" {
		t.Errorf("the workflow active on B is about %q after the sync, want B's own", got)
	}
	if archives, err := b.st.ListArchives(); err != nil || len(archives) != 0 {
		t.Errorf("B's archives after the sync: %+v, %v; want none", archives, err)
	}
}

// TestBrokenJournalIsNamed: a damaged line in the middle of this machine's journal leaves the
// revisions after it, up to the next full line, beyond rebuilding, so they cannot be pushed.
// The sync said only "the journal's chain of changes is broken": it now names the workflow,
// the journal and the revision, and one step that keeps the file (no delete, no move).
func TestBrokenJournalIsNamed(t *testing.T) {
	t.Parallel()
	r := memremote.New()
	a := newMachine(t, 0)
	a.start("wf-gap", "gap")
	for i := range 6 {
		if _, err := a.en.SetVars(map[string]string{"WF_N": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	jp := filepath.Join(a.en.StateDir(), "journal", "wf-gap.jsonl")
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) < 6 || !bytes.Contains(lines[3], []byte(`"delta":`)) {
		t.Fatalf("line 4 is not a delta: %.100s", lines[3])
	}
	lines[3] = bytes.Replace(lines[3], []byte(`"delta":`), []byte(`"dElta":`), 1)
	if err := os.WriteFile(jp, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = remotesync.Sync(context.Background(), a.st, r, "origin", "", nil)
	msg := fmt.Sprint(err)
	for _, want := range []string{"wf-gap", jp, "after revision 3", "restore"} {
		if !strings.Contains(msg, want) {
			t.Errorf("sync: %v\nwant it to say %q", err, want)
		}
	}
	for _, never := range []string{"delete", "rm ", "remove", "move "} {
		if strings.Contains(msg, never) {
			t.Errorf("sync: %v\nsays %q", err, never)
		}
	}
}
