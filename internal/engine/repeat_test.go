package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// An agent retries a write (after a timeout, a compaction, /clear) with the same arguments.
// Each repeat must say what really happened: nothing changed, at the same revision, without
// an error that would send the model looking for another way (replace, a new workflow).

// again runs a write whose first call has landed, a minute later, and checks that it reports
// no change at the revision the first left.
func again(t *testing.T, e *env, what string, first *engine.Result, f func() (*engine.Result, error)) *engine.Result {
	t.Helper()
	e.clock.Add(time.Minute)
	res, err := f()
	if err != nil {
		t.Fatalf("%s again: %v; want success with nothing changed", what, err)
	}
	if res.Changed || !strings.Contains(res.Message, "nothing changed") {
		t.Errorf("%s again: changed %v, message %q; want changed false and \"nothing changed\"", what, res.Changed, res.Message)
	}
	if first != nil && res.Revision != first.Revision {
		t.Errorf("%s again: revision %d, want %d as the first call left it", what, res.Revision, first.Revision)
	}
	return res
}

func TestSetEnforcementAgain(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "repeat enforcement")
	vs := []engine.Violation{{Code: "V-TEST-03", Severity: "high", Details: "no test"}}
	first := must(en.SetEnforcement(vs))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "set_enforcement", first, func() (*engine.Result, error) { return e.open("s2").SetEnforcement(vs) })
	if !strings.Contains(res.Message, "1 HIGH violation") {
		t.Errorf("message %q does not say what is on record", res.Message)
	}
}

func TestRecordLearningAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := engine.LearningRequest{Title: "Run migrations first", Body: "make migrate before go test"}
	first := must(e.open("s1").RecordLearning(l))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	again(t, e, "record_learning", first, func() (*engine.Result, error) { return e.open("s1").RecordLearning(l) })
	l.Body = "make migrate-test"
	if res := must(e.open("s1").RecordLearning(l))(t); !res.Changed {
		t.Errorf("another body: %+v; want a change", res)
	}
}

// A compare-and-swap move retried by the session that made it, after it landed, finds the
// workflow where the move left it: that is the move already made, not a conflict telling the
// model to re-read and decide. Another session that expected the same phase still learns
// that someone else moved the workflow.
func TestTransitionWithFromAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "repeat a move"}))(t)
	req := engine.TransitionRequest{From: "analyze", To: "plan", Note: "analysis done"}
	first := must(e.open("s1").Transition(req))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "transition from analyze to plan", first, func() (*engine.Result, error) { return e.open("s1").Transition(req) })
	if res.Phase != "plan" {
		t.Errorf("phase %q, want plan", res.Phase)
	}
	if _, err := e.openAs("s2", 4243).Transition(req); err == nil || !strings.Contains(err.Error(), "expected phase analyze") {
		t.Errorf("another client's session, the same move: %v; want a conflict", err)
	}
}

// After /clear the client runs a new session id, and cairn-mcp acts for it: the move retried
// then is the move its earlier session made in this client, already made. A session of
// another client, a move other work has followed, another note, or a move made long ago are
// still conflicts: they are not that move retried.
func TestTransitionWithFromAgainAfterClear(t *testing.T) {
	t.Parallel()
	req := engine.TransitionRequest{From: "analyze", To: "plan", Note: "analysis done"}
	setup := func(t *testing.T, pid int) (*env, *engine.Result) {
		e := newEnv(t)
		must(e.openAs("s1", pid).Start(engine.StartRequest{Type: "apex", Context: "repeat a move after /clear"}))(t)
		first := must(e.openAs("s1", pid).Transition(req))(t)
		if !first.Changed {
			t.Fatalf("first: %+v", first)
		}
		return e, first
	}
	t.Run("same client", func(t *testing.T) {
		e, first := setup(t, 4242)
		// What /clear runs for the new session before its first call: the resume report and,
		// after the turn, the Stop hook.
		e.open("s1-after-clear").Resume(engine.ResumeOptions{Apply: true})
		must(e.open("s1-after-clear").Stop(engine.StopInput{SessionID: "s1-after-clear"}))(t)
		res := again(t, e, "transition from analyze to plan after /clear", first, func() (*engine.Result, error) {
			return e.open("s1-after-clear").Transition(req)
		})
		if res.Phase != "plan" || !strings.Contains(res.Message, "already in phase plan") {
			t.Errorf("repeat: %+v; want it to say the workflow is in plan", res)
		}
	})
	// A task of the phase left was still running: the new session's resume report takes it as
	// interrupted and puts it back to pending, which writes the record (and makes the new
	// session its owner). That housekeeping is no work built on the move: the move retried
	// is still the move already made, and the recovery stays.
	t.Run("same client, a task was running", func(t *testing.T) {
		e := newEnv(t)
		must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "repeat a move after /clear"}))(t)
		must(e.open("s1").UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
		first := must(e.open("s1").Transition(req))(t)
		r := e.open("s1-after-clear").Resume(engine.ResumeOptions{Apply: true})
		if !containsAny(r.Notices, "task t1 was running") {
			t.Fatalf("no recovery of the running task: %v", r.Notices)
		}
		e.clock.Add(3 * time.Minute) // past the heartbeat throttle: the Stop hook writes one
		must(e.open("s1-after-clear").Stop(engine.StopInput{SessionID: "s1-after-clear"}))(t)
		recovered := e.open("s1-after-clear").Resume(engine.ResumeOptions{})
		res := again(t, e, "transition from analyze to plan after /clear and a recovery", nil, func() (*engine.Result, error) {
			return e.open("s1-after-clear").Transition(req)
		})
		if res.Phase != "plan" || !strings.Contains(res.Message, "already in phase plan") {
			t.Errorf("repeat: %+v; want it to say the workflow is in plan", res)
		}
		if res.Revision <= first.Revision || string(res.Workflow) != string(recovered.Workflow) {
			t.Errorf("repeat: revision %d (move %d); want the recovered record unchanged:\n%s\nwant\n%s", res.Revision, first.Revision, res.Workflow, recovered.Workflow)
		}
		// Another client's session still learns of the move it did not make, and so does this
		// one once work follows the recovery.
		if _, err := e.openAs("s2", 4243).Transition(req); err == nil || !strings.Contains(err.Error(), "expected phase analyze") {
			t.Errorf("another client's session, the same move: %v; want a conflict", err)
		}
		must(e.open("s1-after-clear").UpdateTask(engine.TaskRequest{ID: "t2", Status: "running"}))(t)
		if _, err := e.open("s1-after-clear").Transition(req); err == nil || !strings.Contains(err.Error(), "expected phase analyze") {
			t.Errorf("the move retried after work followed the recovery: %v; want a conflict", err)
		}
	})
	for _, tc := range []struct {
		name string
		pid  int // the first mover's client
		f    func(e *env) (*engine.Result, error)
	}{
		{"another client", 4242, func(e *env) (*engine.Result, error) { return e.openAs("s2", 4243).Transition(req) }},
		{"no client pid", 4242, func(e *env) (*engine.Result, error) { return e.openAs("s2", 0).Transition(req) }},
		// Sharing the workflow through a remote: a client there with the same pid (containers
		// number their processes alike) is another client all the same.
		{"another machine's client of the same pid", 4242, func(e *env) (*engine.Result, error) {
			return e.openWith("s2", 4242, func(c *engine.Config) { c.Host = "machine-b" }).Transition(req)
		}},
		{"no client pid either time", 0, func(e *env) (*engine.Result, error) { return e.openAs("s2", 0).Transition(req) }},
		{"another note", 4242, func(e *env) (*engine.Result, error) {
			return e.open("s2").Transition(engine.TransitionRequest{From: "analyze", To: "plan", Note: "skip the analysis"})
		}},
		{"work after the move", 4242, func(e *env) (*engine.Result, error) {
			must(e.open("s1").UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(e.t)
			return e.open("s2").Transition(req)
		}},
		{"another client's change after the move", 4242, func(e *env) (*engine.Result, error) {
			must(e.openAs("s3", 4243).SetVars(map[string]string{"PLAN_PATH": "plans/1.md"}))(e.t)
			return e.open("s2").Transition(req)
		}},
		{"long ago", 4242, func(e *env) (*engine.Result, error) {
			e.clock.Add(time.Hour)
			return e.open("s2").Transition(req)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := setup(t, tc.pid)
			e.clock.Add(time.Minute)
			if _, err := tc.f(e); err == nil || !strings.Contains(err.Error(), "expected phase analyze") {
				t.Errorf("%v; want a conflict", err)
			}
		})
	}
}

// cairn approve run twice (the person was not sure the first took) says the phase is already
// approved: "waits for no approval" reads as if the first had not counted.
func TestApproveAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "approve twice"}))(t)
	must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t)
	first := must(e.open("cli").Approve("looks good"))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "approve", first, func() (*engine.Result, error) { return e.open("cli").Approve("looks good") })
	if !strings.Contains(res.Message, "already approved") {
		t.Errorf("message %q does not say the phase is already approved", res.Message)
	}
	// The person ran it again unsure whether the first took, so may not have told the agent
	// yet: the step is the first one's.
	if !strings.HasSuffix(res.Message, "; nothing changed; tell the agent to go on: it may leave plan now") {
		t.Errorf("message %q does not end with the step", res.Message)
	}
	must(e.open("s1").Transition(engine.TransitionRequest{To: "implement"}))(t)
	if _, err := e.open("cli").Approve(""); err == nil || !strings.Contains(err.Error(), "waits for no approval") {
		t.Errorf("approving a phase that is no gate: %v; want a refusal", err)
	}
}

// complete_workflow retried after it landed finds no active workflow: "no active workflow
// ... start_workflow" would send the model to start one over the work it just finished.
// The same outcome again is the completion already made; another outcome is still refused.
func TestCompleteAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "complete twice"}))(t)
	move := engine.TransitionRequest{From: "analyze", To: "plan"}
	must(e.open("s1").Transition(move))(t)
	must(e.open("cli").Approve(""))(t) // plan waits for a person's yes
	e.clock.Add(time.Second)
	first := must(e.open("s1").Complete("retries added"))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	topic := e.readMemory("cairn-workflow.md")
	res := again(t, e, "complete_workflow", nil, func() (*engine.Result, error) { return e.open("s1").Complete("retries added") })
	if !strings.Contains(res.Message, "already completed") || res.WorkflowID == "" {
		t.Errorf("message %q, workflow %q: want it to say which workflow was already completed", res.Message, res.WorkflowID)
	}
	if got := e.readMemory("cairn-workflow.md"); got != topic {
		t.Errorf("the repeat wrote L2 again:\n%s", got)
	}
	if _, err := e.open("s1").Complete("something else"); err == nil {
		t.Error("completing with another outcome, no workflow active: want an error")
	}
	if _, err := e.open("s1").Transition(move); err == nil {
		t.Error("the move made before complete_workflow, retried: want an error, not \"completed by the move\"")
	}
}

// A move into the terminal phase retried after it landed (the workflow completed and was
// archived) is the move already made.
func TestTransitionToTerminalAgain(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "finish twice")
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(e.open("cli").Approve(""))(t)
	for _, p := range []string{"implement", "review"} {
		must(en.Transition(engine.TransitionRequest{To: p}))(t)
	}
	req := engine.TransitionRequest{From: "review", To: "git-commit"}
	if first := must(en.Transition(req))(t); !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "transition to git-commit", nil, func() (*engine.Result, error) { return e.open("s1").Transition(req) })
	if !strings.Contains(res.Message, "already completed") {
		t.Errorf("message %q does not say the workflow was already completed", res.Message)
	}
	// complete_workflow after the move, with any outcome, is told the move completed it (it
	// was "no active workflow; call resume_check").
	res = again(t, e, "complete_workflow after the move", nil, func() (*engine.Result, error) { return e.open("s1").Complete("shipped") })
	if want := " was already completed by the move review -> git-commit: reached git-commit; nothing changed"; !strings.HasSuffix(res.Message, want) || res.WorkflowID == "" {
		t.Errorf("complete_workflow after the move: message %q, workflow %q; want one ending %q", res.Message, res.WorkflowID, want)
	}
	if _, err := e.open("s1").Transition(engine.TransitionRequest{To: "review"}); err == nil {
		t.Error("another move, no workflow active: want an error")
	}
}

// start_workflow retried after it landed finds its own workflow active: "still active ...
// start again with replace" would lead the model to archive the work it just started. The
// same type, context and scope is the start already made; another start is still refused. A
// replace retried finds the workflow it started untouched, and replaces nothing.
func TestStartAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req := engine.StartRequest{Type: "apex", Context: "add retries", Scope: "uploader"}
	first := must(e.open("s1").Start(req))(t)
	if !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "start_workflow", first, func() (*engine.Result, error) { return e.open("s1").Start(req) })
	if res.WorkflowID != first.WorkflowID || res.Phase != "analyze" || !strings.Contains(res.Message, "already started") {
		t.Errorf("repeat: %+v; want it to name the workflow started", res)
	}
	for _, other := range []engine.StartRequest{
		{Type: "apex", Context: "add retries", Scope: "downloader"},
		{Type: "apex", Context: "add timeouts", Scope: "uploader"},
		{Type: "debug", Context: "add retries", Scope: "uploader"},
		{Type: "apex", Context: "add retries", Scope: "uploader", WorkflowID: "other-id"},
	} {
		if _, err := e.open("s1").Start(other); err == nil || !strings.Contains(err.Error(), "still active") {
			t.Errorf("start %+v: %v; want it refused", other, err)
		}
	}

	replaced := must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "add backoff", Replace: true}))(t)
	res = again(t, e, "start_workflow with replace", replaced, func() (*engine.Result, error) {
		return e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "add backoff", Replace: true})
	})
	if res.WorkflowID != replaced.WorkflowID {
		t.Errorf("replace retried: workflow %s, want %s still active", res.WorkflowID, replaced.WorkflowID)
	}
	// The turn's end refreshes the owner's heartbeat (the Stop hook, a journaled write): no
	// work, so a replace retried after it still finds the workflow it started.
	e.clock.Add(5 * time.Minute)
	must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t)
	res = again(t, e, "start_workflow with replace after a heartbeat", nil, func() (*engine.Result, error) {
		return e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "add backoff", Replace: true})
	})
	if res.WorkflowID != replaced.WorkflowID {
		t.Errorf("replace retried after a heartbeat: workflow %s, want %s still active", res.WorkflowID, replaced.WorkflowID)
	}
	// Once work is on record, a replace with the same context is a fresh start, as asked.
	must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t)
	if res := must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "add backoff", Replace: true}))(t); !res.Changed || res.WorkflowID == replaced.WorkflowID {
		t.Errorf("replace after work: %+v; want a new workflow", res)
	}
}

// Each initiative action retried after it landed changes nothing. create retried was refused
// with "archive it before creating another", which leads to archiving the initiative just
// made; another title is still refused.
func TestInitiativeAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, r := range []engine.InitiativeRequest{
		{Action: "create", Title: "Uploader v2"},
		{Action: "add_milestone", Milestone: "m1", Note: "retries"},
		{Action: "update_milestone", Milestone: "m1", Status: "in_progress"},
		{Action: "update_milestone", Milestone: "m1", Status: "completed"},
		{Action: "set_status", Status: "blocked"},
	} {
		first := must(e.open("s1").Initiative(r))(t)
		if !first.Changed {
			t.Fatalf("%s: %+v", r.Action, first)
		}
		status := e.readFile(".claude/WORKFLOW-STATUS.yaml")
		res := again(t, e, "initiative "+r.Action, first, func() (*engine.Result, error) { return e.open("s1").Initiative(r) })
		if !strings.HasPrefix(res.Message, "initiative initiative-") {
			t.Errorf("%s again: message %q does not say where the initiative stands", r.Action, res.Message)
		}
		if got := e.readFile(".claude/WORKFLOW-STATUS.yaml"); got != status {
			t.Errorf("%s again rewrote WORKFLOW-STATUS.yaml", r.Action)
		}
	}
	// Refused with one step that keeps the initiative: archiving it (which ends it for good,
	// and only once it is completed) is the user's call, not the step the model is sent to.
	if _, err := e.open("s1").Initiative(engine.InitiativeRequest{Action: "create", Title: "Uploader v3"}); err == nil ||
		!strings.HasSuffix(err.Error(), " already exists; nothing was changed: go on with it; only a completed one can be archived to make room for another") {
		t.Errorf("create with another title: %v; want it refused, with the initiative kept", err)
	}
	// A completed one has nothing to go on with: the one step is the user's archive.
	for _, st := range []string{"in_progress", "completed"} {
		must(e.open("s1").Initiative(engine.InitiativeRequest{Action: "set_status", Status: st}))(t)
	}
	if _, err := e.open("s1").Initiative(engine.InitiativeRequest{Action: "create", Title: "Uploader v3"}); err == nil ||
		!strings.HasSuffix(err.Error(), " (completed) already exists; nothing was changed: ask the user whether it may be archived (set_status archived) to make room for another") {
		t.Errorf("create over a completed one: %v; want it refused, with the user's archive as the one step", err)
	}
}

func (e *env) readFile(rel string) string {
	b, _ := os.ReadFile(filepath.Join(e.project, rel))
	return string(b)
}

// The writes that were already idempotent stay so: each repeated as it was changes nothing,
// at the same revision.
func TestRepeatedWritesChangeNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "repeat everything"}))(t)
	for _, w := range []struct {
		what string
		f    func() (*engine.Result, error)
	}{
		{"set_vars", func() (*engine.Result, error) {
			return e.open("s1").SetVars(map[string]string{"PLAN_PATH": "plans/1.md", "WF_MODE": "fast"})
		}},
		{"unset", func() (*engine.Result, error) { return e.open("s1").UnsetVars([]string{"WF_NOPE"}) }},
		{"update_task add", func() (*engine.Result, error) {
			return e.open("s1").UpdateTask(engine.TaskRequest{ID: "t1", Status: "pending", Note: "write it"})
		}},
		{"update_task running", func() (*engine.Result, error) {
			return e.open("s1").UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"})
		}},
		{"update_task done", func() (*engine.Result, error) {
			return e.open("s1").UpdateTask(engine.TaskRequest{ID: "t1", Status: "done", Output: "out/t1.md"})
		}},
		{"transition", func() (*engine.Result, error) {
			return e.open("s1").Transition(engine.TransitionRequest{To: "plan", Note: "analysed"})
		}},
		{"save_checkpoint", func() (*engine.Result, error) {
			return e.open("s1").SaveCheckpoint("progress", []byte(`{"step":2}`))
		}},
	} {
		first, err := w.f()
		if err != nil {
			t.Fatalf("%s: %v", w.what, err)
		}
		if w.what == "unset" {
			first = nil // changed nothing the first time either
		}
		again(t, e, w.what, first, w.f)
	}
}

// cairn archive run again after it landed (the person was not sure the first took) finds no
// active workflow: "no active workflow; start one" reads as if the first had not counted. The
// same archive again, soon after, names the archive made; another reason, or the same long
// after, is still told there is nothing active.
func TestArchiveAgain(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"", "abandoned", "superseded by the retry rewrite"} {
		t.Run("reason "+reason, func(t *testing.T) {
			e := newEnv(t)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "archive twice"}))(t)
			first := must(e.open("cli").Archive(reason))(t)
			if !first.Changed {
				t.Fatalf("first: %+v", first)
			}
			topic := e.readMemory("cairn-workflow.md")
			res := again(t, e, "archive", nil, func() (*engine.Result, error) { return e.open("cli").Archive(reason) })
			dir := strings.TrimPrefix(first.Message, "archived workflow ")
			dir = dir[strings.Index(dir, " in ")+len(" in "):]
			if !strings.Contains(res.Message, "already archived") || !strings.Contains(res.Message, dir) {
				t.Errorf("message %q does not say which archive was already made (%s)", res.Message, dir)
			}
			if got := e.readMemory("cairn-workflow.md"); got != topic {
				t.Errorf("the repeat wrote L2 again:\n%s", got)
			}
			if _, err := e.open("cli").Archive("another reason"); !errors.Is(err, engine.ErrNoActiveWorkflow) {
				t.Errorf("another reason: %v; want no active workflow", err)
			}
			e.clock.Add(time.Hour)
			if _, err := e.open("cli").Archive(reason); !errors.Is(err, engine.ErrNoActiveWorkflow) {
				t.Errorf("an hour later: %v; want no active workflow", err)
			}
		})
	}
}

// cairn archive with a note, run again after a crash between its two writes (the note is in
// the journal, the workflow still active), archives it with the note once, not twice.
func TestArchiveNoteAgainAfterCrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	id := must(en.Start(engine.StartRequest{Type: "apex", Context: "archive after a crash"}))(t).WorkflowID
	const note = "superseded by the retry rewrite"
	st := must(store.Open(en.StateDir()))(t)
	// What Archive's first write leaves: the note, as an archive event of the unchanged record.
	if _, err := st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
		return r, store.Event{Kind: "archive", Detail: `{"actor":"test","note":"` + note + `"}`}, nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	e.clock.Add(time.Minute)
	res := must(e.open("cli").Archive(note))(t)
	if !res.Changed || !strings.HasPrefix(res.Message, "archived workflow") {
		t.Fatalf("archive after the crash: %+v", res)
	}
	n := 0
	for _, h := range must(e.open("cli").History(id))(t) {
		if h.Kind == "archive" && strings.Contains(string(h.Detail), note) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the note is in the history %d times, want once", n)
	}
}

// initiative create run again after a crash between its two writes (initiative.json written,
// WORKFLOW-STATUS.yaml not yet) writes the status file the first left unwritten; the
// initiative itself is the one created.
func TestInitiativeCreateAgainAfterCrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := engine.InitiativeRequest{Action: "create", Title: "Uploader v2"}
	first := must(e.open("s1").Initiative(r))(t)
	want := e.readFile(".claude/WORKFLOW-STATUS.yaml")
	if want == "" {
		t.Fatal("create wrote no WORKFLOW-STATUS.yaml")
	}
	if err := os.Remove(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")); err != nil {
		t.Fatal(err)
	}
	res := must(e.open("s1").Initiative(r))(t)
	if got := e.readFile(".claude/WORKFLOW-STATUS.yaml"); got != want {
		t.Errorf("WORKFLOW-STATUS.yaml after the retry:\n%s\nwant\n%s", got, want)
	}
	if !res.Changed || !strings.Contains(res.Message, "WORKFLOW-STATUS.yaml") {
		t.Errorf("the retry: changed %v, message %q; want it to say it wrote the status file", res.Changed, res.Message)
	}
	if string(res.Workflow) != string(first.Workflow) {
		t.Errorf("the retry changed the initiative:\n%s\nwant\n%s", res.Workflow, first.Workflow)
	}
}

// A completion retried after a crash between its two writes (the completion committed, the
// archive not made) finishes what the crash left: it archives the completed workflow and says
// so, and the next session is told of the ending once. Retried again, nothing changes.
func TestCompleteAgainAfterCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		complete func(def *workflow.Definition, r *workflow.Record, now time.Time) (workflow.Result, error)
		retry    func(en *engine.Engine) (*engine.Result, error)
	}{
		{"complete_workflow", func(_ *workflow.Definition, r *workflow.Record, now time.Time) (workflow.Result, error) {
			return workflow.Complete(r, "retries added", now, workflow.Actor{SessionID: "s1", PID: 4242})
		}, func(en *engine.Engine) (*engine.Result, error) { return en.Complete("retries added") }},
		{"move to the terminal phase", func(def *workflow.Definition, r *workflow.Record, now time.Time) (workflow.Result, error) {
			return workflow.Transition(def, r, workflow.TransitionRequest{From: "fix", To: "git-commit"}, now, workflow.Actor{SessionID: "s1", PID: 4242})
		}, func(en *engine.Engine) (*engine.Result, error) {
			return en.Transition(engine.TransitionRequest{From: "fix", To: "git-commit"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			id := must(en.Start(engine.StartRequest{Type: "debug", Context: "complete after a crash"}))(t).WorkflowID
			must(en.Transition(engine.TransitionRequest{To: "fix"}))(t)
			def, _ := workflow.BuiltinDefinition("debug")
			// What the completion's first write leaves: the completed record, still active.
			st := must(store.Open(en.StateDir()))(t)
			if _, err := st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
				res, err := tc.complete(def, r, e.clock.Now())
				return res.Record, store.Event{Kind: string(res.Event)}, err
			}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			e.clock.Add(time.Minute)
			res, err := tc.retry(e.open("s1"))
			if err != nil {
				t.Fatalf("retry after the crash: %v", err)
			}
			if !res.Changed || res.WorkflowID != id || !strings.Contains(res.Message, "already completed") || !strings.Contains(res.Message, "archived now") {
				t.Errorf("retry after the crash: %+v; want it to say the workflow was already completed and is archived now", res)
			}
			if snap := must(e.open("s1").Snapshot())(t); snap.WorkflowID != "" {
				t.Errorf("workflow %s still in the active slot after the retry", snap.WorkflowID)
			}
			list := must(e.open("s1").List())(t)
			if len(list) != 1 || list[0].WorkflowID != id || list[0].Status != "completed" || list[0].Archived == "" {
				t.Errorf("archives after the retry: %+v; want %s archived as completed", list, id)
			}
			if r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, "the last one ended") || r.WorkflowID != "" {
				t.Errorf("the next session's report does not tell of the ending:\n%s", r.Report)
			}
			again(t, e, tc.name, nil, func() (*engine.Result, error) { return tc.retry(e.open("s1")) })
		})
	}
}

// cairn checkpoint delete run again after it landed (the person, or a script retried, unsure
// the first took) says the checkpoint is already deleted, with nothing changed and no error:
// "not found; did you mean plan-2?" would steer toward deleting another one. A name never
// saved is still not found, and a checkpoint saved again after its delete is deleted again.
func TestDeleteCheckpointAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("cli")
	must(en.SaveCheckpoint("plan-1", []byte(`{"a":1}`)))(t)
	must(en.SaveCheckpoint("plan-2", []byte(`{"a":2}`)))(t)
	if first := must(en.DeleteCheckpoint("plan-1"))(t); !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	res := again(t, e, "checkpoint delete", nil, func() (*engine.Result, error) { return e.open("cli").DeleteCheckpoint("plan-1") })
	if !strings.Contains(res.Message, "checkpoint plan-1 was already deleted") {
		t.Errorf("message %q does not say the checkpoint was already deleted", res.Message)
	}
	if names := must(e.open("cli").ListCheckpoints(""))(t); strings.Join(names, ",") != "plan-2" {
		t.Errorf("checkpoints after the repeat: %v; want plan-2 alone", names)
	}
	if _, err := e.open("cli").DeleteCheckpoint("plan-3"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a checkpoint never saved: %v; want not found", err)
	}
	must(e.open("cli").SaveCheckpoint("plan-1", []byte(`{"a":3}`)))(t)
	if res := must(e.open("cli").DeleteCheckpoint("plan-1"))(t); !res.Changed {
		t.Errorf("saved again, then deleted: %+v; want it deleted", res)
	}
	if _, err := e.open("cli").LoadCheckpoint("plan-1"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("checkpoint plan-1 after its second delete: %v; want not found", err)
	}
}

// cairn archive, or an expiry, cut short between the archive and its ending (the L2 line and
// the record the next session is told from) left memory's last line calling the workflow
// active: the next session was told "last known position: Active ..." and that its state is
// missing. The archive retried finds it archived: it records the ending the crash left
// unrecorded and says so; retried again, nothing changes.
func TestArchiveAgainAfterCrashBeforeItsEnding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, status string
		first        func(st *store.Store, now time.Time) error // what the operation did before the crash
		retry        func(en *engine.Engine) (*engine.Result, error)
	}{
		{"archive", "abandoned", nil, func(en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }},
		{"archive-note", "archived", func(st *store.Store, _ time.Time) error {
			_, err := st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
				return r, store.Event{Kind: "archive", Detail: `{"actor":"test","note":"superseded by the retry rewrite"}`}, nil
			})
			return err
		}, func(en *engine.Engine) (*engine.Result, error) { return en.Archive("superseded by the retry rewrite") }},
		{"expire", "expired", func(st *store.Store, now time.Time) error {
			_, err := st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
				res, err := workflow.Expire(r, now)
				return res.Archive, store.Event{Kind: "archive", Detail: `{"actor":"test","note":"expired"}`}, err
			})
			return err
		}, func(en *engine.Engine) (*engine.Result, error) { return en.ExpireTTL(false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			id := must(en.Start(engine.StartRequest{Type: "apex", Context: "archive after a crash", TTL: "1h"}))(t).WorkflowID
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			if tc.status == "expired" {
				e.clock.Add(2 * time.Hour)
			}
			st := must(store.Open(en.StateDir(), store.WithClock(e.clock.Now)))(t)
			if tc.first != nil {
				if err := tc.first(st, e.clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
			must(st.ArchiveIf(tc.status, id))(t)
			st.Close()
			e.clock.Add(time.Minute)
			res, err := tc.retry(e.open("cli"))
			if err != nil {
				t.Fatalf("retry after the crash: %v", err)
			}
			if !res.Changed || !strings.Contains(res.Message, id) || !strings.Contains(res.Message, "its ending") {
				t.Errorf("retry after the crash: %+v; want it to say it recorded the ending of %s", res, id)
			}
			topic := e.readMemory("cairn-workflow.md")
			last := ""
			for l := range strings.Lines(topic) {
				if strings.HasPrefix(l, "20") {
					last = l
				}
			}
			if last == "" || strings.Contains(last, "Active") {
				t.Errorf("memory last line %q; want the workflow ending:\n%q", last, topic)
			}
			if r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, "the last one ended") || r.L2Line != "" {
				t.Errorf("the next session's report:\n%s\nwant it told that the workflow ended", r.Report)
			}
			res, err = tc.retry(e.open("cli"))
			if err != nil || res.Changed {
				t.Errorf("retried again: %+v, %v; want nothing changed", res, err)
			}
			if got := e.readMemory("cairn-workflow.md"); got != topic {
				t.Errorf("retried again, L2 was written again:\n%s", got)
			}
		})
	}
}

// cairn approve run again after the agent, given the yes, left the phase: the approval is
// the one already made, not a refusal ("waits for no approval", exit 1) that reads as if it
// had not counted. Another note, or the same long after, is still refused.
func TestApproveAgainAfterTheMove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "approve, move, approve"}))(t)
	must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t)
	if first := must(e.open("cli").Approve(""))(t); !first.Changed {
		t.Fatalf("first: %+v", first)
	}
	moved := must(e.open("s1").Transition(engine.TransitionRequest{To: "implement"}))(t)
	res := again(t, e, "approve after the move", moved, func() (*engine.Result, error) { return e.open("cli").Approve("") })
	if !strings.Contains(res.Message, "phase plan of workflow "+moved.WorkflowID+" is already approved") || !strings.Contains(res.Message, "implement") {
		t.Errorf("message %q does not say plan was approved and the workflow moved on to implement", res.Message)
	}
	if _, err := e.open("cli").Approve("another note"); err == nil || !strings.Contains(err.Error(), "waits for no approval") {
		t.Errorf("another note: %v; want a refusal", err)
	}
	e.clock.Add(time.Hour)
	if _, err := e.open("cli").Approve(""); err == nil || !strings.Contains(err.Error(), "waits for no approval") {
		t.Errorf("an hour later: %v; want a refusal", err)
	}
}

// expire_ttl retried after a crash between its two writes (the expiry committed, the archive
// not made) finishes what the crash left: it archives the expired workflow, writes its expiry
// line and says so, where it said "is expired, not active; nothing to expire" and left it in
// the active slot. A dry run changes nothing; retried again, nothing changes.
func TestExpireAgainAfterCrashBeforeItsArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	id := must(en.Start(engine.StartRequest{Type: "apex", Context: "expire after a crash", TTL: "1h"}))(t).WorkflowID
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	e.clock.Add(2 * time.Hour)
	st := must(store.Open(en.StateDir(), store.WithClock(e.clock.Now)))(t)
	if _, err := st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
		res, err := workflow.Expire(r, e.clock.Now())
		return res.Archive, store.Event{Kind: "archive", Detail: `{"actor":"test","note":"expired"}`}, err
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	e.clock.Add(time.Minute)
	if res := must(e.open("cli").ExpireTTL(true))(t); res.Changed {
		t.Errorf("dry run: %+v; want nothing changed", res)
	}
	res := must(e.open("cli").ExpireTTL(false))(t)
	if !res.Changed || !strings.Contains(res.Message, id) || !strings.Contains(res.Message, "archived now") {
		t.Errorf("retry after the crash: %+v; want it to say it archived %s now", res, id)
	}
	if snap := must(e.open("cli").Snapshot())(t); snap.WorkflowID != "" {
		t.Errorf("workflow %s still in the active slot after the retry", snap.WorkflowID)
	}
	list := must(e.open("cli").List())(t)
	if len(list) != 1 || list[0].WorkflowID != id || list[0].Status != "expired" || list[0].Archived == "" {
		t.Errorf("archives after the retry: %+v; want %s archived as expired", list, id)
	}
	if r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, "the last one ended") || !strings.Contains(r.Report, "Expired") {
		t.Errorf("the next session's report does not tell of the expiry:\n%s", r.Report)
	}
	if res := must(e.open("cli").ExpireTTL(false))(t); res.Changed {
		t.Errorf("retried again: %q (workflow %s, changed %v); want nothing changed", res.Message, res.WorkflowID, res.Changed)
	}
}

// start_workflow with replace retried after a crash cut the first call short: between
// archiving the old workflow and starting the new one, or between starting the new one and
// writing the old one's "Abandoned" line. The retry finishes what the crash left: the new
// workflow is the one the archived record says replaced it, and memory calls the old one
// abandoned, not active.
func TestStartReplaceAgainAfterCrash(t *testing.T) {
	t.Parallel()
	const newID = "apex-20261122T100300Z-beef"
	for stage, name := range []string{"before the archive", "before the start", "before the abandon line"} {
		archived, started := stage >= 1, stage >= 2
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			old := must(en.Start(engine.StartRequest{Type: "apex", Context: "the old work"}))(t).WorkflowID
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			def, _ := en.Definition("apex")
			e.clock.Add(time.Minute)
			// What the first call did before the crash, as Start does it.
			st := must(store.Open(en.StateDir(), store.WithClock(e.clock.Now)))(t)
			req := workflow.StartRequest{Type: "apex", Context: "the new work", ID: newID, Replace: true}
			must(st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
				res, err := workflow.Start(def, r, req, e.clock.Now(), workflow.Actor{SessionID: "s1"})
				return res.Archive, store.Event{Kind: "archive", Detail: `{"actor":"test"}`}, err
			}))(t)
			if archived {
				must(st.ArchiveIf("replaced", old))(t)
			}
			if started {
				must(st.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
					res, err := workflow.Start(def, nil, req, e.clock.Now(), workflow.Actor{SessionID: "s1"})
					return res.Record, store.Event{Kind: "start", Detail: `{"actor":"test"}`}, err
				}))(t)
			}
			st.Close()
			e.clock.Add(time.Minute)
			res, err := e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "the new work", Replace: true})
			if err != nil {
				t.Fatalf("retry after the crash: %v", err)
			}
			if res.WorkflowID != newID {
				t.Errorf("retry after the crash: %q (workflow %s); want workflow %s, the one the archive says replaced %s", res.Message, res.WorkflowID, newID, old)
			}
			if m := e.readMemory("MEMORY.md"); !strings.Contains(m, "Abandoned APEX workflow at plan") || strings.Contains(m, "Active APEX") {
				t.Errorf("MEMORY.md after the retry: %q; want the old workflow abandoned", m)
			}
			for _, w := range must(e.open("s1").List())(t) {
				if w.WorkflowID == old && w.Status != "replaced" {
					t.Errorf("the old workflow is listed %s; want replaced", w.Status)
				}
			}
			topic := e.readMemory("cairn-workflow.md")
			res = must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "the new work", Replace: true}))(t)
			if res.Changed || res.WorkflowID != newID {
				t.Errorf("retried again: %q (workflow %s, changed %v); want nothing changed", res.Message, res.WorkflowID, res.Changed)
			}
			if got := e.readMemory("cairn-workflow.md"); got != topic {
				t.Errorf("retried again, L2 was written again:\n%s", got)
			}
		})
	}
}
