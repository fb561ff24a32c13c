package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
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
