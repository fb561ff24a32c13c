package mcptools_test

import (
	"bufio"
	"context"
	"io"
	"slices"
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

// TestUpdateWhileStartWaitsOnAHungRemote: start_workflow waits for the first sync, which hangs
// on a remote that never answers, and the plugin is updated meanwhile (another call finds it).
// The call went on waiting through the whole shutdown's bound, was not answered, and once
// cancelled could have started the workflow from the old binary. It ends at once, not run,
// call it again; nothing is started, and the server exits well within the bound. Cancelled
// after the update, it is not run either.
func TestUpdateWhileStartWaitsOnAHungRemote(t *testing.T) {
	const (
		vars   = `{"jsonrpc":"2.0","id":"vars","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`
		cancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"start"}}`
	)
	for _, tc := range []struct {
		name, then       string
		update, answered bool
	}{
		{"another call finds it", vars, true, true},
		{"the call is cancelled", cancel, true, false},
		// No update: the person interrupted the call. It went on once the wait ended, and
		// started the workflow without the first sync, the client told nothing of it.
		{"the call is cancelled, no update", cancel, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) { updateWhileStartWaits(t, tc.then, tc.update, tc.answered) })
	}
}

func updateWhileStartWaits(t *testing.T, then string, updated, answered bool) {
	const drain = 3 * time.Second
	defer mcptools.SetDrainTimeout(drain)()
	defer mcptools.SetFirstSyncWait(time.Minute)()
	bare := bareRepo(t)
	dir, env := clone(t, bare)
	hung := gittest.Hung(t)
	git(t, dir, "remote", "set-url", "origin", "git://"+hung.Addr+"/shared.git")
	plugin, bin, update := stampedPlugin(t)
	srv := mcptools.New(mcptools.Options{Open: mcptools.OpenEngine, Getenv: env, WorkDir: dir, PPID: 4242, Log: quietLog(), NoWatch: true, PluginRoot: plugin, BinDir: bin})
	t.Cleanup(func() { srv.Close(context.Background()) })
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(testCtx(t), inR, outW)
		outW.Close()
	}()
	answers := make(chan string, 16)
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			answers <- sc.Text()
		}
	}()
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	<-answers
	send(`{"jsonrpc":"2.0","id":"start","method":"tools/call","params":{"name":"start_workflow","arguments":{"type":"apex","context":"x","workflow_id":"wf-old"}}}`)
	waitFor(t, func() bool { return hung.Accepted() > 0 }) // the first sync, kicked by the call, hangs
	if updated {
		update()
	}
	began := time.Now()
	send(then)
	if !updated {
		inW.Close() // the client's end: the server drains the call and returns
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the server did not return after the update")
	}
	if took := time.Since(began); took >= drain {
		t.Errorf("ServeStdio returned %s after the update: it waited out the shutdown's bound for the waiting call", took)
	}
	var got []string
	for a := range answers {
		got = append(got, a)
	}
	if answered && !slices.ContainsFunc(got, func(a string) bool {
		return strings.Contains(a, `"id":"start"`) && strings.Contains(a, "start_workflow was not run, nothing was changed") && strings.Contains(a, "call start_workflow again")
	}) {
		t.Errorf("answers = %q; want start_workflow answered: not run, call it again", got)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(engine.Config{Getenv: env, WorkDir: dir, Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if snap, err := e.Snapshot(); err != nil || snap.WorkflowID != "" {
		t.Errorf("workflow %q is active (%v); want none started by the call", snap.WorkflowID, err)
	}
}
