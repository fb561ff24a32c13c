package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestAdapterFake drives every tool against the fake engine and checks what reached it and
// what came back: the adapter's mapping, independent of the real engine.
func TestAdapterFake(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)

	res := mustOK(t, c, "resume_check", `{}`)
	if s := structured(t, res); s["tier"] != "None" {
		t.Errorf("resume_check tier = %v, want None", s["tier"])
	}
	res = mustOK(t, c, "start_workflow", `{"type":"apex","context":"add login","scope":"standard","ttl":"24h"}`)
	if s := structured(t, res); s["changed"] != true || s["revision"] != float64(1) {
		t.Errorf("start_workflow structured = %v", s)
	}
	mustOK(t, c, "transition", `{"to":"plan","from":"analyze","outputs":["docs/analysis.md"],"checkpoint":{"files":3},"note":"analysis done"}`)

	// An invalid move names the allowed targets, in text and structured content.
	res = mustFail(t, c, "transition", `{"to":"git-commit"}`, "cannot move from plan to git-commit", "next phases: implement, analyze")
	if res.StructuredContent != nil {
		t.Errorf("error result carries structured content %v; the output schema describes success only", res.StructuredContent)
	}
	mustFail(t, c, "transition", `{"to":"implement","from":"review"}`, "expected phase review, found plan")

	mustOK(t, c, "update_task", `{"id":"t1","status":"running","output":"src/login.go","note":"started"}`)
	mustOK(t, c, "set_enforcement", `{"violations":[{"code":"V-TEST-03","severity":"HIGH","details":"no tests"}]}`)
	res = mustOK(t, c, "resume_check", `{}`)
	// The text is the engine's details view, once; the facts are in the structured content.
	if want := "<cairn-resume nonce=x>\nWorkflow apex-20261122T173000Z-3f9a at plan\n</cairn-resume>"; text(res) != want {
		t.Errorf("resume_check text is not the details view alone:\n%s", text(res))
	}
	if s := structured(t, res); fmt.Sprint(s["allowed"]) != "[implement analyze]" || !strings.Contains(fmt.Sprint(s["blocking"]), "V-TEST-03") {
		t.Errorf("resume_check structured content: %v", s)
	}
	mustOK(t, c, "set_enforcement", `{"violations":[]}`)

	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md","WF_N":"3"}}`)
	res = mustOK(t, c, "get_vars", `{"keys":["PLAN_PATH"]}`)
	if s := structured(t, res); s["vars"].(map[string]any)["PLAN_PATH"] != "docs/plan.md" || len(s["vars"].(map[string]any)) != 1 {
		t.Errorf("get_vars = %v", s)
	}
	if got := text(mustOK(t, c, "get_vars", `{}`)); got != "PLAN_PATH=docs/plan.md\nWF_N=3" {
		t.Errorf("get_vars text = %q", got)
	}

	mustOK(t, c, "save_checkpoint", `{"name":"implement-progress","data":{"done":["a","b"],"n":2}}`)
	mustOK(t, c, "save_checkpoint", `{"name":"list.v1","data":[1,2,3]}`)
	res = mustOK(t, c, "load_checkpoint", `{"name":"implement-progress"}`)
	if d, _ := json.Marshal(structured(t, res)["data"]); string(d) != `{"done":["a","b"],"n":2}` {
		t.Errorf("load_checkpoint data = %s", d)
	}
	mustFail(t, c, "load_checkpoint", `{"name":"absent"}`, `checkpoint "absent" not found`, "call list_checkpoints")
	res = mustOK(t, c, "list_checkpoints", `{"pattern":"implement-*"}`)
	if names := structured(t, res)["names"].([]any); len(names) != 1 || names[0] != "implement-progress" {
		t.Errorf("list_checkpoints = %v", names)
	}
	res = mustOK(t, c, "list_checkpoints", `{"pattern":"zzz*"}`)
	if names := structured(t, res)["names"].([]any); len(names) != 0 {
		t.Errorf("list_checkpoints(zzz*) = %v, want []", names)
	}

	mustOK(t, c, "append_log", `{"name":"benchmarks","entry":{"ms":12}}`)
	mustOK(t, c, "record_learning", `{"title":"Use fsync","body":"Rename is not durable\nwithout a dir fsync.","type":"Project"}`)
	mustOK(t, c, "initiative", `{"action":"get"}`)
	mustOK(t, c, "expire_ttl", `{"dry_run":true}`)
	res = mustOK(t, c, "complete_workflow", `{"outcome":"login shipped"}`)
	if !strings.Contains(text(res), "Completed: login shipped") {
		t.Errorf("complete_workflow text = %q", text(res))
	}
	mustFail(t, c, "complete_workflow", `{"outcome":"again"}`, "no active workflow")

	st.mu.Lock()
	defer st.mu.Unlock()
	if st.vars["WF_N"] != "3" || string(st.logs["benchmarks"][0]) != `{"ms":12}` {
		t.Errorf("engine state vars=%v logs=%v", st.vars, st.logs)
	}
	if len(st.learnings) != 1 || st.learnings[0].Type != "project" || !strings.Contains(st.learnings[0].Body, "\n") {
		t.Errorf("learning = %+v", st.learnings)
	}
	if len(st.opens) != 1 || st.opens[0].SessionID != "session-a" || st.opens[0].PID != 4242 || st.opens[0].Actor != "mcp" {
		t.Errorf("engine opened with %+v", st.opens)
	}
}

// TestNoticeOfOtherProcess: when another process moves the workflow between two calls, the
// next result starts with a notice saying who moved it where; the one after does not.
func TestNoticeOfOtherProcess(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	if got := text(mustOK(t, c, "get_vars", `{}`)); strings.Contains(got, "Notice") {
		t.Fatalf("own write reported as another's: %q", got)
	}

	st.otherProcess("session-b", "plan")
	res := mustOK(t, c, "get_vars", `{}`)
	first := strings.SplitN(text(res), "\n", 2)[0]
	noticeSays(t, first, "Notice:", "another session changed", "phase plan", "revision 2, was 1", "resume_check")
	if s := structured(t, res); s["notice"] != first {
		t.Errorf("structured notice = %v, want %q", s["notice"], first)
	}
	noNotice(t, c, "get_vars", "notice repeated")

	// Error results carry the notice too.
	st.otherProcess("session-b", "implement")
	mustFail(t, c, "transition", `{"to":"plan"}`, "Notice:", "phase implement", "cannot move from implement to plan")

	// A change made for our own session (its hooks) is not news.
	st.otherProcess("session-a", "review")
	noNotice(t, c, "get_vars", "own session's change reported")
}

// The notice on resume_check's own result says what changed but not to call resume_check:
// the result is that call.
func TestNoticeOnResumeCheckSendsNowhereElse(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	st.otherProcess("session-b", "plan")
	res := mustOK(t, c, "resume_check", `{}`)
	notice, _ := structured(t, res)["notice"].(string)
	if !strings.Contains(notice, "another session changed") || !strings.Contains(notice, "phase plan") ||
		strings.Contains(notice, "resume_check") || !strings.HasPrefix(text(res), notice+"\n") {
		t.Errorf("the notice on resume_check's result: %q\n%s", notice, text(res))
	}
}

func TestNoticeWhenWorkflowGone(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	st.mu.Lock()
	st.wf = nil
	st.mu.Unlock()
	got := text(mustOK(t, c, "list_checkpoints", `{}`))
	if !strings.HasPrefix(got, "Notice: workflow apex-20261122T173000Z-3f9a is no longer active") {
		t.Errorf("got %q", got)
	}
}

func TestEngineUnavailable(t *testing.T) {
	opts, st := fakeOptions(t)
	st.failOpen = errors.New("state dir /x is not writable")
	_, c := startServer(t, opts)
	mustFail(t, c, "resume_check", `{}`, "could not open the workflow state", "state dir /x is not writable", "nothing was changed", "CAIRN_STATE_DIR")
	// Argument problems are still reported first: they are what the agent can fix.
	mustFail(t, c, "transition", `{}`, `missing required argument "to"`)

	st.mu.Lock()
	st.failOpen = nil
	st.mu.Unlock()
	mustOK(t, c, "resume_check", `{}`)
}

func TestCallsAfterCloseAreRefused(t *testing.T) {
	opts, st := fakeOptions(t)
	srv, c := startServer(t, opts)
	mustOK(t, c, "resume_check", `{}`)
	if err := srv.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	mustFail(t, c, "resume_check", `{}`, "shutting down", "nothing was changed")
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closes != 1 {
		t.Errorf("engine closed %d times, want 1", st.closes)
	}
}

// TestCloseWaitsForCallInProgress: Close lets a running call finish before closing the engine,
// and a bounded Close gives up rather than hanging. The test goes on when Close waits (asks
// its context for Done), not after a while.
func TestCloseWaitsForCallInProgress(t *testing.T) {
	srv, release, res := blockedTransition(t)
	closed := make(chan error, 1)
	ctx := newWaitedCtx(context.Background())
	go func() { closed <- srv.Close(ctx) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a call was running")
	case <-ctx.waited:
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a call was running")
	default:
	}
	close(release)
	if got := <-res; !strings.Contains(got, "Moved to plan") {
		t.Errorf("call in progress returned %q", got)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}

	srv, release, _ = blockedTransition(t)
	defer close(release)
	bounded, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = newWaitedCtx(bounded)
	go func() { closed <- srv.Close(ctx) }()
	select {
	case <-ctx.waited:
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was blocked", err)
	}
	cancel() // its context ends while it waits
	if err := <-closed; err == nil {
		t.Error("Close whose context ended succeeded while a call was blocked")
	}
}

// waitedCtx closes waited when its Done is first asked for: a select on it has begun.
type waitedCtx struct {
	context.Context
	once   sync.Once
	waited chan struct{}
}

func newWaitedCtx(ctx context.Context) *waitedCtx {
	return &waitedCtx{Context: ctx, waited: make(chan struct{})}
}

func (c *waitedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waited) })
	return c.Context.Done()
}

// blockedTransition starts a server with a workflow and calls transition, whose engine call
// blocks until release is closed; it returns once the call is in the engine. res gets the
// call's text when it returns.
func blockedTransition(t *testing.T) (srv *mcptools.Server, release chan struct{}, res <-chan string) {
	opts, st := fakeOptions(t)
	srv, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	release = make(chan struct{})
	st.mu.Lock()
	st.block = release
	st.mu.Unlock()
	out := make(chan string, 1)
	go func() {
		r, err := c.CallTool(context.Background(), toolRequest("transition", `{"to":"plan"}`))
		if err != nil {
			out <- err.Error()
			return
		}
		out <- text(r)
	}()
	waitFor(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.calls[len(st.calls)-1] == "transition"
	})
	return srv, release, out
}

func toolRequest(name, args string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = json.RawMessage(args)
	return req
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	waitWithin(t, 10*time.Second, cond)
}

// waitWithin is waitFor, failing only once d has passed.
func waitWithin(t testing.TB, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// writeAtomic replaces a file the way the store does: temp file, rename. On Linux the watcher
// sees only a CREATE for the target.
func writeAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestWatcherLearnsSessionAndDefinitions: after /clear the SessionStart hook records a new
// session for Claude Code's pid; the server acts for it from then on. A workflow definition
// appearing or changing reloads the definitions.
func TestWatcherLearnsSessionAndDefinitions(t *testing.T) {
	opts, st := fakeOptions(t)
	opts.NoWatch = false
	opts.Debounce = 20 * time.Millisecond
	srv, c := startServer(t, opts)
	mustOK(t, c, "resume_check", `{}`) // the engine is open and the watcher running

	// sessions/ does not exist yet: the watcher must notice it appear.
	sess := func(id string, pid int) []byte {
		b, _ := json.Marshal(engine.Session{SessionID: id, PID: pid})
		return b
	}
	writeAtomic(t, filepath.Join(st.dir, "sessions", "999.json"), sess("someone-else", 999))
	writeAtomic(t, filepath.Join(st.dir, "sessions", "4242.json"), sess("session-b", 4242))
	waitFor(t, func() bool { return srv.Session() == "session-b" })
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	st.mu.Lock()
	if st.wf.Session != "session-b" {
		t.Errorf("write recorded session %q, want session-b", st.wf.Session)
	}
	if len(st.sessionSets) != 1 || st.sessionSets[0] != "session-b" {
		t.Errorf("SetSession calls %v, want [session-b]", st.sessionSets)
	}
	st.mu.Unlock()

	// Another client's session file changing is not ours.
	writeAtomic(t, filepath.Join(st.dir, "sessions", "999.json"), sess("someone-else-2", 999))
	// A definition appears in a directory that did not exist when the server started, then
	// changes.
	def := filepath.Join(opts.WorkDir, ".claude", "workflows", "review.md")
	writeAtomic(t, def, []byte("---\nname: review\n---\n"))
	reloads := func() int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.reloads
	}
	waitFor(t, func() bool { return reloads() >= 1 })
	n := reloads()
	writeAtomic(t, def, []byte("---\nname: review\nphases: [a, b]\n---\n"))
	waitFor(t, func() bool { return reloads() > n })
	if got := srv.Session(); got != "session-b" {
		t.Errorf("session = %q after another client's change, want session-b", got)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.opens) != 1 {
		t.Errorf("engine opened %d times, want once", len(st.opens))
	}
}

var _ = mcptools.Instructions

// TestSessionFileAtStart: a server started after /clear (a reconnect) finds the session the
// hook recorded for its parent and acts for it rather than for its stale environment.
func TestSessionFileAtStart(t *testing.T) {
	opts, st := fakeOptions(t)
	b, _ := json.Marshal(engine.Session{SessionID: "session-cleared", PID: 4242})
	writeAtomic(t, filepath.Join(st.dir, "sessions", "4242.json"), b)
	srv, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	if got := srv.Session(); got != "session-cleared" {
		t.Errorf("session = %q, want session-cleared", got)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.wf.Session != "session-cleared" {
		t.Errorf("write recorded session %q", st.wf.Session)
	}
}

// TestErrorAfterANoticeSaysItsStepOnce: an error result that says to call resume_check (a call
// refused because another process put another workflow in the slot, an internal error) carries
// the notice of the change before it, which ends with the same step; the result says it once.
func TestErrorAfterANoticeSaysItsStepOnce(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		change           func(st *fakeState)
		want             []string
	}{
		{"another workflow", "transition", `{"to":"plan"}`, func(st *fakeState) {
			st.wf = &fakeWorkflow{ID: "debug-other", Type: "debug", Phase: "analyze", Session: "session-b", Revision: 1}
		}, []string{"Notice: the active workflow changed", "transition was not run"}},
		{"internal error", "get_vars", `{}`, func(st *fakeState) {
			st.wf.Phase, st.wf.Session = "plan", "session-b"
			st.wf.Revision++
			st.panicVars = true
		}, []string{"Notice: another session changed", "internal error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, st := fakeOptions(t)
			_, c := startServer(t, opts)
			mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
			st.mu.Lock()
			tc.change(st)
			before := *st.wf
			st.mu.Unlock()
			got := text(mustFail(t, c, tc.tool, tc.args, tc.want...))
			if n := strings.Count(got, "resume_check"); n != 1 {
				t.Errorf("the result names resume_check %d times, want once:\n%s", n, got)
			}
			if st.wf.Phase != before.Phase || st.wf.Revision != before.Revision {
				t.Errorf("the workflow was changed: %+v, was %+v", *st.wf, before)
			}
		})
	}
}

// TestUnwritableMemoryDirNamedAsSuch: the user's step for a directory that cannot be written
// names the directory the refusal is about: a memory directory a learning could not be written
// to was said to be the state directory, which is writable and not the one to fix.
func TestUnwritableMemoryDirNamedAsSuch(t *testing.T) {
	opts, st := fakeOptions(t)
	st.failLearn = &memory.UnavailableError{Reason: "the memory directory /home/u/.claude/projects/p/memory is read-only or not writable",
		Err: &fs.PathError{Op: "openat", Path: ".cairn-memory.lock", Err: fs.ErrPermission}}
	_, c := startServer(t, opts)
	got := text(mustFail(t, c, "record_learning", `{"title":"t","body":"b"}`, "the memory directory", "Tell the user", "do not delete or move files"))
	if strings.Contains(got, "state directory") {
		t.Errorf("the step names the state directory: %s", got)
	}
}

// TestQuotaStepIsTheUsers: a state write refused because the user's disk quota is used up
// (EDQUOT) reached the model as the store's words alone, with no step and nothing to keep it
// from making room by deleting files, as a full disk's refusal has; it is now the user's to
// fix, said as a quota, not a full disk (df shows room).
func TestQuotaStepIsTheUsers(t *testing.T) {
	opts, st := fakeOptions(t)
	st.failSave = &store.WriteError{Dir: "/p/.claude/cairn", Name: "checkpoints/plan.json", Err: &fs.PathError{Op: "write", Path: "checkpoints/.tmp-plan.json-1", Err: syscall.EDQUOT}}
	_, c := startServer(t, opts)
	got := text(mustFail(t, c, "save_checkpoint", `{"name":"plan","data":{}}`,
		"Tell the user: this user's disk quota", "do not delete or move files", "Call save_checkpoint again once it is fixed"))
	if strings.Contains(got, "free some") || strings.Contains(got, "the disk is full") {
		t.Errorf("the model is told to free space itself, or that the disk is full: %s", got)
	}
}
