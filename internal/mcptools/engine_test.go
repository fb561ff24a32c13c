package mcptools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/yamldoc"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// realServer starts an in-process server over the real engine in a throwaway project.
func realServer(t testing.TB) (*project, *client.Client) {
	t.Helper()
	p := newProject(t)
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: quietLog(), NoWatch: true,
	})
	return p, c
}

// other opens the real engine as another process would: same project, another session.
func (p *project) other(t testing.TB, session string) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.Config{Getenv: p.getenv(session), WorkDir: p.root, SessionID: session, Actor: "cli", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatalf("opening the engine as another process: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func snapshot(t testing.TB, e *engine.Engine) engine.Snapshot {
	t.Helper()
	s, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestToolsRealEngine drives every tool through the real engine and checks, from a second
// engine, that each write landed on disk.
func TestToolsRealEngine(t *testing.T) {
	p, c := realServer(t)
	look := p.other(t, "observer")

	res := mustOK(t, c, "resume_check", `{}`)
	if s := structured(t, res); s["tier"] != "None" {
		t.Errorf("fresh project: tier %v, want None", s["tier"])
	}

	res = mustOK(t, c, "start_workflow", `{"type":"APEX","context":"add login","scope":"standard","ttl":"24h"}`)
	s := structured(t, res)
	id, _ := s["workflow_id"].(string)
	if !strings.HasPrefix(id, "apex-") || s["phase"] != "analyze" || s["revision"] != float64(1) || fmt.Sprint(s["allowed"]) != "[plan]" {
		t.Fatalf("start_workflow: %v", s)
	}
	if _, whole := s["workflow"]; whole {
		t.Errorf("start_workflow echoed the whole record: %v", s)
	}
	// The sentence names the workflow and its phase; the position after it does not again.
	if got, want := text(res), "Started apex workflow "+id+" in phase analyze. Revision 1; next phases: plan."; got != want {
		t.Errorf("start_workflow says %q, want %q", got, want)
	}
	if snap := snapshot(t, look); snap.WorkflowID != id || snap.Phase != "analyze" {
		t.Errorf("on disk: %+v", snap)
	}
	mustFail(t, c, "start_workflow", `{"type":"apex","context":"again"}`, "still active", "ask the user first", "replace")

	if err := os.MkdirAll(filepath.Join(p.root, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, "docs", "analysis.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "transition", `{"to":"plan","from":"analyze","outputs":["docs/analysis.md"],"checkpoint":{"files":3},"note":"analysis done"}`)
	mustFail(t, c, "transition", `{"to":"git-commit"}`, "cannot move from plan to git-commit", "next phases: implement, analyze")
	mustFail(t, c, "transition", `{"to":"implement","from":"review"}`, "review", "plan")
	if snap := snapshot(t, look); snap.Phase != "plan" || snap.Revision != 2 {
		t.Errorf("after one good and two refused moves: %+v, want plan at revision 2", snap)
	}

	mustOK(t, c, "update_task", `{"id":"t1","status":"running","note":"started"}`)
	mustOK(t, c, "set_enforcement", `{"violations":[{"code":"V-TEST-03","severity":"high","details":"no tests"}]}`)
	res = mustOK(t, c, "resume_check", `{}`)
	if s := structured(t, res); s["tier"] != "Full" || s["workflow_id"] != id {
		t.Errorf("resume_check: %v", s)
	}
	if !strings.Contains(text(res), "<cairn-state") {
		t.Errorf("resume_check text has no fenced report:\n%s", text(res))
	}
	mustOK(t, c, "set_enforcement", `{"violations":[]}`)

	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md","WF_N":"3"}}`)
	if got, _ := look.GetVars([]string{"PLAN_PATH"}); got["PLAN_PATH"] != "docs/plan.md" {
		t.Errorf("vars on disk: %v", got)
	}
	res = mustOK(t, c, "get_vars", `{"keys":["WF_N"]}`)
	if v := structured(t, res)["vars"].(map[string]any); v["WF_N"] != "3" || len(v) != 1 {
		t.Errorf("get_vars = %v", v)
	}

	mustOK(t, c, "save_checkpoint", `{"name":"implement-progress","data":{"done":["a","b"],"n":2}}`)
	if d, err := look.LoadCheckpoint("implement-progress"); err != nil || !jsonEqual(d, `{"done":["a","b"],"n":2}`) {
		t.Errorf("checkpoint on disk: %s, %v", d, err)
	}
	res = mustOK(t, c, "load_checkpoint", `{"name":"implement-progress"}`)
	if d, _ := json.Marshal(structured(t, res)["data"]); !jsonEqual(d, `{"done":["a","b"],"n":2}`) {
		t.Errorf("load_checkpoint = %s", d)
	}
	mustFail(t, c, "load_checkpoint", `{"name":"absent"}`, "absent", "not found")
	res = mustOK(t, c, "list_checkpoints", `{"pattern":"implement-*"}`)
	if names := structured(t, res)["names"].([]any); len(names) != 1 || names[0] != "implement-progress" {
		t.Errorf("list_checkpoints = %v", names)
	}

	mustOK(t, c, "append_log", `{"name":"benchmarks","entry":{"ms":12}}`)
	// The entries are read back with cairn, on the agent's PATH, which leaves out a line of a
	// secret's shape (written by hand, or before a rule found it): not from the file itself.
	if got := text(mustOK(t, c, "append_log", `{"name":"benchmarks","entry":{"ms":13}}`)); !strings.Contains(got, "`cairn log show benchmarks` in your Bash tool reads the entries back") ||
		strings.Contains(got, "benchmarks.jsonl") || strings.Contains(got, "no tool reads") {
		t.Errorf("append_log = %q, want the step that reads the entries back", got)
	}
	logData, err := os.ReadFile(filepath.Join(p.state, "logs", "benchmarks.jsonl"))
	if err != nil || bytes.Count(logData, []byte("\n")) != 2 {
		t.Errorf("log on disk: %q, %v", logData, err)
	}

	mustOK(t, c, "record_learning", `{"title":"Sync the directory","body":"A rename is durable only\nafter the directory is synced.","type":"project"}`)
	if entries, _ := os.ReadDir(p.memory); len(entries) == 0 {
		t.Error("record_learning wrote nothing to the memory directory")
	}

	res = mustOK(t, c, "initiative", `{"action":"get"}`)
	if !strings.Contains(text(res), "No initiative") {
		t.Errorf("initiative get before create: %s", text(res))
	}
	mustOK(t, c, "initiative", `{"action":"create","title":"Ship the uploader v2"}`)
	mustOK(t, c, "initiative", `{"action":"add_milestone","milestone":"design"}`)
	res = mustOK(t, c, "initiative", `{"action":"update_milestone","milestone":"design","status":"completed"}`)
	if !strings.Contains(text(res), "100% done") {
		t.Errorf("initiative after its only milestone: %s", text(res))
	}
	res = callRaw(t, c, "initiative", `{"action":"set_status","status":"created"}`)
	if !res.IsError || !strings.Contains(text(res), "allowed next") {
		t.Errorf("a refused initiative move is not an error naming the allowed moves: %s", text(res))
	}

	res = mustOK(t, c, "expire_ttl", `{"dry_run":true}`)
	if structured(t, res)["changed"] != false {
		t.Errorf("expire_ttl dry run changed something: %v", structured(t, res))
	}
	// plan waits for a person's yes: complete_workflow would end the workflow past the gate.
	mustFail(t, c, "complete_workflow", `{"outcome":"login shipped"}`, "is in approval phase plan, which waits for a person's yes",
		"nothing was changed: "+engine.UserApproves+", then call complete_workflow again")
	if _, err := look.Approve("plan reviewed"); err != nil {
		t.Fatal(err)
	}
	res = mustOK(t, c, "complete_workflow", `{"outcome":"login shipped"}`)
	if s := structured(t, res); s["changed"] != true {
		t.Errorf("complete_workflow: %v", s)
	}
	if snap := snapshot(t, look); snap.WorkflowID != "" {
		t.Errorf("after completion the active workflow is %+v, want none", snap)
	}
	mustFail(t, c, "complete_workflow", `{"outcome":"again"}`, "no active workflow")
}

func jsonEqual(a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestBadArgumentsRealEngine: refused calls leave every file in the state directory as it was.
func TestBadArgumentsRealEngine(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	before := dirState(t, p.state)
	ghToken := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for _, cl := range [][2]string{
		{"transition", `{"to":"plan","checkpoint":{"token":"` + ghToken + `"}}`},
		{"transition", `{"to":"plan","outputs":"docs/a.md"}`},
		{"transition", `{"to":"plan","bogus":1}`},
		{"save_checkpoint", `{"name":"../../escape","data":{}}`},
		{"save_checkpoint", `{"name":"x","data":{"a":"` + strings.Repeat("y", 1<<20+20<<10) + `"}}`},
		{"append_log", `{"name":"a/b","entry":{}}`},
		{"set_vars", `{"vars":{"WF_KEY":"` + ghToken + `"}}`},
		{"set_enforcement", `{"violations":[{"code":"V1","severity":"HIGH"}]}`},
		{"update_task", `{"id":"t1","status":"finished"}`},
		{"complete_workflow", `{}`},
		{"transition", `{"to":"git-commit"}`}, // a domain error
	} {
		mustFail(t, c, cl[0], cl[1])
	}
	if after := dirState(t, p.state); after != before {
		t.Errorf("refused calls changed the state directory:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat(filepath.Join(p.root, "escape.json")); err == nil {
		t.Error("a path trick wrote outside the state directory")
	}
}

// dirState lists every file under dir with its size and content hash-ish prefix; lock files
// are left out (they are never renamed or deleted, only opened).
func dirState(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".lock") {
			return nil
		}
		data, _ := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		b.WriteString(rel + ":" + string(data) + ";")
		return nil
	})
	return b.String()
}

// TestNoticeRealEngine: another process (a second engine in this test process, acting for
// another session) moves the workflow; the next tool result says so.
func TestNoticeRealEngine(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	if got := text(mustOK(t, c, "get_vars", `{}`)); strings.Contains(got, "Notice") {
		t.Fatalf("own write reported as another's: %q", got)
	}
	other := p.other(t, "sess-2")
	if _, err := other.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, c, "get_vars", `{}`)
	first := strings.SplitN(text(res), "\n", 2)[0]
	noticeSays(t, first, "Notice:", "another session changed", "phase plan", "revision 2, was 1")
	noNotice(t, c, "get_vars", "notice repeated")
}

// TestNoticeOfEndingSaysItsStepOnce: when another process ended the workflow, a write's
// refusal ("no active workflow: call resume_check: ...") follows the notice of the ending,
// which ends with the same step; the result says it once.
func TestNoticeOfEndingSaysItsStepOnce(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"x"}`)
	if _, err := p.other(t, "sess-2").Complete("fixed elsewhere"); err != nil {
		t.Fatal(err)
	}
	got := text(mustFail(t, c, "update_task", `{"id":"t1","status":"running"}`, "is no longer active", "no active workflow"))
	if n := strings.Count(got, "resume_check"); n != 1 {
		t.Errorf("the result names resume_check %d times, want once:\n%s", n, got)
	}
}

// TestNoticeSameSessionOtherClient: `claude --continue` in a second terminal runs this
// server's session in another Claude Code client; its change is another's and is reported.
// The same session in this server's own client (its hooks) or with no client known (the
// cairn command in the agent's Bash) is ours, as before.
func TestNoticeSameSessionOtherClient(t *testing.T) {
	p, c := realServer(t) // client pid 77
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	as := func(pid int) *engine.Engine {
		e, err := engine.Open(engine.Config{Getenv: p.getenv(p.session), WorkDir: p.root, SessionID: p.session, PID: pid, Actor: "test", YAML: yamldoc.Codec{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	for _, tc := range []struct {
		name   string
		pid    int
		to     string
		notice bool
	}{
		{"own client", 77, "plan", false},
		{"no client known", 0, "analyze", false},
		{"other client", 88, "plan", true},
	} {
		if _, err := as(tc.pid).Transition(engine.TransitionRequest{To: tc.to}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := text(mustOK(t, c, "get_vars", `{}`))
		if strings.Contains(got, "Notice: another session changed") != tc.notice {
			t.Errorf("%s: notice %v, want %v: %q", tc.name, !tc.notice, tc.notice, got)
		}
	}
}

// TestNoticeOfAPersonsCommand: a person's cairn command (no session, no client) changes the
// workflow without taking it over, so its owner is still this server's session; the change is
// another process's all the same, and the next result says so. Before, a person's move or
// approval between two calls went untold.
func TestNoticeOfAPersonsCommand(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`)
	person := p.other(t, "")
	for _, step := range []struct {
		name string
		do   func() error
		want string
	}{
		{"transition", func() error { _, err := person.Transition(engine.TransitionRequest{To: "plan"}); return err }, "it is now at phase plan (revision 3, was 2)"},
		{"approve", func() error { _, err := person.Approve("ok"); return err }, "it is now at phase plan (revision 4, was 3)"},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got := text(mustOK(t, c, "get_vars", `{}`))
		if !strings.Contains(got, "Notice: another process changed workflow") || !strings.Contains(got, step.want) {
			t.Errorf("after a person's %s: %q, want a notice %q", step.name, got, step.want)
		}
	}
	// Its own writes and nothing between: no notice.
	mustOK(t, c, "update_task", `{"id":"t1","status":"done"}`)
	noNotice(t, c, "get_vars", "a notice after the server's own write")
}

// TestWatcherRealEngine: the SessionStart hook (here, the engine's RecordSession) records a new
// session for Claude Code's pid after /clear; the server's next writes carry it. A definition
// added to .claude/workflows/ can be started without restarting the server.
func TestWatcherRealEngine(t *testing.T) {
	p := newProject(t)
	srv, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 4321, Log: quietLog(), Debounce: 20 * time.Millisecond,
	})
	mustOK(t, c, "resume_check", `{}`)
	hook := p.other(t, "sess-cleared")
	if err := hook.RecordSession(engine.Session{SessionID: "sess-cleared", PID: 4321}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return srv.Session() == "sess-cleared" })
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"after clear"}`)
	if snap := snapshot(t, hook); snap.SessionID != "sess-cleared" {
		t.Errorf("write recorded session %q, want sess-cleared", snap.SessionID)
	}

	def := "---\nname: mini\ndescription: Two steps.\nphases: [one, two]\ntransitions:\n  one: [two]\nterminal: [two]\nttl: 1h\n---\nDo one, then two.\n"
	writeAtomic(t, filepath.Join(p.root, ".claude", "workflows", "mini.md"), []byte(def))
	waitFor(t, func() bool {
		res := callRaw(t, c, "start_workflow", `{"type":"mini","context":"user definition","replace":true}`)
		return !res.IsError
	})
	mustOK(t, c, "transition", `{"to":"two"}`)
}

// TestWatcherFollowsSymlinkedDefinition: a definition in .claude/workflows that is a symlink
// to a file kept elsewhere (a dotfiles repository) is edited there, where no event reaches
// .claude/workflows: the server reloads it all the same, so a gate added there is the one the
// agent's moves meet, as every hook and cairn command, which read the file anew, meets it.
func TestWatcherFollowsSymlinkedDefinition(t *testing.T) {
	shared, def, c := startSymlinkedMini(t, "dotfiles")

	writeAtomic(t, filepath.Join(shared, "mini.md"), []byte(strings.Replace(def, "terminal:", "approvals: [one]\nterminal:", 1)))
	waitFor(t, func() bool {
		return strings.Contains(text(mustOK(t, c, "resume_check", `{}`)), "leaving one needs their yes")
	})
	if res := callRaw(t, c, "transition", `{"to":"two"}`); !res.IsError {
		t.Errorf("transition out of the gate the definition now has was made: %s", text(res))
	}
}

// TestWatcherSymlinkedDefinitionsDirMadeAgain: the directory a symlinked definition points
// into removed and made again (a checkout in the dotfiles repository of a branch without it,
// and back) is followed again: a gate added there reaches the agent's moves. Before, its watch
// went with it and nothing looked out for it, so the server kept the definition it had read
// until it was restarted, while every hook and cairn command met the gate.
func TestWatcherSymlinkedDefinitionsDirMadeAgain(t *testing.T) {
	shared, def, c := startSymlinkedMini(t, filepath.Join("dotfiles", "defs"))

	if err := os.RemoveAll(shared); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { // the removal is seen: the definition is gone
		return callRaw(t, c, "start_workflow", `{"type":"mini","context":"x","replace":true}`).IsError
	})
	writeAtomic(t, filepath.Join(shared, "mini.md"), []byte(strings.Replace(def, "terminal:", "approvals: [one]\nterminal:", 1)))
	waitFor(t, func() bool {
		return strings.Contains(text(mustOK(t, c, "resume_check", `{}`)), "leaving one needs their yes")
	})
}

// definitionsServer starts a watching server on p with the definition mini in
// .claude/workflows, started once. It returns that directory, a definition of a given name,
// and whether a workflow of a given type now starts.
func definitionsServer(t *testing.T, p *project) (wf string, def func(string) []byte, starts func(string) func() bool) {
	t.Helper()
	wf = filepath.Join(p.root, ".claude", "workflows")
	def = func(name string) []byte { return []byte("---\nname: " + name + "\nphases: [one, two]\n---\n") }
	writeAtomic(t, filepath.Join(wf, "mini.md"), def("mini"))
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 4321, Log: quietLog(), Debounce: 20 * time.Millisecond,
	})
	starts = func(typ string) func() bool {
		return func() bool {
			return !callRaw(t, c, "start_workflow", `{"type":"`+typ+`","context":"x","replace":true}`).IsError
		}
	}
	mustOK(t, c, "start_workflow", `{"type":"mini","context":"before"}`)
	return wf, def, starts
}

// TestWatcherDefinitionsDirMadeAgain: .claude/workflows removed and made again under a running
// server (a checkout of a branch without it, and back) is watched again: a definition added
// after that can be started. Before, the server watched it no more, and went on with the
// definitions read when it came back until it was restarted.
func TestWatcherDefinitionsDirMadeAgain(t *testing.T) {
	p := newProject(t)
	wf, def, starts := definitionsServer(t, p)
	if err := os.RemoveAll(wf); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !starts("mini")() }) // the removal is seen
	writeAtomic(t, filepath.Join(wf, "maxi.md"), def("maxi"))
	waitFor(t, starts("maxi"))
	writeAtomic(t, filepath.Join(wf, "third.md"), def("third"))
	waitFor(t, starts("third"))
}

// TestWatcherClaudeDirMadeAgain: with the state directory outside the project
// (CAIRN_STATE_DIR), .claude deleted under a running server (git clean -fdx) and made again is
// watched again: a definition added after that can be started. Before, neither .claude nor
// .claude/workflows was watched any more, and no call opened the state afresh (it was not
// touched), so the server went on without the definition until it was restarted.
func TestWatcherClaudeDirMadeAgain(t *testing.T) {
	p := newProject(t)
	p.state = filepath.Join(filepath.Dir(p.root), "state")
	wf, def, starts := definitionsServer(t, p)
	for _, typ := range []string{"maxi", "third"} {
		if err := os.RemoveAll(filepath.Join(p.root, ".claude")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return !starts("mini")() }) // the removal is seen
		writeAtomic(t, filepath.Join(wf, typ+".md"), def(typ))
		waitFor(t, starts(typ))
		writeAtomic(t, filepath.Join(wf, "mini.md"), def("mini"))
		waitFor(t, starts("mini"))
	}
}

// TestStateDirDeletedUnderServer: after the state directory is deleted under a running
// server (git clean -fdx), the next writes reopen it and land on disk; deleting it twice
// changes nothing about that.
func TestStateDirDeletedUnderServer(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"before the clean"}`)
	for round := 0; round < 2; round++ {
		if err := os.RemoveAll(filepath.Join(p.root, ".claude")); err != nil {
			t.Fatal(err)
		}
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"after the clean"}`)
		mustOK(t, c, "save_checkpoint", `{"name":"plan","data":{"a":1}}`)
		mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`)
		for _, f := range []string{"workflow-state.json", "checkpoints/plan.json"} {
			if _, err := os.Stat(filepath.Join(p.state, f)); err != nil {
				t.Errorf("round %d: %s not on disk after the reopen: %v", round, f, err)
			}
		}
		if fi, err := os.Stat(p.state); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("round %d: state directory %v, %v; want it recreated 0700", round, fi, err)
		}
	}
}

// TestResumeCheckStateItCannotRead: resume_check on state a newer Cairn wrote, or on a
// snapshot and journal both damaged, succeeds and names the tier. Its structured content is
// checked against the tool's output schema (mcp-go does, before Claude Code sees it), so
// every tier the engine reports must be in the schema's enum.
func TestResumeCheckStateItCannotRead(t *testing.T) {
	t.Run("newer", func(t *testing.T) {
		p, c := realServer(t)
		if err := os.MkdirAll(p.state, 0o700); err != nil {
			t.Fatal(err)
		}
		record := `{"version":"3.1","workflow_id":"apex-20261122T173000Z-3f9a","revision":9,"future":true}`
		if err := os.WriteFile(filepath.Join(p.state, "workflow-state.json"), []byte(record), 0o600); err != nil {
			t.Fatal(err)
		}
		res := mustOK(t, c, "resume_check", `{}`)
		if s := structured(t, res); s["tier"] != "Newer" || !strings.Contains(fmt.Sprint(s["next"]), "newer Cairn") {
			t.Errorf("resume_check on a newer record: %v", s)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		p, c := realServer(t)
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"fragile","workflow_id":"apex-dmg"}`)
		if err := os.WriteFile(filepath.Join(p.state, "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p.state, "journal", "apex-dmg.jsonl"), []byte("not a journal\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// next is Cairn's own step: the command it names reaches the model as written, not as
		// \`cairn doctor\`, which it may copy.
		if s := structured(t, mustOK(t, c, "resume_check", `{}`)); s["tier"] != "Damaged" || !strings.Contains(fmt.Sprint(s["next"]), " `cairn doctor`") {
			t.Errorf("resume_check on a damaged workflow: %v", s)
		}
	})
}

// TestResumeCheckStructuredTaskCounts: Claude Code shows the model the structured content,
// not the text, so resume_check's structured content carries the report's task counts
// ("tasks: 2 done, 1 failed (failed: t3)"), not only the failed ids.
func TestResumeCheckStructuredTaskCounts(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"task counts"}`)
	for _, id := range []string{"t1", "t2", "t3"} {
		mustOK(t, c, "update_task", `{"id":"`+id+`","status":"running"}`)
	}
	mustOK(t, c, "update_task", `{"id":"t1","status":"done"}`)
	mustOK(t, c, "update_task", `{"id":"t2","status":"done"}`)
	mustOK(t, c, "update_task", `{"id":"t3","status":"failed"}`)
	res := mustOK(t, c, "resume_check", `{}`)
	const want = "2 done, 1 failed (failed: t3)"
	if !strings.Contains(text(res), "tasks: "+want) {
		t.Fatalf("the text report lacks %q:\n%s", "tasks: "+want, text(res))
	}
	if got := structured(t, res)["tasks"]; got != want {
		t.Errorf("structured tasks = %v, want %q, as the text says", got, want)
	}
}

// TestResumeCheckOwnRunningTaskIsToFinish: resume_check from the client of the session that
// runs a task said "Continue phase analyze (2 tasks to run)" with one of them running here,
// a step to start it again; the session's own running task is now one to finish.
func TestResumeCheckOwnRunningTaskIsToFinish(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"own task"}`)
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`)
	res := mustOK(t, c, "resume_check", `{}`)
	if want := "Next: Continue phase analyze (1 task to finish), then move on to plan."; !strings.Contains(text(res), want) {
		t.Errorf("one running task of this session's: the report lacks %q:\n%s", want, text(res))
	}
	mustOK(t, c, "update_task", `{"id":"t2","status":"pending"}`)
	res = mustOK(t, c, "resume_check", `{}`)
	if want := "Continue phase analyze (1 task to run, 1 to finish), then move on to plan."; structured(t, res)["next"] != want {
		t.Errorf("next = %v, want %q", structured(t, res)["next"], want)
	}
}

// TestCompleteAfterTheTerminalMove: complete_workflow right after a move into a terminal
// phase, which completes the workflow on entry, said "no active workflow; call resume_check";
// it now says the move completed it, with its outcome, and the next step.
func TestCompleteAfterTheTerminalMove(t *testing.T) {
	_, c := realServer(t)
	id, _ := structured(t, mustOK(t, c, "start_workflow", `{"type":"debug","context":"terminal"}`))["workflow_id"].(string)
	mustOK(t, c, "transition", `{"to":"fix"}`)
	mustOK(t, c, "transition", `{"to":"git-commit"}`)
	res := mustOK(t, c, "complete_workflow", `{"outcome":"fixed it"}`)
	if want := "Workflow " + id + " was already completed by the move fix -> git-commit: reached git-commit; nothing changed. start_workflow begins the next piece of work."; text(res) != want {
		t.Errorf("complete_workflow after the move says\n%s\nwant\n%s", text(res), want)
	}
}

// TestResumeCheckFailedIDsJoinNoSecret: failed task ids, each clean alone, may join into a
// secret ("api_key, qk7ab..."); the structured content the model reads leaves that id out, as
// the text report does.
func TestResumeCheckFailedIDsJoinNoSecret(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"joined ids"}`)
	for _, id := range []string{"api_key", "qk7ab9cd3ef5gh7jk9mn1pq3rs5tu7", "t3"} {
		mustOK(t, c, "update_task", `{"id":"`+id+`","status":"running"}`)
		mustOK(t, c, "update_task", `{"id":"`+id+`","status":"failed"}`)
	}
	res := mustOK(t, c, "resume_check", `{}`)
	got, _ := structured(t, res)["tasks"].(string)
	if f := secrets.ScanString(got); f != nil || !strings.Contains(got, "(failed: api_key, ") || !strings.Contains(got, ", t3)") {
		t.Errorf("structured tasks = %q: want the failed ids named but for the one that joins into a secret", got)
	}
}

// TestInitiativeCreateAgainNamesAStepThatWorks: a second create is refused while one
// initiative is open; a refusal that names set_status archived as the way to make room names a
// step the initiative can take from where it is (only a completed one can be archived).
func TestInitiativeCreateAgainNamesAStepThatWorks(t *testing.T) {
	for _, path := range [][]string{nil, {"in_progress"}, {"in_progress", "blocked"}, {"in_progress", "completed"}} {
		_, c := realServer(t)
		mustOK(t, c, "initiative", `{"action":"create","title":"First"}`)
		for _, st := range path {
			mustOK(t, c, "initiative", `{"action":"set_status","status":"`+st+`"}`)
		}
		got := text(mustFail(t, c, "initiative", `{"action":"create","title":"Second"}`, "already exists", "nothing was changed"))
		if completed := slices.Contains(path, "completed"); completed != strings.Contains(got, "set_status archived") {
			t.Errorf("after %v the refusal of a second create says: %s", path, got)
		}
		if strings.Contains(got, "set_status archived") {
			if res := callRaw(t, c, "initiative", `{"action":"set_status","status":"archived"}`); res.IsError {
				t.Errorf("after %v the refusal of a second create names set_status archived, which is refused: %s\n%s", path, got, text(res))
			}
		}
	}
}

// TestInitiativeActionArguments: an action called without the argument it needs is refused
// naming that argument, before the engine turns the empty value into a garbled refusal
// ("cannot go from in_progress to : unknown status").
func TestInitiativeActionArguments(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "initiative", `{"action":"create","title":"Ship it"}`)
	for _, tc := range []struct{ args, want string }{
		{`{"action":"create"}`, `action create needs argument "title"`},
		{`{"action":"set_status"}`, `action set_status needs argument "status"`},
		{`{"action":"add_milestone"}`, `action add_milestone needs argument "milestone"`},
		{`{"action":"update_milestone","status":"completed"}`, `action update_milestone needs argument "milestone"`},
		{`{"action":"update_milestone","milestone":"m1"}`, `action update_milestone needs argument "status"`},
	} {
		res := mustFail(t, c, "initiative", tc.args, "initiative was not run (nothing was changed)", tc.want)
		if got := text(res); strings.Contains(got, "to :") || strings.Contains(got, `""`) {
			t.Errorf("initiative(%s): refusal quotes an empty value: %s", tc.args, got)
		}
	}
}

// TestLoadCheckpointAbsentSaysWhatToDo: a checkpoint that is not there is refused with the one
// step that helps, listing the saved names, not only "not found".
func TestLoadCheckpointAbsentSaysWhatToDo(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "save_checkpoint", `{"name":"plan-v1","data":{"a":1}}`)
	mustFail(t, c, "load_checkpoint", `{"name":"plan-v2"}`, `checkpoint "plan-v2" not found`, "call list_checkpoints")
	mustFail(t, c, "load_checkpoint", `{"name":"plan-v2","part":"/a"}`, `checkpoint "plan-v2" not found`, "call list_checkpoints")
}

// TestRecordLearningSameTitleReplaces is why record_learning is annotated destructive: a second
// learning under the same title takes the first one's file, and the first body is gone.
func TestRecordLearningSameTitleReplaces(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "record_learning", `{"title":"Build cache","body":"first body kept here\nand its second line"}`)
	// The model is told that it replaced a learning, and what that learning said, so that it
	// can record it again under another title when it still holds (the first may be another
	// project's, in a memory directory projects share): "Recorded learning" alone hid the loss.
	if got := text(mustOK(t, c, "record_learning", `{"title":"Build cache","body":"second body"}`)); !strings.Contains(got, "replaced") ||
		!strings.Contains(got, "“first body kept here and its second line”") || !strings.Contains(got, "another title") {
		t.Errorf("record_learning over a learning of the same title says:\n%s\nwant it to say it replaced it, quote what it said, and how to keep it", got)
	}
	// The same learning again, or a change of its type only, replaces nothing.
	for _, args := range []string{`{"title":"Build cache","body":"second body"}`, `{"title":"build CACHE","body":"second body","type":"feedback"}`} {
		if got := text(mustOK(t, c, "record_learning", args)); strings.Contains(got, "replaced") {
			t.Errorf("record_learning(%s) over the same body says:\n%s", args, got)
		}
	}
	got, err := os.ReadFile(filepath.Join(p.memory, "cairn-learning-build-cache.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "first body") {
		t.Fatalf("the first learning survived its title's second use, so the tool need not be destructive: %s", got)
	}
	// What it replaced is never quoted back when it has a secret's shape (a hand edit), and
	// the model is not told to record "it" again: it was not told what it said, and a
	// learning with a secret's shape is refused.
	const key = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	if err := os.WriteFile(filepath.Join(p.memory, "cairn-learning-build-cache.md"), []byte("use "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := text(mustOK(t, c, "record_learning", `{"title":"Build cache","body":"second body"}`)); strings.Contains(got, key) || !strings.Contains(got, "not shown") ||
		strings.Contains(got, "another title") {
		t.Errorf("record_learning over a learning holding a secret says:\n%s", got)
	}
	for _, tool := range listTools(t) {
		if tool.Name == "record_learning" && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Error("record_learning replaces a learning of the same title but is not annotated destructive")
		}
	}
}

// TestGetVarsNamesKeysNotSet: get_vars asked for keys that are not set says so, rather than
// "No workflow variables set." while others are.
func TestGetVarsNamesKeysNotSet(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"vars"}`)
	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`)
	if got := text(mustOK(t, c, "get_vars", `{"keys":["WF_BRANCH"]}`)); got != "Not set: WF_BRANCH." {
		t.Errorf("get_vars of an unset key: %q", got)
	}
	if got := text(mustOK(t, c, "get_vars", `{"keys":["PLAN_PATH","WF_BRANCH"]}`)); got != "PLAN_PATH=docs/plan.md\nNot set: WF_BRANCH." {
		t.Errorf("get_vars of a set and an unset key: %q", got)
	}
	if got := text(mustOK(t, c, "get_vars", `{}`)); got != "PLAN_PATH=docs/plan.md" {
		t.Errorf("get_vars of all: %q", got)
	}
}

// TestGetVarsRefusesANameNoVariableHas: a key of the variables' shape that set_vars refuses
// (its first word is not a workflow word) was answered "Not set: PATH_X.", as if it could be
// set; it is refused as set_vars refuses it, saying which first words a name may have.
func TestGetVarsRefusesANameNoVariableHas(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"vars"}`)
	for _, key := range []string{"PATH_X", "LD_PRELOAD", "WFX_BRANCH"} {
		mustFail(t, c, "set_vars", `{"vars":{"`+key+`":"x"}}`)
		if got := text(mustFail(t, c, "get_vars", `{"keys":["PLAN_PATH","`+key+`"]}`, `"keys[1]"`, "WF, PLAN,", "not run")); strings.Contains(got, "Not set") {
			t.Errorf("get_vars of %s: %q", key, got)
		}
	}
}

// TestNoNoticeOfOwnClientBeforeClear: a Claude Code client runs one session at a time, so a
// change recorded under its pid by the session /clear replaced (its hooks, after this
// server's last call) is this client's own and is not reported to the new session as
// another's. A change from another client still is.
func TestNoNoticeOfOwnClientBeforeClear(t *testing.T) {
	p, c := realServer(t) // client pid 77
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	as := func(session string, pid int) *engine.Engine {
		e, err := engine.Open(engine.Config{Getenv: p.getenv(session), WorkDir: p.root, SessionID: session, PID: pid, Actor: "test", YAML: yamldoc.Codec{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	if _, err := as(p.session, 77).Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		t.Fatal(err)
	}
	cleared := as("sess-cleared", 77)
	if err := cleared.RecordSession(engine.Session{SessionID: "sess-cleared", Source: "clear", PID: 77}); err != nil {
		t.Fatal(err)
	}
	noNotice(t, c, "get_vars", "the session before /clear in this client is reported as another")
	if _, err := as("sess-other", 88).Transition(engine.TransitionRequest{To: "analyze"}); err != nil {
		t.Fatal(err)
	}
	if got := text(mustOK(t, c, "get_vars", `{}`)); !strings.Contains(got, "Notice: another session changed") {
		t.Errorf("another client's change is not reported: %q", got)
	}
}

// TestGetVarsValueOnItsLine: a value with a line break, a tab or an invisible character is
// given quoted and escaped, so that its text cannot read as another variable or as Cairn's
// "Not set:" line; so is one that starts with a quote. Other values, a backslash included,
// stand as they are.
func TestGetVarsValueOnItsLine(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"vars"}`)
	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"plans/1.md\nWF_APPROVED=yes\nNot set: WF_BRANCH.","WF_DIR":"C:\\work dir","WF_Q":"\"x\"","WF_LS":"a\u2028b\tc"}}`)
	want := `PLAN_PATH="plans/1.md\nWF_APPROVED=yes\nNot set: WF_BRANCH."` + "\n" +
		`WF_DIR=C:\work dir` + "\n" +
		`WF_LS="a\u2028b\tc"` + "\n" +
		`WF_Q="\"x\""` + "\n" +
		"Not set: WF_BRANCH."
	if got := text(mustOK(t, c, "get_vars", `{"keys":["PLAN_PATH","WF_DIR","WF_LS","WF_Q","WF_BRANCH"]}`)); got != want {
		t.Errorf("get_vars:\n got %s\nwant %s", got, want)
	}
}

// TestRecordLearningPastItsLimitsIsRefused: a learning the memory file cannot hold whole (too
// many lines, a line too long) is refused with the limit and what to do, and nothing is
// written; one it can hold is kept whole, its title as the tool took it.
func TestRecordLearningPastItsLimitsIsRefused(t *testing.T) {
	p, c := realServer(t)
	long := strings.Repeat("w", 600)
	for _, tc := range []struct {
		body string
		want []string
	}{
		{strings.Repeat("a line\n", 41), []string{"41 lines", "the most is 40", "nothing was recorded"}},
		{"first\n" + long, []string{"line 2", "600 characters", "the most is 500", "nothing was recorded"}},
	} {
		args, _ := json.Marshal(map[string]string{"title": "Limits", "body": tc.body})
		mustFail(t, c, "record_learning", string(args), tc.want...)
	}
	if _, err := os.Stat(filepath.Join(p.memory, "cairn-learning-limits.md")); err == nil {
		t.Error("a refused learning was written")
	}
	title := strings.Repeat("T", 110)
	body := strings.Repeat("[x] ", 120) + "end" // 483 characters, escaped to more than 500
	args, _ := json.Marshal(map[string]string{"title": title, "body": body})
	mustOK(t, c, "record_learning", string(args))
	got, err := os.ReadFile(filepath.Join(p.memory, memory.LearningFile(title)))
	if err != nil {
		t.Fatal(err)
	}
	// The description is a summary, capped; the title and the body are kept whole.
	_, kept, _ := strings.Cut(strings.TrimPrefix(string(got), "---\n"), "\n---\n")
	if !strings.Contains(string(got), title) || !strings.HasSuffix(kept, "end\n") || strings.Contains(kept, "…") {
		t.Errorf("a learning within the limits was cut:\n%s", got)
	}
}

// TestLearningsHaveALimit: each learning takes a line of MEMORY.md, which every session loads
// (its first 200 lines only), so learnings without a bound would push the user's own lines
// out of what is loaded. The one past the limit is refused with it and a step that loses no
// learning (never "delete"); a learning already recorded is still updated, and the step,
// followed, keeps the new learning and the one it joins.
func TestLearningsHaveALimit(t *testing.T) {
	p, c := realServer(t)
	record := func(i int) *mcp.CallToolResult {
		return callRaw(t, c, "record_learning", fmt.Sprintf(`{"title":"Learning %d","body":"body %d"}`, i, i))
	}
	n := 0
	for ; n < 80 && !record(n).IsError; n++ {
	}
	if n == 80 {
		t.Fatal("80 learnings were recorded")
	}
	res := mustFail(t, c, "record_learning", fmt.Sprintf(`{"title":"Learning %d","body":"body new"}`, n), fmt.Sprintf("%d learnings", n), "MEMORY.md", "nothing was recorded",
		engine.ToolPrefix+"record_learning with that learning's title", "ask the user")
	if got := strings.ToLower(text(res)); strings.Contains(got, "delete") || strings.Contains(got, "remove") {
		t.Errorf("the refusal steers toward losing a learning: %s", text(res))
	}
	mustOK(t, c, "record_learning", `{"title":"Learning 0","body":"updated"}`)
	// The step: the new learning joined to a related one, under its title.
	// Nothing of it is gone, so nothing is said to be replaced (which would send the model to
	// record it again under another title, refused with MEMORY.md full).
	if res := mustOK(t, c, "record_learning", `{"title":"Learning 1","body":"body 1\nbody new"}`); strings.Contains(text(res), "replaced") {
		t.Errorf("joining a learning to another says it replaced it: %s", text(res))
	}
	got, err := os.ReadFile(filepath.Join(p.memory, memory.LearningFile("Learning 1")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "body 1\nbody new\n") {
		t.Errorf("the joined learning holds:\n%s", got)
	}
}

// A MEMORY.md of the user's as long as Claude Code loads: a new learning's index line, which
// would go near its top, would push the user's last loaded lines out of every session. It is
// refused with why and a step that names MEMORY.md's lines, never one that loses something.
func TestLearningCrowdsNoUserLineOut(t *testing.T) {
	p, c := realServer(t)
	var index strings.Builder
	for i := range 200 {
		fmt.Fprintf(&index, "- [Note %d](note-%d.md) — kept\n", i, i)
	}
	if err := os.MkdirAll(p.memory, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.memory, memory.IndexFile), []byte(index.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustFail(t, c, "record_learning", `{"title":"Deploys","body":"run make deploy"}`, "MEMORY.md is as long as Claude Code loads",
		"push the user's own lines out", "nothing was recorded", "ask the user which lines of MEMORY.md may go")
	if got := strings.ToLower(text(res)); strings.Contains(got, "delete") || strings.Contains(got, "remove") {
		t.Errorf("the refusal steers toward losing something: %s", text(res))
	}
	if got, err := os.ReadFile(filepath.Join(p.memory, memory.IndexFile)); err != nil || string(got) != index.String() {
		t.Errorf("MEMORY.md changed (%v):\n%s", err, got)
	}
}

// A task the agent was running when the session was cleared (or crashed) is put back to
// pending by the next session's recovery. The agent, whose work finished, then says done: it
// is recorded done, and the answer says the run had been taken as interrupted, not refused
// with "allowed next: running", which sends it to run the work again.
func TestUpdateTaskDoneAfterRecovery(t *testing.T) {
	p, c := realServer(t) // client pid 77
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	mustOK(t, c, "update_task", `{"id":"t1","status":"running"}`)
	after, err := engine.Open(engine.Config{Getenv: p.getenv("sess-cleared"), WorkDir: p.root, SessionID: "sess-cleared", PID: 77, Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { after.Close() })
	if r := after.Resume(engine.ResumeOptions{Apply: true}); !strings.Contains(strings.Join(r.Notices, "\n"), "task t1 was running with no output: back to pending") {
		t.Fatalf("the recovery did not put the running task back to pending: %v", r.Notices)
	}
	got := text(mustOK(t, c, "update_task", `{"id":"t1","status":"done"}`))
	if !strings.HasPrefix(got, "Task t1 is done") || !strings.Contains(got, "interrupted") {
		t.Errorf("update_task done after the recovery: %q; want it recorded done, saying the run had been taken as interrupted", got)
	}
	if w := p.other(t, "check").Resume(engine.ResumeOptions{}).Workflow; !strings.Contains(string(w), `"status":"done"`) {
		t.Errorf("the task is not done on disk: %s", w)
	}
	// A task never run is still refused: nothing says its work was done.
	mustOK(t, c, "update_task", `{"id":"t2","status":"pending"}`)
	mustFail(t, c, "update_task", `{"id":"t2","status":"done"}`, "allowed next: running")
}

// TestDirectoryInAFilesPlaceTools: a directory where a checkpoint or a log belongs refuses
// save_checkpoint, append_log and load_checkpoint with what is in the way and one step in the
// model's words: the user runs cairn doctor, which names the fix (the model is not told to
// move what may be someone's); and keeps the directory and what it holds.
func TestDirectoryInAFilesPlaceTools(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"in the way"}`)
	state := filepath.Join(p.root, ".claude", "cairn")
	for _, call := range []struct{ rel, tool, args string }{
		{"checkpoints/plan.json", "save_checkpoint", `{"name":"plan","data":{"a":1}}`},
		{"logs/events.jsonl", "append_log", `{"name":"events","entry":{"a":1}}`},
		{"checkpoints/plan.json", "load_checkpoint", `{"name":"plan"}`},
	} {
		dir := filepath.Join(state, filepath.FromSlash(call.rel))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("notes"), 0o600); err != nil {
			t.Fatal(err)
		}
		res := mustFail(t, c, call.tool, call.args, "a directory is in its place", "ask the user to run `cairn doctor`", "call "+call.tool+" again")
		if got := text(res); strings.Contains(got, "command") || strings.Contains(got, "renameat") || strings.Contains(got, "move "+dir) {
			t.Errorf("%s: the model is told %q", call.tool, got)
		}
		var named bool
		for _, ch := range p.other(t, "doctor").Doctor(engine.DoctorOptions{}) {
			named = named || !ch.OK && strings.Contains(ch.Detail, dir+" is a directory") && strings.Contains(ch.Fix, "move each out")
		}
		if !named {
			t.Errorf("%s: cairn doctor does not name %s and its fix", call.tool, dir)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "notes" {
			t.Errorf("%s: what the directory held changed: %q, %v", call.tool, b, err)
		}
	}
}

// TestResumeCheckPastTTLFromTheOwnersClient: the TTL counts only real changes, so the session
// that owns a workflow may work past it without changing it. Its own resume_check (this
// server's client is the owner's, acting for the owner's session) resumes the workflow;
// expire_ttl there still expires it. So does resume_check from another client of the same
// session (a second terminal's): the same session id is the live session, as at its
// compaction. From the owner's client after /clear it expires it as before.
func TestResumeCheckPastTTLFromTheOwnersClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pid     int  // the client whose server calls resume_check
		cleared bool // /clear in the owner's client first
		kept    bool
	}{
		{"the owner's client", 77, false, true},
		{"another client of the owner's session", 78, false, true},
		{"the owner's client after /clear", 77, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			var ahead atomic.Int64
			opts := func(pid int) mcptools.Options {
				open := func(cfg engine.Config) (mcptools.Engine, error) {
					cfg.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
					return mcptools.OpenEngine(cfg)
				}
				return mcptools.Options{Open: open, Getenv: p.getenv(p.session), WorkDir: p.root, PPID: pid, Log: quietLog(), NoWatch: true}
			}
			_, owner := startServer(t, opts(77))
			mustOK(t, owner, "start_workflow", `{"type":"apex","context":"long work","ttl":"1h"}`)
			ahead.Store(int64(2 * time.Hour))
			if tc.cleared {
				if err := p.other(t, "sess-cleared").RecordSession(engine.Session{SessionID: "sess-cleared", Source: "clear", PID: 77}); err != nil {
					t.Fatal(err)
				}
			}
			c := owner
			if tc.pid != 77 {
				_, c = startServer(t, opts(tc.pid))
			}
			res := mustOK(t, c, "resume_check", `{}`)
			s := structured(t, res)
			if !tc.kept {
				if s["workflow_id"] != nil || !strings.Contains(fmt.Sprint(s["last_ended"]), "Expired APEX") {
					t.Fatalf("resume_check: %v, want it expired and archived", s)
				}
				return
			}
			if next, _ := s["next"].(string); s["workflow_id"] == nil || !strings.HasPrefix(next, "Continue phase analyze") || strings.Contains(text(res), "xpire") {
				t.Fatalf("resume_check: %v\n%s\nwant it resumed as it stands", s, text(res))
			}
			res = mustOK(t, c, "expire_ttl", `{}`)
			if got := text(res); !strings.Contains(got, "expired after 1h without a change") {
				t.Errorf("expire_ttl from the owner's client: %q, want it expired", got)
			}
			// The one step after an expiry, as after complete_workflow: there is no workflow
			// to go on in.
			if next := structured(t, res)["next"]; next != "If the work goes on, start_workflow begins it again." || !strings.Contains(text(res), "archived. If the work goes on") {
				t.Errorf("expire_ttl's step: %v in %q, want start_workflow's", next, text(res))
			}
		})
	}
}

// TestNoWorkflowSeenThenAnothersStarted: a call made for the workflow this session last saw
// ended (or for none) was applied to the workflow another session started meanwhile, work
// this session knew nothing of: a late update_task after complete_workflow marked a task in
// the other's workflow. It is refused once, with the notice, as when another workflow took
// the slot of the one this session saw.
func TestNoWorkflowSeenThenAnothersStarted(t *testing.T) {
	for _, tc := range []struct{ name, before string }{
		{"none on record", ""},
		{"its own ended", "complete_workflow"},
	} {
		for _, call := range []struct{ tool, args string }{
			{"update_task", `{"id":"t1","status":"running"}`},
			{"set_vars", `{"vars":{"WF_MINE":"1"}}`},
			{"transition", `{"to":"fix"}`},
		} {
			t.Run(tc.name+"/"+call.tool, func(t *testing.T) {
				p, c := realServer(t)
				if tc.before != "" {
					mustOK(t, c, "start_workflow", `{"type":"debug","context":"mine"}`)
					mustOK(t, c, tc.before, `{"outcome":"done"}`)
				} else {
					mustOK(t, c, "resume_check", `{}`)
				}
				other := p.other(t, "sess-2")
				if _, err := other.Start(engine.StartRequest{Type: "debug", Context: "theirs"}); err != nil {
					t.Fatal(err)
				}
				mustFail(t, c, call.tool, call.args, "Notice: the active workflow changed", "was not run")
				if snap := snapshot(t, p.other(t, "observer")); snap.Revision != 1 {
					t.Errorf("the other session's workflow was changed: revision %d", snap.Revision)
				}
			})
		}
	}
}

// TestStateDirDeletedNoticeSaysSo: a workflow whose state directory was deleted under the
// server (git clean -fdx, rm -rf .claude) was reported as "no longer active; another process
// completed, expired or archived it", which says it was kept: the model went on as if the
// work had been ended on purpose. The notice says the state was deleted and that the user is
// to be told. That is the one step: the result also said "Tell the user." and then to call
// resume_check (a read's or a change's "no active workflow: call resume_check", resume_check's
// own "go on with the user's request"), which tells nothing of the lost workflow. Now the
// call is not run (a start excepted: it makes a new one) and the result says only that.
func TestStateDirDeletedNoticeSaysSo(t *testing.T) {
	p, c := realServer(t)
	for _, call := range [][2]string{
		{"update_task", `{"id":"t1","status":"running"}`},
		{"get_vars", `{}`},
		{"resume_check", `{}`},
		{"list_checkpoints", `{}`},
		{"transition", `{"to":"no such phase"}`}, // a bad argument's fix would be a second step
		{"start_workflow", `{"type":"apex","context":"after the clean"}`},
	} {
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"before the clean","replace":true}`)
		if err := os.RemoveAll(filepath.Join(p.root, ".claude")); err != nil {
			t.Fatal(err)
		}
		var got string
		if call[0] == "start_workflow" {
			got = text(mustOK(t, c, call[0], call[1]))
		} else {
			got = text(mustFail(t, c, call[0], call[1], call[0]+" was not run, nothing was changed"))
		}
		if !strings.Contains(got, "Notice: the state directory was deleted") || !strings.HasSuffix(strings.SplitN(got, "\n", 2)[0], "Tell the user before going on.") {
			t.Errorf("%s: the result does not say the state was deleted, ending with the user to be told:\n%s", call[0], got)
		}
		if strings.Contains(got, "completed, expired or archived it") || strings.Contains(got, "call resume_check") || strings.Contains(got, "Call resume_check") {
			t.Errorf("%s: the result gives a step besides telling the user:\n%s", call[0], got)
		}
	}
}

// TestProjectDeletedNotMadeAgain: a project directory deleted while its session was open was
// made again, with .claude/cairn/ in it, by the next call of any tool (a read such as
// resume_check too), which then answered "Nothing to resume" for a project that is gone. The
// call now says the project directory is gone and that nothing was changed, and creates
// nothing.
func TestProjectDeletedNotMadeAgain(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"before the delete"}`)
	if err := os.RemoveAll(p.root); err != nil {
		t.Fatal(err)
	}
	for _, call := range [][2]string{{"resume_check", `{}`}, {"start_workflow", `{"type":"apex","context":"after the delete"}`}, {"save_checkpoint", `{"name":"plan","data":{"a":1}}`}} {
		mustFail(t, c, call[0], call[1], call[0]+" was not run: the project directory "+p.root+" is not there", "nothing was changed", "Tell the user")
		if _, err := os.Lstat(p.root); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s made the deleted project directory again: %v", call[0], err)
		}
	}
}

// TestUpdateTaskSpacedID: cairn task takes an id with spaces ("write the tests"), and the
// engine's messages to the model name it (quoted), so update_task takes it too: the model can
// move the task a person added.
func TestUpdateTaskSpacedID(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"spaced ids"}`)
	if _, err := p.other(t, "person").UpdateTask(engine.TaskRequest{ID: "write the tests", Status: "pending"}); err != nil {
		t.Fatal(err)
	}
	got := text(mustOK(t, c, "update_task", `{"id":"write the tests","status":"running"}`))
	if !strings.Contains(got, `Task "write the tests" is running`) {
		t.Errorf("update_task said %q", got)
	}
	mustFail(t, c, "update_task", `{"id":"t1\u200b","status":"running"}`, "control or invisible")
}

// TestCheckpointSavedBeforeTheWorkflow: checkpoints are the project's, kept across workflows.
// resume_check's structured content (what the model reads) names those saved before the
// workflow started, and load_checkpoint of one gives its data as saved with one line saying so.
func TestCheckpointSavedBeforeTheWorkflow(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"checkpoints of another"}`)
	mustOK(t, c, "save_checkpoint", `{"name":"old","data":{"risk":"low"}}`)
	mustOK(t, c, "save_checkpoint", `{"name":"new","data":{"risk":"high"}}`)
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(p.other(t, "look").StateDir(), "checkpoints", "old.json"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	s := structured(t, mustOK(t, c, "resume_check", `{}`))
	if got := fmt.Sprint(s["checkpoints"], s["checkpoints_before_workflow"]); got != "[new old] [old]" {
		t.Errorf("resume_check's checkpoints and checkpoints_before_workflow = %s, want [new old] [old]", got)
	}
	for name, want := range map[string]string{"old": `{"risk":"low"}`, "new": `{"risk":"high"}`} {
		s := structured(t, mustOK(t, c, "load_checkpoint", `{"name":"`+name+`"}`))
		if d, _ := json.Marshal(s["data"]); !jsonEqual(d, want) {
			t.Errorf("load_checkpoint %s = %s, want %s as saved", name, d, want)
		}
		msg, _ := s["message"].(string)
		if said := strings.Contains(msg, "before this workflow started"); said != (name == "old") || strings.Contains(msg, "\n") {
			t.Errorf("load_checkpoint %s says %q", name, msg)
		}
	}
	// list_checkpoints tells them apart as resume_check does: before, it named them all alike.
	res := mustOK(t, c, "list_checkpoints", `{}`)
	s = structured(t, res)
	if got := fmt.Sprint(s["names"], s["checkpoints_before_workflow"]); got != "[new old] [old]" {
		t.Errorf("list_checkpoints' names and checkpoints_before_workflow = %s, want [new old] [old]", got)
	}
	if got, want := text(res), "2 checkpoints: new; saved before this workflow started: old"; got != want {
		t.Errorf("list_checkpoints says %q, want %q", got, want)
	}
	// Claude Code gives the model the structured content, not the text: it says what the list
	// means there too.
	if w := fmt.Sprint(s["warnings"]); !strings.Contains(w, "checkpoints_before_workflow were saved before this workflow started: they may hold another workflow's results") {
		t.Errorf("list_checkpoints' warnings %s do not say what checkpoints_before_workflow means", w)
	}
	if s := structured(t, mustOK(t, c, "list_checkpoints", `{"pattern":"n*"}`)); s["checkpoints_before_workflow"] != nil {
		t.Errorf("list_checkpoints n* names %v as saved before the workflow", s["checkpoints_before_workflow"])
	}

	// As many long names as the project keeps, all saved before: the result, which names them
	// twice, stays within what Claude Code puts before the model at once (maxLoadBytes), its
	// warning saying how many of them checkpoints_before_workflow holds.
	dir := filepath.Join(p.other(t, "look").StateDir(), "checkpoints")
	for i := range engine.MaxCheckpoints - 2 {
		f := filepath.Join(dir, fmt.Sprintf("%s-%03d.json", strings.Repeat("c", 60), i))
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	res = mustOK(t, c, "list_checkpoints", `{}`)
	if b, _ := json.Marshal(res.StructuredContent); len(b) > 40_000 {
		t.Errorf("list_checkpoints' structured content is %d bytes, over the 40,000 Claude Code puts before the model at once", len(b))
	}
	s = structured(t, res)
	before, _ := s["checkpoints_before_workflow"].([]any)
	if names, _ := s["names"].([]any); len(names) != engine.MaxCheckpoints || len(before) == 0 || len(before) >= engine.MaxCheckpoints-1 ||
		!strings.Contains(fmt.Sprint(s["warnings"]), fmt.Sprintf("checkpoints_before_workflow holds the first %d of the %d", len(before), engine.MaxCheckpoints-1)) {
		t.Errorf("list_checkpoints of %d names: %d names, %d before, warnings %v", engine.MaxCheckpoints, len(names), len(before), s["warnings"])
	}
}

// TestPhaseCheckpointReadBack: transition keeps its checkpoint ("JSON results of the phase")
// with the phase it leaves; resume_check names that phase, in its text and its structured
// content, and load_checkpoint with phase gives the checkpoint back, whole or in part.
func TestPhaseCheckpointReadBack(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"phase checkpoint"}`)
	mustOK(t, c, "transition", `{"to":"plan","checkpoint":{"findings":["auth is in pkg/login"]}}`)

	res := mustOK(t, c, "resume_check", `{}`)
	if !strings.Contains(text(res), "checkpoints kept with phases: analyze") {
		t.Errorf("resume_check's text does not name the phase that keeps a checkpoint:\n%s", text(res))
	}
	if got := fmt.Sprint(structured(t, res)["phase_checkpoints"]); got != "[analyze]" {
		t.Errorf("resume_check's phase_checkpoints = %s, want [analyze]", got)
	}

	res = mustOK(t, c, "load_checkpoint", `{"phase":"analyze"}`)
	s := structured(t, res)
	if d, _ := json.Marshal(s["data"]); !jsonEqual(d, `{"findings":["auth is in pkg/login"]}`) || s["phase"] != "analyze" {
		t.Errorf("load_checkpoint phase analyze = %v", s)
	}
	if s := structured(t, mustOK(t, c, "load_checkpoint", `{"phase":"analyze","part":"/findings/0"}`)); s["data"] != "auth is in pkg/login" {
		t.Errorf("load_checkpoint phase analyze at /findings/0 = %v", s)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"phase":"plan"}`, "the phases that keep one are analyze"},
		{`{"phase":"analyze","name":"x"}`, "exactly one of name"},
		{`{}`, "exactly one of name"},
	} {
		mustFail(t, c, "load_checkpoint", tc.args, tc.want)
	}
}

// TestListCheckpointsNamesPhaseCheckpoints: list_checkpoints said "No checkpoints." after a
// transition kept one with the phase it left; it now names those phases apart from the
// saved names (load_checkpoint takes them as phase, not name), unless a pattern over names
// was given.
func TestListCheckpointsNamesPhaseCheckpoints(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"list phase checkpoints"}`)
	if _, ok := structured(t, mustOK(t, c, "list_checkpoints", `{}`))["phase_checkpoints"]; ok {
		t.Errorf("list_checkpoints names phase checkpoints before any was kept")
	}
	mustOK(t, c, "transition", `{"to":"plan","checkpoint":{"findings":["auth is in pkg/login"]}}`)
	res := mustOK(t, c, "list_checkpoints", `{}`)
	s := structured(t, res)
	if fmt.Sprint(s["names"]) != "[]" || fmt.Sprint(s["phase_checkpoints"]) != "[analyze]" {
		t.Errorf("list_checkpoints = %v, want no names and phase_checkpoints [analyze]", s)
	}
	if got := text(res); got != "No named checkpoints.\nCheckpoints kept with phases (load_checkpoint with phase reads one): analyze." {
		t.Errorf("list_checkpoints says %q", got)
	}
	mustOK(t, c, "save_checkpoint", `{"name":"plan-v1","data":{}}`)
	if got := text(mustOK(t, c, "list_checkpoints", `{}`)); got != "1 checkpoint: plan-v1\nCheckpoints kept with phases (load_checkpoint with phase reads one): analyze." {
		t.Errorf("list_checkpoints says %q", got)
	}
	if s := structured(t, mustOK(t, c, "list_checkpoints", `{"pattern":"plan-*"}`)); s["phase_checkpoints"] != nil {
		t.Errorf("list_checkpoints with a pattern over names = %v, want no phase_checkpoints", s)
	}
}

// TestLoadDeletedCheckpointSaysSo: a checkpoint the user deleted (cairn checkpoint delete)
// was "not found; call list_checkpoints to see the saved names", which lists no such name
// and reads as state lost; load_checkpoint now says it was deleted, and when, as the CLI does.
func TestLoadDeletedCheckpointSaysSo(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "save_checkpoint", `{"name":"plan-v1","data":{"steps":[1]}}`)
	if _, err := p.other(t, "cli").DeleteCheckpoint("plan-v1"); err != nil {
		t.Fatal(err)
	}
	res := mustFail(t, c, "load_checkpoint", `{"name":"plan-v1"}`, `checkpoint "plan-v1" not found: it was deleted (`, "cairn checkpoint delete keeps no copy")
	if got := text(res); strings.Contains(got, "list_checkpoints") {
		t.Errorf("load_checkpoint of a deleted checkpoint sends the model to list_checkpoints: %q", got)
	}
	mustFail(t, c, "load_checkpoint", `{"name":"never-saved"}`, `checkpoint "never-saved" not found`, "call list_checkpoints")
}

// TestDamagedStateToolsCallAgain: with the snapshot and the journal both damaged, a change is
// refused with the step the agent takes for damaged state (the user runs cairn doctor), and,
// as every such step says, that the call is made again after: it said only the first half.
func TestDamagedStateToolsCallAgain(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"damaged"}`)
	state := filepath.Join(p.root, ".claude", "cairn")
	if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	journals, _ := filepath.Glob(filepath.Join(state, "journal", "*.jsonl"))
	for _, j := range journals {
		if err := os.WriteFile(j, []byte("not a journal line\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, call := range []struct{ tool, args string }{
		{"transition", `{"to":"plan"}`},
		{"start_workflow", `{"type":"apex","context":"over it"}`},
	} {
		mustFail(t, c, call.tool, call.args, "cannot be read", "ask the user to run `cairn doctor`, which says what to fix, then call "+call.tool+" again")
	}
}

// startSymlinkedMini writes a three-phase definition into under (a directory beside the
// project, as a dotfiles repository is), links .claude/workflows/mini.md to it, and starts a
// mini workflow on a server that watches it; it returns that directory, the definition and
// the client.
func startSymlinkedMini(t *testing.T, under string) (shared, def string, c *client.Client) {
	t.Helper()
	p := newProject(t)
	shared = filepath.Join(filepath.Dir(p.root), under)
	def = "---\nname: mini\nphases: [one, two, three]\nterminal: [three]\n---\n"
	writeAtomic(t, filepath.Join(shared, "mini.md"), []byte(def))
	link := filepath.Join(p.root, ".claude", "workflows", "mini.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(shared, "mini.md"), link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	_, c = startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 4321, Log: quietLog(), Debounce: 20 * time.Millisecond,
	})
	mustOK(t, c, "start_workflow", `{"type":"mini","context":"symlinked definition"}`)
	return shared, def, c
}
