package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a temp project with its own HOME, so L2 lands in a temp auto-memory dir.
type env struct {
	t       *testing.T
	project string
	home    string
	vars    map[string]string
	clock   *clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, project: filepath.Join(base, "proj"), home: filepath.Join(base, "home"),
		clock: &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}}
	for _, d := range []string{filepath.Join(e.project, ".git"), e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.vars = map[string]string{"HOME": e.home, "CLAUDE_PROJECT_DIR": e.project}
	return e
}

func (e *env) open(session string) *engine.Engine { return e.openAs(session, 4242) }

func (e *env) memoryDir() string {
	return filepath.Join(e.home, ".claude", "projects", strings.ReplaceAll(strings.ReplaceAll(e.project, "/", "-"), ".", "-"), "memory")
}

func (e *env) readMemory(name string) string {
	b, _ := os.ReadFile(filepath.Join(e.memoryDir(), name))
	return string(b)
}

// must(f())(t) fails the test on f's error and returns its value.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestLifecycleWritesL1ThenL2(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")

	res := must(en.Start(engine.StartRequest{Type: "apex", Context: "add retries to the uploader"}))(t)
	if !res.Changed || !strings.Contains(res.Message, "phase analyze") {
		t.Fatalf("start: %+v", res)
	}
	// A second start is refused and names the active workflow.
	if _, err := en.Start(engine.StartRequest{Type: "debug", Context: "other"}); err == nil || !strings.Contains(err.Error(), "still active") {
		t.Fatalf("second start: %v", err)
	}
	e.clock.Add(time.Minute)
	res = must(en.Transition(engine.TransitionRequest{To: "plan", Checkpoint: json.RawMessage(`{"files": ["a.go"]}`), Outputs: []string{"notes/analysis.md"}}))(t)
	if !res.Changed || res.Revision != 2 {
		t.Fatalf("transition: %+v", res)
	}
	var rec workflow.Record
	if err := json.Unmarshal(res.Workflow, &rec); err != nil {
		t.Fatal(err)
	}
	if got := string(rec.Phases["analyze"].Metadata["checkpoint"]); got != `{"files":["a.go"]}` {
		t.Errorf("checkpoint in phase metadata = %s", got)
	}
	// Same phase again: idempotent, nothing written.
	again := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if again.Changed || again.Revision != 2 {
		t.Errorf("idempotent transition changed something: %+v", again)
	}
	// Invalid move names the allowed targets.
	_, err := en.Transition(engine.TransitionRequest{To: "git-commit"})
	var te *workflow.TransitionError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "implement") {
		t.Fatalf("invalid transition: %v", err)
	}
	// The position line reached Claude Code's auto-memory.
	if mem := e.readMemory("MEMORY.md"); !strings.Contains(mem, "[Cairn workflow](cairn-workflow.md)") || !strings.Contains(mem, "Active APEX workflow: analyze completed") {
		t.Errorf("MEMORY.md = %q", mem)
	}
	// Compare-and-swap with a stale from fails and changes nothing.
	if _, err := en.Transition(engine.TransitionRequest{To: "implement", From: "analyze"}); err == nil {
		t.Fatal("stale from accepted")
	}
	// plan is an approval gate: the agent alone cannot leave it.
	var ae *workflow.ApprovalError
	if _, err := en.Transition(engine.TransitionRequest{To: "implement", From: "plan"}); !errors.As(err, &ae) ||
		!strings.Contains(err.Error(), "cairn approve") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("leaving plan without approval: %v", err)
	}
	must(e.open("person").Approve("looks right"))(t)
	must(en.Transition(engine.TransitionRequest{To: "implement", From: "plan"}))(t)
	if !strings.Contains(string(must(en.Transition(engine.TransitionRequest{To: "implement"}))(t).Workflow),
		`"source":"cli","note":"looks right"`) {
		t.Error("the approval is not in the record")
	}
	must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
	must(en.SetVars(map[string]string{"PLAN_PATH": "plans/001.md", "CURRENT_WAVE": "2"}))(t)
	kv := must(en.GetVars([]string{"PLAN_PATH", "NOPE"}))(t)
	if len(kv) != 1 || kv["PLAN_PATH"] != "plans/001.md" {
		t.Errorf("get vars = %v", kv)
	}
	exp := must(en.ExportVars())(t)
	if !strings.Contains(exp, "export PLAN_PATH='plans/001.md'") {
		t.Errorf("export = %q", exp)
	}

	// A new session resumes: the report names the phase and the completed phases, and the
	// running task with no output is recovered to pending.
	en2 := e.open("s2")
	r := must(en2.Resume(engine.ResumeOptions{Apply: true, Source: "startup"}))(t)
	if r.Tier != "Full" || r.Phase != "implement" || strings.Join(r.Completed, ",") != "analyze,plan" {
		t.Fatalf("resume: tier %s phase %s completed %v", r.Tier, r.Phase, r.Completed)
	}
	if !strings.Contains(r.Report, "implement") || !strings.Contains(r.Report, "analyze") || len(r.Report) > 2000 {
		t.Errorf("report:\n%s", r.Report)
	}
	if !containsAny(r.Notices, "t1") {
		t.Errorf("no recovery notice for the running task: %v", r.Notices)
	}
	if !strings.Contains(string(r.Workflow), `"state":"implement"`) {
		t.Errorf("resume_check's answer lacks the record: %s", r.Workflow)
	}
	// The SessionStart hook asks for the report only: same answer, no record JSON.
	short := must(en2.Resume(engine.ResumeOptions{Apply: true, Source: "startup", ReportOnly: true}))(t)
	if len(short.Workflow) != 0 || short.Phase != r.Phase || short.Tier != r.Tier || short.Report == "" {
		t.Errorf("ReportOnly: workflow %s, phase %s, tier %s, report %q", short.Workflow, short.Phase, short.Tier, short.Report)
	}

	must(en2.Transition(engine.TransitionRequest{To: "review"}))(t)
	done := must(en2.Transition(engine.TransitionRequest{To: "git-commit"}))(t)
	if !strings.Contains(done.Message, "complete") || !strings.Contains(done.Message, "archived") {
		t.Errorf("terminal transition: %+v", done)
	}
	if topic := e.readMemory("cairn-workflow.md"); !strings.Contains(topic, "Completed APEX for “add retries to the uploader”") {
		t.Errorf("completion line missing from topic file:\n%s", topic)
	}
	// Nothing active now, and nothing lost: the ending is reported as an ending, once, in one
	// line, by the next session start; later ones say nothing. resume_check always says it.
	for i, want := range []string{`the last one ended ("Completed APEX for “add retries`, ""} {
		r = must(e.open(fmt.Sprintf("next-%d", i)).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
		if r.Tier != "None" || !strings.HasPrefix(r.Ended, "Completed APEX") || strings.Count(r.Report, "\n") > 1 ||
			!strings.Contains(r.Report, want) || (want == "") != (r.Report == "") || len(r.Report) > 250 {
			t.Errorf("session %d after completion: tier %s ended %q report %q", i+1, r.Tier, r.Ended, r.Report)
		}
	}
	r = must(en2.Resume(engine.ResumeOptions{Apply: true}))(t)
	if !strings.Contains(r.Report, "nothing to resume") || strings.Contains(r.Report, "resume_check") {
		t.Errorf("resume_check after completion: %q", r.Report)
	}
	list := must(en2.List())(t)
	if len(list) != 1 || list[0].Status != "completed" || list[0].Type != "apex" {
		t.Errorf("list = %+v", list)
	}
	hist := must(en2.History(list[0].WorkflowID))(t)
	if len(hist) < 6 || hist[0].Kind != "start" {
		t.Errorf("history = %+v", hist)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestExpiryArchivesAndWritesTheExpiryLine(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "debug", Context: "flaky login test", TTL: "1h"}))(t)

	e.clock.Add(59 * time.Minute)
	if r := must(en.ExpireTTL(false))(t); r.Changed {
		t.Fatalf("expired early: %+v", r)
	}
	e.clock.Add(2 * time.Minute)
	dry := must(en.ExpireTTL(true))(t)
	if dry.Changed || !strings.Contains(dry.Message, "would be archived") {
		t.Fatalf("dry run: %+v", dry)
	}
	r := must(e.open("s2").Resume(engine.ResumeOptions{Apply: true, Source: "startup"}))(t)
	// Said once to the model (the ending line) and once to the person (systemMessage).
	if !strings.Contains(r.Report, `the last one ended ("Expired DEBUG workflow at troubleshoot`) || strings.Count(r.Report, "xpired") != 1 ||
		!strings.Contains(r.SystemMessage, "expired") || len(r.Notices) != 0 {
		t.Fatalf("expiry not reported once: %+v", r)
	}
	if topic := e.readMemory("cairn-workflow.md"); !strings.Contains(topic, "Expired DEBUG workflow at troubleshoot for “flaky login test”, archived") {
		t.Errorf("expiry line missing:\n%s", topic)
	}
	list := must(en.List())(t)
	if len(list) != 1 || list[0].Status != "expired" {
		t.Errorf("archive = %+v", list)
	}
}

func TestReplaceArchivesTheOldWorkflow(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	first := must(en.Start(engine.StartRequest{Type: "apex", Context: "one"}))(t)
	must(en.Start(engine.StartRequest{Type: "debug", Context: "two", Replace: true}))(t)
	list := must(en.List())(t)
	if len(list) != 2 || list[0].Context != "two" || list[1].Status != "replaced" {
		t.Fatalf("list = %+v", list)
	}
	var rec workflow.Record
	_ = json.Unmarshal(first.Workflow, &rec)
	if _, err := en.Show(rec.WorkflowID); err != nil {
		t.Errorf("the replaced workflow is not kept: %v", err)
	}
}

func TestStopBlocksOncePerViolationSet(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "x"}))(t)
	must(en.SetEnforcement([]engine.Violation{{Code: "V-TEST-03", Severity: "HIGH", Details: "no test for retry"}}))(t)

	out := must(en.Stop(engine.StopInput{SessionID: "s1", StopHookActive: true}))(t)
	if out.Block {
		t.Fatal("blocked while stop_hook_active")
	}
	out = must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
	if !out.Block || !strings.Contains(out.Reason, "V-TEST-03") {
		t.Fatalf("first stop: %+v", out)
	}
	out = must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
	if out.Block {
		t.Fatal("blocked twice for the same violations")
	}
	must(en.SetEnforcement([]engine.Violation{{Code: "V-SEC-01", Severity: "CRITICAL", Details: "token in log"}}))(t)
	if out = must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); !out.Block {
		t.Fatal("a new set of violations did not block")
	}
	e.vars["CAIRN_STOP_BLOCKING"] = "off"
	must(en.SetEnforcement([]engine.Violation{{Code: "V-SEC-02", Severity: "HIGH", Details: "y"}}))(t)
	if out = must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t); out.Block {
		t.Fatal("blocked although CAIRN_STOP_BLOCKING=off")
	}
}

func TestStopSettlesOwedL2Lines(t *testing.T) {
	e := newEnv(t)
	// Make the memory directory unwritable: the transition succeeds with a warning.
	mem := e.memoryDir()
	if err := os.MkdirAll(filepath.Dir(mem), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mem, []byte("not a dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "owed"}))(t)
	res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if len(res.Warnings) == 0 {
		t.Fatal("no warning for the failed L2 write")
	}
	if err := os.Remove(mem); err != nil {
		t.Fatal(err)
	}
	out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t)
	if len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "Active APEX workflow") {
		t.Fatalf("stop wrote %v", out.Wrote)
	}
	if out = must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); len(out.Wrote) != 0 {
		t.Errorf("second stop wrote again: %v", out.Wrote)
	}
}

func TestNoActiveWorkflowErrorsAreClear(t *testing.T) {
	en := newEnv(t).open("s1")
	_, err := en.Transition(engine.TransitionRequest{To: "plan"})
	if !errors.Is(err, engine.ErrNoActiveWorkflow) || !strings.Contains(err.Error(), "start_workflow") {
		t.Errorf("transition without workflow: %v", err)
	}
	if _, err := en.LoadCheckpoint("nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing checkpoint: %v", err)
	}
	r := must(en.Resume(engine.ResumeOptions{Apply: true}))(t)
	if r.Tier != "None" || r.Report != "" {
		t.Errorf("empty project: tier %s report %q", r.Tier, r.Report)
	}
	if _, err := en.Start(engine.StartRequest{Type: "nosuch", Context: "x"}); err == nil || !strings.Contains(err.Error(), "apex") {
		t.Errorf("unknown type: %v", err)
	}
}

func TestRefusedReplaceKeepsTheActiveWorkflow(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "keep me"}))(t)
	_, err := en.Start(engine.StartRequest{Type: "debug", Context: "token ghp_" + strings.Repeat("a1B2", 9), Replace: true})
	if err == nil || strings.Contains(err.Error(), "ghp_") {
		t.Fatalf("secret start: %v", err)
	}
	r := must(en.Resume(engine.ResumeOptions{}))(t)
	if r.Context != "keep me" {
		t.Fatalf("the active workflow was lost: %+v", r)
	}
	if list := must(en.List())(t); len(list) != 1 {
		t.Fatalf("something was archived: %+v", list)
	}
}

// A project's own definition overrides the built-in of the same name, also for a fresh
// process whose first lookup would otherwise take the built-in-only fast path.
func TestUserDefinitionOverridesBuiltinInFreshProcess(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.project, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	def := "---\nname: apex\ndescription: shorter apex\nphases: [analyze, ship]\ntransitions: {analyze: [ship]}\nterminal: [ship]\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(dir, "apex.md"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "override"}))(t)
	r := must(e.open("s2").Resume(engine.ResumeOptions{}))(t)
	if strings.Join(r.Allowed, ",") != "ship" {
		t.Fatalf("allowed next = %v; the project's apex definition was not used", r.Allowed)
	}
}

// Running tasks are taken as interrupted only when their session is gone: a resume_check by
// the session that is running them (or a start after /compact, same session) leaves them be.
func TestOwnRunningTasksAreNotRecovered(t *testing.T) {
	e := newEnv(t)
	en := e.openAs("s1", os.Getpid()) // a live client
	must(en.Start(engine.StartRequest{Type: "apex", Context: "tasks"}))(t)
	must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)

	r := must(e.openAs("s1", os.Getpid()).Resume(engine.ResumeOptions{Apply: true, Source: "compact"}))(t)
	if containsAny(r.Notices, "t1") || !strings.Contains(string(r.Workflow), `"status":"running"`) {
		t.Fatalf("the session's own running task was recovered: notices %v\n%s", r.Notices, r.Workflow)
	}
	// Another session while the owner's client is alive and recent: not recovered either.
	r = must(e.openAs("s2", 4242).Resume(engine.ResumeOptions{Apply: true, Source: "startup"}))(t)
	if containsAny(r.Notices, "t1") {
		t.Fatalf("a live session's running task was recovered: %v", r.Notices)
	}
	// Once the owner has been quiet past the live window, it was interrupted.
	e.clock.Add(11 * time.Minute)
	r = must(e.openAs("s2", 4242).Resume(engine.ResumeOptions{Apply: true, Source: "startup"}))(t)
	if !containsAny(r.Notices, "t1") {
		t.Fatalf("an abandoned running task was not recovered: %v", r.Notices)
	}
}
