package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestStartWaitsForTheFirstSync: a shared workflow expired here at session start while another
// machine kept it going. start_workflow called before cairn-mcp's first sync (a second after
// it starts) would start a second workflow, and no later sync would take the first one back:
// it waits for that sync, which takes the workflow back, and refuses, saying so. resume_check,
// the step the session start's report names, waits for it too.
func TestStartWaitsForTheFirstSync(t *testing.T) {
	for _, first := range []string{"start_workflow", "resume_check"} {
		t.Run(first, func(t *testing.T) { startWaits(t, first) })
	}
}

func startWaits(t *testing.T, first string) {
	defer mcptools.SetFirstSyncWait(time.Minute)() // a loaded machine's first sync may be slow: it is waited for
	bare := bareRepo(t)
	other := machineB(t, bare)
	if _, err := other.e.Start(engine.StartRequest{Type: "apex", Context: "shared", WorkflowID: "wf-x"}); err != nil {
		t.Fatal(err)
	}
	other.sync(t)
	here := machineB(t, bare)
	out := here.sync(t)
	if out.Workflow != "wf-x" {
		t.Fatalf("here's first sync = %+v, want wf-x taken", out)
	}
	if err := mirror.Synced(here.st, "origin", out.Workflow, out.Remote, time.Now()); err != nil { // as cairn-mcp's sync records it
		t.Fatal(err)
	}
	here.e.Close()
	if _, err := other.e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	other.sync(t)
	// Idle past the TTL here: the session start expires it.
	late, err := engine.Open(engine.Config{Getenv: here.env, WorkDir: here.dir, Actor: "test", YAML: yamldoc.Codec{},
		Now: func() time.Time { return time.Now().Add(30 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep := late.Resume(engine.ResumeOptions{Apply: true}); rep.WorkflowID != "" {
		t.Fatalf("the session start left %s active; want it expired", rep.WorkflowID)
	}
	late.Close()
	env := func(k string) string {
		if k == mcptools.EnvSyncInterval {
			return "1h" // the first sync a second after start, the next long after the test
		}
		return here.env(k)
	}
	_, c := startServer(t, mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: here.dir, PPID: 4242, Log: quietLog(), NoWatch: true})
	if first == "resume_check" {
		if got := text(mustOK(t, c, "resume_check", `{}`)); !strings.Contains(got, "taken back from origin") || !strings.Contains(got, "wf-x") {
			t.Fatalf("resume_check = %q; want wf-x taken back and said", got)
		}
	}
	res := callRaw(t, c, "start_workflow", `{"type":"apex","context":"new work","workflow_id":"wf-2"}`)
	got := text(res)
	if !res.IsError || first == "start_workflow" && !strings.Contains(got, "taken back from origin") {
		t.Fatalf("start_workflow = %q (error %v); want it refused, wf-x taken back", got, res.IsError)
	}
	if got := text(mustOK(t, c, "resume_check", `{}`)); !strings.Contains(got, "wf-x") || strings.Contains(got, "wf-2") {
		t.Fatalf("resume_check = %q; want wf-x active, no wf-2", got)
	}
}

// TestStartDoesNotWaitOnAHungRemote: the remote accepts the connection and never answers (a
// half-open link, a host that hangs), so cairn-mcp's first sync hangs until its own timeout, a
// minute. start_workflow waited for it all that time, saying nothing; it now waits a short
// while, then goes on and says why: the sync had not answered, and what that leaves undone.
// The sync's connection is still held open when the call returns: the call did not wait it out.
func TestStartDoesNotWaitOnAHungRemote(t *testing.T) {
	defer mcptools.SetFirstSyncWait(50 * time.Millisecond)()
	bare := bareRepo(t)
	dir, env := clone(t, bare)
	hung := gittest.Hung(t)
	git(t, dir, "remote", "set-url", "origin", "git://"+hung.Addr+"/shared.git")
	_, c := startServer(t, mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242, Log: quietLog(), NoWatch: true})
	got := text(mustOK(t, c, "start_workflow", `{"type":"apex","context":"offline","workflow_id":"wf-h"}`))
	if !strings.Contains(got, "the first sync with the remote did not answer within 50ms (the remote is slow or out of reach), so start_workflow went on without it") || !strings.Contains(got, "wf-h") {
		t.Fatalf("start_workflow over a hung remote = %q; want it started, saying the sync had not answered", got)
	}
	// The sync's git may connect only after the call gave up on it (50 ms is a loaded
	// machine's process start): it is waited for, and must then still be held open.
	waitFor(t, func() bool { return hung.Accepted() > 0 })
	if hung.Closed() != 0 {
		t.Fatalf("the hung remote took %d connections, %d closed since: want the sync still waiting on one", hung.Accepted(), hung.Closed())
	}
}
