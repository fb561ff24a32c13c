package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/mark3labs/mcp-go/client"
)

// lineOn makes a Cairn line for workflow id on the bare repository at bare, as machine B's sync
// pushes it.
func lineOn(t *testing.T, bare, id string) {
	t.Helper()
	m := machineB(t, bare)
	if _, err := m.e.Start(engine.StartRequest{Type: "apex", Context: "line " + id, WorkflowID: id}); err != nil {
		t.Fatal(err)
	}
	if out := m.sync(t); out.Pushed != 1 {
		t.Fatalf("pushing %s: %+v", id, out)
	}
}

// idleServer is a cairn-mcp server with no workflow on a clone of bare, and the first line of
// the tool result that tells the lines its background syncs left out.
func idleServer(t *testing.T, bare string) (*client.Client, *atomic.Int64, string) {
	t.Helper()
	dir, env := clone(t, bare)
	var runs atomic.Int64
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, &runs))
	var notice string
	waitFor(t, func() bool {
		notice = text(mustOK(t, c, "resume_check", `{}`))
		return strings.Contains(notice, "left out of the syncs")
	})
	notice, _, _ = strings.Cut(notice, "\n")
	return c, &runs, notice
}

// TestBackgroundSyncTellsDamagedRef: a ref on the remote pointing at an object the remote does
// not have is left out of the server's syncs, and the notice says so, not that Cairn did not
// write it, and advises no deletion (cairn sync gives the step, naming the ref; the model
// asks the user to run it: the step is theirs to take).
func TestBackgroundSyncTellsDamagedRef(t *testing.T) {
	bare := bareRepo(t)
	lineOn(t, bare, "wf-1")
	if err := os.WriteFile(filepath.Join(bare, "refs", "cairn", "wf", "wf-bad"), []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, runs, notice := idleServer(t, bare)
	want := "origin holds refs to objects its repository does not have (it is damaged): wf-bad. They are left out of the syncs, and the other workflows sync as before; " +
		"ask the user to run `cairn sync`, which names the one step that ends each: delete no ref before reading it."
	if !strings.Contains(notice, want) || strings.Contains(notice, "did not write") || strings.Contains(notice, "delete them") {
		t.Errorf("notice %q\nwant it to hold %q", notice, want)
	}
	waitRuns(t, runs, 2)
	if got := text(mustOK(t, c, "resume_check", `{}`)); strings.Contains(got, "damaged") {
		t.Errorf("the damaged ref is told again: %q", got)
	}
}

// TestBackgroundSyncHidesARefNamedLikeASecret: a ref on the remote whose name has a secret's
// shape (pushed by mistake, or by another tool) is left out of the syncs like any other ref
// Cairn did not write, and the notice that names such refs does not repeat it.
func TestBackgroundSyncHidesARefNamedLikeASecret(t *testing.T) {
	bare := bareRepo(t)
	lineOn(t, bare, "wf-1")
	tip, err := os.ReadFile(filepath.Join(bare, "refs", "cairn", "wf", "wf-1"))
	if err != nil {
		t.Fatal(err)
	}
	const token = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	for _, ref := range []string{token, "other"} {
		if err := os.WriteFile(filepath.Join(bare, "refs", "cairn", "wf", ref), tip, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, notice := idleServer(t, bare)
	if want := "origin holds refs Cairn did not write: " + secrets.Hidden + ", other."; strings.Contains(notice, token) || !strings.Contains(notice, want) {
		t.Errorf("notice %q\nwant it to hold %q, not the ref's name", notice, want)
	}
}

// TestLeftOutNoticeCutMakesNoSecret: the names of refs left out of the syncs are cut to 200
// characters in the notice, and the cut could make a secret of a token glued to more text
// ("ghp_…-x" cut after its body) that no name holds: wherever the cut falls, the notice holds
// no secret.
func TestLeftOutNoticeCutMakesNoSecret(t *testing.T) {
	tok := secrettest.GluedToken(t)
	for pad := 140; pad <= 170; pad++ {
		notice := mcptools.LeftOutNotice("origin", []remote.LeftOut{{ID: "a"}, {ID: strings.Repeat("w", pad) + "." + tok}})
		if f := secrets.ScanString(notice); f != nil || !strings.Contains(notice, "refs Cairn did not write: a,") {
			t.Errorf("pad %d: the notice holds a secret the cut made (%v), or not the names before it: %q", pad, f, notice)
		}
	}
}

// TestBackgroundSyncTellsSeveralToChoose: with nothing active here and two workflows of other
// machines on the remote, the server's idle sync takes neither (a person picks), and
// resume_check said only "Nothing to resume; go on with the user's request", so the model
// started a third beside them. The next tool result now names them and the step, once.
func TestBackgroundSyncTellsSeveralToChoose(t *testing.T) {
	bare := bareRepo(t)
	lineOn(t, bare, "wf-1")
	lineOn(t, bare, "wf-2")
	dir, env := clone(t, bare)
	var runs atomic.Int64
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, &runs))
	notice := nextNoticeOf(t, c, &runs, "resume_check")
	noticeSays(t, notice, "origin holds 2 workflows and none is active here: wf-1, wf-2", "ask the user to run `cairn sync ID`")
	waitRuns(t, &runs, 2) // more idle syncs, one at least begun after the notice was read
	noNotice(t, c, "resume_check", "the workflows to choose from are told again")
}

// TestBackgroundSyncTellsAWorkflowTaken: with nothing active here, the server's idle sync takes
// the remote's only workflow, another machine's. The notice said "another machine moved
// workflow wf-1", as of a workflow the model had been working on here; it now says the sync
// took it, started on another machine.
func TestBackgroundSyncTellsAWorkflowTaken(t *testing.T) {
	bare := bareRepo(t)
	lineOn(t, bare, "wf-1")
	dir, env := clone(t, bare)
	var runs atomic.Int64
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, &runs))
	notice := nextNoticeOf(t, c, &runs, "resume_check")
	if want := "Notice: nothing was active here, so the sync took workflow wf-1 from origin, started on another machine (which may still be working on it): it is at phase analyze (revision 1)."; !strings.HasPrefix(notice, want) {
		t.Errorf("notice of the workflow taken:\n got %q\nwant %q", notice, want)
	}
}

// TestBackgroundSyncLeavesAWorkflowRunElsewhere: with nothing active here (the person just
// finished their own workflow) and the remote's only workflow owned by a live session on
// another machine, the server's idle sync took it into this machine's slot; start_workflow then
// refused the model, and a replace ended it on the machine working in it. It is now offered,
// once, and not taken.
func TestBackgroundSyncLeavesAWorkflowRunElsewhere(t *testing.T) {
	bare := bareRepo(t)
	m := machineB(t, bare)
	m.e.SetSession("session-elsewhere")
	if _, err := m.e.Start(engine.StartRequest{Type: "apex", Context: "worked in elsewhere", WorkflowID: "wf-1"}); err != nil {
		t.Fatal(err)
	}
	m.sync(t)
	dir, env := clone(t, bare)
	var runs atomic.Int64
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, &runs))
	notice := nextNoticeOf(t, c, &runs, "resume_check")
	noticeSays(t, notice, "origin holds workflow wf-1, which a live session on another machine works in, so it was not taken here", "ask the user to run `cairn sync wf-1`")
	waitRuns(t, &runs, 2)
	noNotice(t, c, "resume_check", "the workflow worked in elsewhere is told again")
	if _, err := os.Stat(filepath.Join(dir, ".claude", "cairn", store.WorkflowFile)); !os.IsNotExist(err) {
		t.Fatalf("the idle sync put a workflow in this machine's slot: %v", err)
	}
}

// TestBackgroundSyncTakenReadsItsClaims: the idle sync takes the remote's only workflow, whose
// task t1 runs on machine B under B's claim. The sync read the claims before it took the
// workflow, so the model was told "t1 (running)", as if it ran here, until a later sync; the
// claims of the workflow taken are now read before it is told, and t1 runs on another machine.
func TestBackgroundSyncTakenReadsItsClaims(t *testing.T) {
	bare := bareRepo(t)
	b := machineB(t, bare)
	if _, err := b.e.Start(engine.StartRequest{Type: "apex", Context: "claimed on B", WorkflowID: "wf-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := claimsync.Task(testCtx(t), claimsync.Options{StateDir: b.e.StateDir(), Root: b.dir, Getenv: b.env}, "t1", "running",
		func(bool) (*engine.Result, error) {
			return b.e.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"})
		}); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	dir, env := clone(t, bare)
	once := func(k string) string { // one sync run: the next would read the claims anyway
		if k == mcptools.EnvSyncInterval {
			return "1h"
		}
		return env(k)
	}
	var runs atomic.Int64
	_, c := startServer(t, mcptools.CountSyncRuns(mcptools.Options{Open: mcptools.OpenEngine, Getenv: once, WorkDir: dir, PPID: 4242,
		Log: quietLog(), NoWatch: true}, &runs))
	var got string
	waitFor(t, func() bool {
		got = text(mustOK(t, c, "resume_check", `{}`))
		return strings.Contains(got, "the sync took workflow wf-1")
	})
	if !strings.Contains(got, "t1 (running on another machine)") {
		t.Errorf("resume_check after the take:\n%s\nwant t1 said to run on another machine", got)
	}
}
