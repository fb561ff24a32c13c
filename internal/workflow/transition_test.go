package workflow_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// The built-ins' transition tables, as the seeds describe them. The test checks the embedded
// definitions match this, and then that Transition honours every entry.
var wantTables = map[string]struct {
	phases   []string
	moves    map[string][]string
	terminal []string
	gates    []string
}{
	"apex": {
		phases:   []string{"analyze", "plan", "implement", "review", "git-commit"},
		moves:    map[string][]string{"analyze": {"plan"}, "plan": {"implement", "analyze"}, "implement": {"review"}, "review": {"implement", "git-commit"}},
		terminal: []string{"git-commit"},
		gates:    []string{"plan"},
	},
	"debug": {
		phases:   []string{"troubleshoot", "fix", "implement", "review", "git-commit"},
		moves:    map[string][]string{"troubleshoot": {"fix", "implement"}, "fix": {"review", "git-commit", "troubleshoot"}, "implement": {"review", "troubleshoot"}, "review": {"fix", "implement", "git-commit"}},
		terminal: []string{"git-commit"},
	},
	"brainstorm": {
		phases:   []string{"explore", "brainstorm", "design", "document"},
		moves:    map[string][]string{"explore": {"brainstorm", "design"}, "brainstorm": {"design", "explore"}, "design": {"document", "brainstorm"}},
		terminal: []string{"document"},
	},
	"dotagent": {
		phases:   []string{"requirements", "architecture", "implementation", "verification", "reflection"},
		moves:    map[string][]string{"requirements": {"architecture"}, "architecture": {"implementation", "requirements"}, "implementation": {"verification", "architecture"}, "verification": {"reflection", "implementation"}},
		terminal: []string{"reflection"},
		gates:    []string{"requirements", "architecture"},
	},
	"coordinate": {
		phases:   []string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"},
		moves:    map[string][]string{"initialize": {"research"}, "research": {"plan"}, "plan": {"implement", "research"}, "implement": {"test"}, "test": {"debug", "document"}, "debug": {"test"}, "document": {"complete"}},
		terminal: []string{"complete"},
	},
}

func TestBuiltinsMatchTheSeeds(t *testing.T) {
	defs := mustDefs(t)
	if got := defs.Names(); !slices.Equal(got, []string{"apex", "brainstorm", "coordinate", "debug", "dotagent"}) {
		t.Fatalf("built-ins = %v", got)
	}
	for name, want := range wantTables {
		d := mustDef(t, name)
		if !slices.Equal(d.Phases, want.phases) || !slices.Equal(d.Terminal, want.terminal) || !slices.Equal(d.Approvals, want.gates) {
			t.Errorf("%s: phases %v terminal %v gates %v", name, d.Phases, d.Terminal, d.Approvals)
		}
		for _, p := range d.Phases {
			if !slices.Equal(d.Allowed(p), want.moves[p]) {
				t.Errorf("%s: moves from %s = %v, want %v", name, p, d.Allowed(p), want.moves[p])
			}
		}
		if ttl, _ := workflow.ParseTTL(d.TTL); d.Start() != want.phases[0] || !d.Blocking || ttl != 24*time.Hour || d.Body == "" {
			t.Errorf("%s: start %s blocking %v ttl %v body %d bytes", name, d.Start(), d.Blocking, d.TTL, len(d.Body))
		}
		if !strings.HasPrefix(d.Source, "builtin:") {
			t.Errorf("%s: source %q", name, d.Source)
		}
	}
}

// at returns a copy of r placed in phase p, as if it had got there.
func at(r *workflow.Record, p string) *workflow.Record {
	c := r.Clone()
	c.State = p
	return c
}

func TestTransitionTables(t *testing.T) {
	for name, want := range wantTables {
		def := mustDef(t, name)
		base := mustStart(t, def)
		for _, from := range want.phases {
			if slices.Contains(want.terminal, from) {
				continue // a workflow in a terminal phase is completed; see TestTerminalCompletes
			}
			for _, to := range want.phases {
				allowed := slices.Contains(want.moves[from], to)
				t.Run(fmt.Sprintf("%s/%s->%s", name, from, to), func(t *testing.T) {
					r := at(base, from)
					res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: to}, t0.Add(time.Hour), alice)
					switch {
					case from == to:
						if err != nil || res.Changed || res.Event != workflow.EventNone {
							t.Fatalf("same-phase move: changed=%v err=%v, want idempotent success", res.Changed, err)
						}
					case allowed:
						if err != nil {
							t.Fatalf("allowed move refused: %v", err)
						}
						n := res.Record
						if !res.Changed || n.State != to || !n.Phases[from].Completed || n.Phases[to].Completed != slices.Contains(want.terminal, to) {
							t.Fatalf("after move: state %s phases %+v", n.State, n.Phases)
						}
						h := n.History[len(n.History)-1]
						if h.From != from || h.To != to || !h.At.Equal(t0.Add(time.Hour)) || h.SessionID != alice.SessionID {
							t.Fatalf("history entry %+v", h)
						}
						if got := slices.Contains(want.terminal, to); got != res.Completed || got != (n.Status == workflow.StatusCompleted) {
							t.Fatalf("terminal=%v but completed=%v status=%s", got, res.Completed, n.Status)
						}
						if r.State != from || len(r.History) != 0 {
							t.Fatal("Transition modified its input")
						}
					default:
						var te *workflow.TransitionError
						if !errors.As(err, &te) {
							t.Fatalf("refused move: err = %v, want *TransitionError", err)
						}
						if te.From != from || !slices.Equal(te.Allowed, want.moves[from]) {
							t.Fatalf("error fields %+v", te)
						}
						for _, a := range want.moves[from] {
							if !strings.Contains(err.Error(), a) {
								t.Fatalf("message %q does not name allowed target %s", err, a)
							}
						}
					}
				})
			}
		}
	}
}

func TestTransitionUnknownPhaseNamesAllowed(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def)
	_, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "deploy"}, t0, alice)
	want := "apex workflow cannot move from analyze to deploy (no such phase): next phases: plan"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	// Uppercase seed names are accepted.
	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "PLAN", From: "ANALYZE"}, t0, alice)
	if err != nil || res.Record.State != "plan" {
		t.Fatalf("uppercase move: %v", err)
	}
}

// TestTransitionRefusalNamesTheTarget: a refused move names the phase typed when it has a
// phase name's shape, and says so when the definition has no such phase; anything else (a
// secret, a control character, a pasted paragraph) is not repeated.
func TestTransitionRefusalNamesTheTarget(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def)
	token := "ghp_" + strings.Repeat("ab3de6gh9j", 4)[:36]
	for _, c := range []struct{ to, want string }{
		{"review", "cannot move from analyze to review: next phases: plan"},
		{"Deploy", "cannot move from analyze to deploy (no such phase): next phases: plan"},
		{token, "cannot move from analyze to the phase asked for (no such phase): next phases: plan"},
		{"dep\x1bloy", "cannot move from analyze to the phase asked for (no such phase): next phases: plan"},
		{strings.Repeat("x", 65), "cannot move from analyze to the phase asked for (no such phase): next phases: plan"},
	} {
		_, err := workflow.Transition(def, r, workflow.TransitionRequest{To: c.to}, t0, alice)
		if want := "apex workflow " + c.want; err == nil || err.Error() != want {
			t.Errorf("to %q: err = %v, want %q", c.to, err, want)
		}
	}
}

func TestCompareAndSwap(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan")
	bob := workflow.Actor{SessionID: "sess-bob", PID: 202}

	// Bob moves plan->implement expecting plan: fine.
	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "implement", From: "plan"}, t0.Add(time.Hour), bob)
	if err != nil {
		t.Fatal(err)
	}
	moved := res.Record
	// Alice, still believing it is in plan, tries the same move on the new record.
	_, err = workflow.Transition(def, moved, workflow.TransitionRequest{To: "implement", From: "plan"}, t0.Add(2*time.Hour), alice)
	var ce *workflow.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *ConflictError", err)
	}
	if ce.ExpectedPhase != "plan" || ce.FoundPhase != "implement" || ce.ChangedBy != "sess-bob" || !ce.ChangedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("conflict %+v", ce)
	}
	for _, s := range []string{"expected phase plan, found implement", "session sess-bob", "2026-11-22T18:30:00Z", "nothing was changed"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
	// Bob himself, expecting plan for another move (after a compaction, say): the change was
	// his own. "last changed by session sess-bob" sent the model looking for another session.
	_, err = workflow.Transition(def, moved, workflow.TransitionRequest{To: "review", From: "plan"}, t0.Add(2*time.Hour), bob)
	if !errors.As(err, &ce) || ce.ChangedBy != "sess-bob" || !strings.Contains(err.Error(), "found implement, last changed by this session at 2026-11-22T18:30:00Z;") {
		t.Errorf("own move: %v, want it said as this session's", err)
	}
}

func TestApprovalGate(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan")
	if len(r.Approvals) != 1 || r.Approvals[0].Phase != "plan" || !r.Approvals[0].RequestedAt.Equal(t0.Add(time.Minute)) || !r.Approvals[0].Open() {
		t.Fatalf("entering the gate: %+v", r.Approvals)
	}
	// Back to analyze: not an approval.
	back := walk(t, def, r, "analyze")
	if !back.Approvals[0].Open() {
		t.Fatal("a back-edge out of the gate was recorded as an approval")
	}
	// Forward again: the open request is asked again, as of this entry (not another added),
	// then approved on leaving to implement.
	fwd := walk(t, def, back, "plan", "implement")
	if len(fwd.Approvals) != 1 || !fwd.Approvals[0].RequestedAt.Equal(t0.Add(3*time.Minute)) || !fwd.Approvals[0].ApprovedAt.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("approvals %+v", fwd.Approvals)
	}
}

func TestTransitionCheckpointOutputsAndL2(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan")
	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "implement", Checkpoint: "after-plan",
		Outputs: []string{"plans/001.md"}, Note: "plan\napproved"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Record
	h := n.History[len(n.History)-1]
	if h.Checkpoint != "after-plan" || h.Note != "plan approved" {
		t.Fatalf("history %+v", h)
	}
	if !slices.Equal(n.Phases["plan"].Outputs, []string{"plans/001.md"}) || !slices.Equal(n.Artifacts, []string{"plans/001.md"}) {
		t.Fatalf("outputs %+v artifacts %v", n.Phases["plan"], n.Artifacts)
	}
	if res.L2 != "Active APEX workflow: plan completed, implementing “add login”" {
		t.Fatalf("L2=%q", res.L2)
	}
}

func TestTerminalCompletes(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "git-commit", Outcome: "merged as abc123"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Record
	if n.Status != workflow.StatusCompleted || !n.CompletedAt.Equal(t0.Add(time.Hour)) || n.Outcome != "merged as abc123" ||
		n.PhaseStatus != workflow.PhaseComplete || !n.Phases["git-commit"].Completed || !res.Completed {
		t.Fatalf("completed record %+v", n)
	}
	if res.L2 != "Completed APEX for “add login”: “merged as abc123”" {
		t.Fatalf("L2 %q", res.L2)
	}
	if got := n.CompletedPhases(def); !slices.Equal(got, []string{"analyze", "plan", "implement", "review", "git-commit"}) {
		t.Fatalf("completed phases %v", got)
	}
	// Nothing more can happen to a completed workflow.
	_, err = workflow.Transition(def, n, workflow.TransitionRequest{To: "review"}, t0.Add(2*time.Hour), alice)
	var ne *workflow.NotActiveError
	if !errors.As(err, &ne) || ne.Status != workflow.StatusCompleted {
		t.Fatalf("move after completion: %v", err)
	}
	// Default outcome.
	res, _ = workflow.Transition(def, r, workflow.TransitionRequest{To: "git-commit"}, t0.Add(time.Hour), alice)
	if res.Record.Outcome != "reached git-commit" {
		t.Fatalf("default outcome %q", res.Record.Outcome)
	}
	// Cairn's own words, not quoted as if a tool had supplied them.
	if res.L2 != "Completed APEX for “add login”: reached git-commit" {
		t.Fatalf("L2 of the default outcome %q", res.L2)
	}
}

func TestCompleteExplicitly(t *testing.T) {
	def := mustDef(t, "debug")
	r := walk(t, def, mustStart(t, def), "fix")
	res, err := workflow.Complete(r, "fixed in place", t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Status != workflow.StatusCompleted || res.L2 != "Completed DEBUG for “add login”: “fixed in place”" || !res.Record.Phases["fix"].Completed {
		t.Fatalf("%+v", res)
	}
	if _, err := workflow.Complete(res.Record, "again", t0, alice); err == nil {
		t.Fatal("completed twice")
	}
	if _, err := workflow.Complete(nil, "x", t0, alice); !errors.Is(err, workflow.ErrNoWorkflow) {
		t.Fatalf("nil record: %v", err)
	}
}

// ErrNoWorkflow is the fact only: the step from there depends on its reader (resume_check for
// the model, a cairn command for a person), which the engine and the CLI add. A step of its
// own ("start one first") would be a second one, and a wrong one where work is on record.
func TestErrNoWorkflowNamesNoStep(t *testing.T) {
	if got := workflow.ErrNoWorkflow.Error(); got != "no active workflow" {
		t.Errorf("ErrNoWorkflow says %q, want the fact alone", got)
	}
}

func TestBackEdgeReopensPhase(t *testing.T) {
	def := mustDef(t, "coordinate")
	r := walk(t, def, mustStart(t, def), "research", "plan", "implement", "test", "debug", "test")
	if r.Phases["test"].Completed || !r.Phases["debug"].Completed {
		t.Fatalf("phases %+v", r.Phases)
	}
	if got := r.CompletedPhases(def); !slices.Equal(got, []string{"initialize", "research", "plan", "implement", "debug"}) {
		t.Fatalf("completed %v", got)
	}
}

func TestMajorTransitions(t *testing.T) {
	def := mustDef(t, "apex")
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"analyze", "plan", true}, {"plan", "implement", true}, {"implement", "review", true},
		{"review", "implement", true}, {"review", "git-commit", false}, {"plan", "plan", false},
	} {
		if got := def.IsMajor(tc.from, tc.to); got != tc.want {
			t.Errorf("%s->%s major = %v", tc.from, tc.to, got)
		}
	}
	custom, err := yamldoc.Codec{}.ParseDefinition("m.md", []byte("---\nphases: [a, b, c, d]\nmajor: [b->c]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if custom.IsMajor("a", "b") || !custom.IsMajor("b", "c") {
		t.Fatal("major list not honoured")
	}
}

func TestLineBuilders(t *testing.T) {
	def, err := yamldoc.Codec{}.ParseDefinition("plain.md", []byte("---\nname: plain\nphases: [draft, edit, done]\nverbs: {edit: editing}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &workflow.Record{Type: "plain", Context: "the memo", State: "edit", Outcome: "sent"}
	if got := workflow.PositionLine(def, r, "draft"); got != "Active PLAIN workflow: draft completed, editing “the memo”" {
		t.Fatal(got)
	}
	// A verb of hundreds of characters took memory's line past the 300 it keeps, which lost
	// the context: the verb is cut to 64, and the line ends with the context.
	long := strings.Repeat("reviewing ", 40)
	def.Verbs["edit"] = long
	if got := workflow.PositionLine(def, r, "draft"); !strings.HasSuffix(got, "… “the memo”") || utf8.RuneCountInString(got) > 150 {
		t.Fatalf("a verb of %d characters: %q", len(long), got)
	}
	r.State = "done"
	if got := workflow.PositionLine(def, r, "edit"); got != "Active PLAIN workflow: edit completed, done “the memo”" {
		t.Fatalf("verb fallback to the phase name: %q", got)
	}
	if got := workflow.PositionLine(nil, r, "edit"); got != "Active PLAIN workflow: edit completed, done “the memo”" {
		t.Fatal(got)
	}
	if got := workflow.CompletionLine(r); got != "Completed PLAIN for “the memo”: “sent”" {
		t.Fatal(got)
	}
	// A context and an outcome that join into a secret: the outcome is withheld, the rest
	// still says what completed.
	joined := &workflow.Record{Type: "plain", Context: "DB password", Outcome: "Tr0ub4dor&3x"}
	if got := workflow.CompletionLine(joined); got != "Completed PLAIN for “DB password”: "+secrets.NotShown || !workflow.IsEndingLine(got) {
		t.Fatalf("joined into a secret: %q", got)
	}
	if got := workflow.ExpiryLine(r); got != "Expired PLAIN workflow at done for “the memo”, archived" {
		t.Fatal(got)
	}
	if got := workflow.AbandonLine(r); got != "Abandoned PLAIN workflow at done for “the memo”, archived" {
		t.Fatal(got)
	}
	for l, want := range map[string]bool{workflow.CompletionLine(r): true, workflow.ExpiryLine(r): true,
		workflow.AbandonLine(r): true, workflow.PositionLine(def, r, "edit"): false, "": false} {
		if workflow.IsEndingLine(l) != want {
			t.Errorf("IsEndingLine(%q) = %v", l, !want)
		}
	}
}

func TestCompareAndSwapAgainstCompletion(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	bob := workflow.Actor{SessionID: "sess-bob", PID: 202}
	won, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "git-commit", From: "review"}, t0.Add(time.Hour), bob)
	if err != nil {
		t.Fatal(err)
	}
	_, err = workflow.Transition(def, won.Record, workflow.TransitionRequest{To: "git-commit", From: "review"}, t0.Add(time.Hour), alice)
	var ce *workflow.ConflictError
	if !errors.As(err, &ce) || ce.FoundStatus != workflow.StatusCompleted || !strings.Contains(err.Error(), "found git-commit and the workflow is completed") {
		t.Fatalf("err = %v, want a conflict naming the completion", err)
	}
	if _, err := workflow.Transition(def, nil, workflow.TransitionRequest{To: "plan"}, t0, alice); !errors.Is(err, workflow.ErrNoWorkflow) {
		t.Fatal(err)
	}
}

// A move out of a phase with open tasks is made as before, and its result names them: the
// agent learns the phase was left with work still pending or running there. Tasks of other
// phases and finished ones are not named; many are named up to a few and counted.
func TestTransitionNamesOpenTasksLeftBehind(t *testing.T) {
	def := mustDef(t, "debug")
	r := mustStart(t, def)
	at := t0
	task := tasker(t, &r, &at)
	task("t1", workflow.TaskRunning)
	task("t2", workflow.TaskPending)
	task("t3", workflow.TaskRunning)
	task("t3", workflow.TaskDone)
	// An id an older Cairn stored with an escape in it (new ones are refused): its escape written
	// as its code, Markdown escaped for the line.
	r.Tasks = append(r.Tasks, workflow.Task{ID: "odd\x1b[31m[x](y)", Phase: r.State, Status: workflow.TaskPending, UpdatedAt: at})

	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "fix"}, at.Add(time.Minute), alice)
	if err != nil {
		t.Fatalf("the move was refused: %v", err)
	}
	want := `phase troubleshoot was left with 3 open tasks: t1 (running), t2 (pending), "odd\\u001b\[31m\[x\](y)" (pending); they stay open: mark each done or failed with update_task once its work is settled (a pending task is set running first)`
	if !slices.Contains(res.Warnings, want) {
		t.Fatalf("warnings = %q\nwant %q", res.Warnings, want)
	}

	// In fix, with no task of its own: the move on names none of troubleshoot's again.
	res, err = workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "review"}, at.Add(2*time.Minute), alice)
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("moving out of a phase without open tasks: warnings %q, err %v", res.Warnings, err)
	}

	// A move that completes the workflow names them too, troubleshoot's still open with them,
	// and does not send the agent to update them.
	r = res.Record
	task("r1", workflow.TaskRunning)
	res, err = workflow.Transition(def, r, workflow.TransitionRequest{To: "git-commit"}, at.Add(3*time.Minute), alice)
	if want := `the workflow was completed with 4 open tasks: t1 (running, phase troubleshoot), t2 (pending, phase troubleshoot), "odd\\u001b\[31m\[x\](y)" (pending, phase troubleshoot), r1 (running); they are kept as they are`; err != nil || !res.Completed || !slices.Equal(res.Warnings, []string{want}) {
		t.Fatalf("completing move: warnings %q, err %v", res.Warnings, err)
	}

	// Many: a few named, the rest counted.
	r = mustStart(t, def)
	for i := range 12 {
		task(fmt.Sprintf("m%d", i), workflow.TaskPending)
	}
	res, err = workflow.Transition(def, r, workflow.TransitionRequest{To: "fix"}, at.Add(time.Minute), alice)
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "12 open tasks: m0 (pending), m1 (pending), m2 (pending), m3 (pending), m4 (pending) and 7 more;") {
		t.Fatalf("warnings %q, err %v", res.Warnings, err)
	}
}

// Completing the workflow where it stands names the current phase's open tasks as a
// completing move does: they are kept as they are.
func TestCompleteNamesOpenTasks(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex"))
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: "t1", Status: workflow.TaskRunning}, t0, alice)
	if err != nil {
		t.Fatal(err)
	}
	res, err = workflow.Complete(res.Record, "stopped", t0.Add(time.Minute), alice)
	want := "phase analyze was left with 1 open task: t1 (running); the workflow is complete, so it is kept as it is"
	if err != nil || !slices.Equal(res.Warnings, []string{want}) {
		t.Fatalf("warnings %q, err %v", res.Warnings, err)
	}
}

// A move back leaves the phase it went back before to be done again: the L2 line says the work
// went back from it, not that it was completed (as resume's completed list already does).
func TestBackEdgePositionLine(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "implement"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.L2 != "Active APEX workflow: back from review, implementing “add login”" {
		t.Fatalf("L2=%q", res.L2)
	}
	res, err = workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "review"}, t0.Add(2*time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.L2 != "Active APEX workflow: implement completed, reviewing “add login”" {
		t.Fatalf("L2 after moving on again = %q", res.L2)
	}
}

// A definition edited so that the phase the workflow waits in is no longer an approval gate:
// the move out needs no yes (NeedsApproval), so nothing may say the workflow still awaits one
// (the plan sent the agent to ask the user for a yes no move needed). Without a definition
// the open request on record still counts.
func TestGateRemovedFromTheDefinitionAwaitsNothing(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan")
	if p, ok := workflow.Awaiting(def, r); !ok || p != "plan" {
		t.Fatalf("in the gate: awaiting %q %t", p, ok)
	}
	ungated := *def
	ungated.Approvals = nil
	if _, need := workflow.NeedsApproval(&ungated, r, "implement"); need {
		t.Fatal("the move out of a phase that is no longer a gate needs an approval")
	}
	if p, ok := workflow.Awaiting(&ungated, r); ok {
		t.Errorf("the phase is no longer a gate, yet the workflow awaits an approval of %q", p)
	}
	if _, err := workflow.Approve(&ungated, r, workflow.ApprovalCLI, "", t0.Add(time.Hour), alice); err == nil {
		t.Error("cairn approve took an approval no move needs")
	}
	if p, ok := workflow.Awaiting(nil, r); !ok || p != "plan" {
		t.Errorf("without a definition: awaiting %q %t, want the open request on record", p, ok)
	}
}

// The session that made a compare-and-swap move retries it (a timeout, a compaction): the
// move is already made, and the retry changes nothing, owner and history included.
func TestCompareAndSwapRetriedByItsSession(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan")
	bob := workflow.Actor{SessionID: "sess-bob", PID: 202}
	req := workflow.TransitionRequest{To: "implement", From: "plan"}
	res, err := workflow.Transition(def, r, req, t0.Add(time.Hour), bob)
	if err != nil {
		t.Fatal(err)
	}
	again, err := workflow.Transition(def, res.Record, req, t0.Add(2*time.Hour), workflow.Actor{SessionID: "sess-bob", PID: 303})
	if err != nil || again.Changed || again.To != "implement" || len(again.Record.History) != len(res.Record.History) {
		t.Fatalf("retried: err %v, %+v", err, again)
	}
	if _, err := workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "review", From: "plan"}, t0.Add(2*time.Hour), bob); !errors.As(err, new(*workflow.ConflictError)) {
		t.Fatalf("another move expecting plan: %v, want *ConflictError", err)
	}
}

// A move out of an approval gate to a phase from which the workflow can complete without
// passing through the gate again is never a step back, wherever that phase stands in the
// phases' order. Listed before the gate (a terminal phase, or one that leads to it), it was
// taken for a back-edge, which needs no yes, so the gate let the workflow complete without one.
func TestLeavingAGateOnAWayThatSkipsItNeedsApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		phases []string
		moves  map[string][]string
		out    string // the move out of review that needs the yes
	}{
		{"terminal listed first", []string{"draft", "done", "review"},
			map[string][]string{"draft": {"review"}, "review": {"draft", "done"}}, "done"},
		{"its way to the end listed first", []string{"draft", "ship", "review", "done"},
			map[string][]string{"draft": {"review"}, "review": {"draft", "ship"}, "ship": {"done"}}, "ship"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, err := workflow.BuildDefinition("release.md", workflow.Definition{Name: "release", Phases: tc.phases,
				Transitions: tc.moves, Terminal: []string{"done"}, Approvals: []string{"review"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := walk(t, def, mustStart(t, def), "review")
			if p, need := workflow.NeedsApproval(def, r, tc.out); !need || p != "review" {
				t.Errorf("review -> %s, on the way to the end: needs approval of %q %t, want review", tc.out, p, need)
			}
			if _, need := workflow.NeedsApproval(def, r, "draft"); need {
				t.Error("review -> draft, a step back, needs an approval")
			}
			yes := &workflow.Approval{Source: workflow.ApprovalCLI}
			res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: tc.out, Approval: yes}, t0.Add(time.Hour), alice)
			if err != nil {
				t.Fatalf("review -> %s with the yes: %v", tc.out, err)
			}
			if a := res.Record.Approvals; len(a) != 1 || a[0].Phase != "review" || a[0].ApprovedAt.IsZero() || a[0].Source != workflow.ApprovalCLI {
				t.Errorf("the yes to leaving review is not on record: %+v", a)
			}
		})
	}
}

// A context is scanned whole when it is stored; the lines quote it cut to 120 characters, and
// a token glued to more text ("ghp_…-x", no secret) cut right after its body is one. No line
// holds what the cut made: the quote ends before that token, and keeps what comes before it.
func TestLinesCutNoSecretOutOfAContext(t *testing.T) {
	def := mustDef(t, "apex")
	tok := secrettest.GluedToken(t)
	cut := 0
	for pad := 60; pad < 100; pad++ {
		ctx := "fix " + strings.Repeat("w", pad) + " " + tok + " tail"
		if secrets.ScanString(ctx) != nil {
			t.Fatalf("pad %d: the context is a secret whole", pad)
		}
		r := &workflow.Record{Type: "apex", Context: ctx, State: "plan", Outcome: "done"}
		for _, l := range []string{workflow.PositionLine(def, r, "analyze"), workflow.CompletionLine(r), workflow.ExpiryLine(r), workflow.AbandonLine(r)} {
			if secrets.ScanString(l) != nil {
				t.Errorf("pad %d: %q holds a secret", pad, l)
			}
			if !strings.Contains(l, "“fix "+strings.Repeat("w", pad)) {
				t.Errorf("pad %d: %q lost the context before the token", pad, l)
			}
			if !strings.Contains(l, "ghp_") {
				cut++
			}
		}
	}
	if cut == 0 {
		t.Error("no cut made a secret: the test tests nothing")
	}
}

// A move names the open tasks it leaves behind, each id cut to 64 characters; an id with no
// secret's shape (a key glued to more text, "sk_live_...-x") cut right after the key's body
// is one, and the warning holds no such cut.
func TestOpenTasksLeftBehindCutMakesNoSecret(t *testing.T) {
	def := mustDef(t, "debug")
	r := mustStart(t, def)
	res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: secrettest.GluedKey(t, 64), Status: workflow.TaskPending}, t0.Add(time.Second), alice)
	if err != nil {
		t.Fatal(err)
	}
	res, err = workflow.Transition(def, res.Record, workflow.TransitionRequest{To: "fix"}, t0.Add(time.Minute), alice)
	if err != nil || len(res.Warnings) != 1 || secrets.ScanString(res.Warnings[0]) != nil {
		t.Fatalf("warnings %q, err %v", res.Warnings, err)
	}
}

// The step a move out of a phase gives for the open tasks it left there works for each of
// them: a pending task cannot go straight to done or failed, so when one is left the step
// says to set it running first, and with that said, running then done settles it.
func TestLeftOpenTasksStepWorks(t *testing.T) {
	def := mustDef(t, "debug")
	for _, tc := range []struct {
		name     string
		statuses []workflow.TaskStatus
		want     string
	}{
		{"one running", []workflow.TaskStatus{workflow.TaskRunning},
			"; it stays open: mark it done or failed with update_task once its work is settled"},
		{"one pending", []workflow.TaskStatus{workflow.TaskPending},
			"; it stays open: mark it done or failed with update_task once its work is settled (a pending task is set running first)"},
		{"running and pending", []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskPending},
			"; they stay open: mark each done or failed with update_task once its work is settled (a pending task is set running first)"},
		{"two running", []workflow.TaskStatus{workflow.TaskRunning, workflow.TaskRunning},
			"; they stay open: mark each done or failed with update_task once its work is settled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustStart(t, def)
			at := t0
			for i, s := range tc.statuses {
				at = at.Add(time.Second)
				res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: fmt.Sprintf("t%d", i), Status: s}, at, alice)
				if err != nil {
					t.Fatal(err)
				}
				r = res.Record
			}
			res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "fix"}, at.Add(time.Minute), alice)
			if err != nil || len(res.Warnings) != 1 || !strings.HasSuffix(res.Warnings[0], tc.want) {
				t.Fatalf("warnings %q, err %v; want one ending %q", res.Warnings, err, tc.want)
			}
			r = res.Record
			runningFirst := strings.Contains(res.Warnings[0], "set running first")
			for i, s := range tc.statuses {
				id := fmt.Sprintf("t%d", i)
				at = at.Add(time.Second)
				done, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskDone}, at, alice)
				if err != nil && runningFirst && s == workflow.TaskPending {
					if done, err = workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskRunning}, at, alice); err == nil {
						done, err = workflow.UpdateTask(done.Record, workflow.TaskUpdate{ID: id, Status: workflow.TaskDone}, at, alice)
					}
				}
				if err != nil {
					t.Fatalf("following the step for task %s (%s): %v", id, s, err)
				}
				r = done.Record
			}
		})
	}
}

// Completing the workflow, by complete_workflow or a move into a terminal phase, named only the
// open tasks of the phase it ended in: those an earlier phase left open were kept open for
// good, unsaid, as the last chance to settle them passed. Every open task is now named, with
// its phase when it is another's.
func TestCompletionNamesOpenTasksOfEveryPhase(t *testing.T) {
	def := mustDef(t, "apex")
	for _, tc := range []struct {
		name string
		end  func(r *workflow.Record) (workflow.Result, error)
	}{
		{"complete_workflow", func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Complete(r, "stopped", t0.Add(time.Hour), alice)
		}},
		{"a move into the terminal phase", func(r *workflow.Record) (workflow.Result, error) {
			return workflow.Transition(def, r, workflow.TransitionRequest{To: "git-commit"}, t0.Add(time.Hour), alice)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustStart(t, def)
			at := t0
			task := tasker(t, &r, &at)
			task("a1", workflow.TaskRunning)
			task("a2", workflow.TaskPending)
			task("a3", workflow.TaskRunning)
			task("a3", workflow.TaskDone)
			r = walk(t, def, r, "plan", "implement", "review")
			task("r1", workflow.TaskRunning)
			res, err := tc.end(r)
			want := "the workflow was completed with 3 open tasks: a1 (running, phase analyze), a2 (pending, phase analyze), r1 (running); they are kept as they are"
			if err != nil || !res.Completed || !slices.Equal(res.Warnings, []string{want}) {
				t.Fatalf("warnings %q, err %v\nwant %q", res.Warnings, err, want)
			}
			// A task an older Cairn stored without its phase is named with no phase.
			r.Tasks = append(r.Tasks, workflow.Task{ID: "old", Status: workflow.TaskPending, UpdatedAt: at})
			res, err = tc.end(r)
			want = "the workflow was completed with 4 open tasks: a1 (running, phase analyze), a2 (pending, phase analyze), r1 (running), old (pending); they are kept as they are"
			if err != nil || !slices.Equal(res.Warnings, []string{want}) {
				t.Fatalf("with a task of no phase: warnings %q, err %v\nwant %q", res.Warnings, err, want)
			}
		})
	}
}
