package workflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func codes(fs []workflow.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

func existsIn(paths ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(paths, p) }
}

// writtenIn is Recover's view of outputs: paths exist, each last modified at at.
func writtenIn(at time.Time, paths ...string) func(string) (time.Time, bool) {
	return func(p string) (time.Time, bool) { return at, slices.Contains(paths, p) }
}

func TestCheckClean(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement")
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: r.UpdatedAt.Add(time.Hour), Exists: existsIn(), By: alice})
	if len(fs) != 0 {
		t.Fatalf("clean record has findings: %+v", fs)
	}
}

func TestCheckFindings(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := walk(t, def, mustStart(t, def), "architecture", "implementation")
	now := base.UpdatedAt.Add(time.Hour)
	for _, tc := range []struct {
		name   string
		mutate func(r *workflow.Record)
		exists func(string) bool
		now    time.Time
		by     workflow.Actor
		code   string
		sev    workflow.Severity
		text   string
	}{
		{name: "phase-output-missing", code: "output-missing", sev: "HIGH", text: "memory/reports/demand.json (output of requirements)",
			mutate: func(r *workflow.Record) {
				p := r.Phases["requirements"]
				p.Outputs = []string{"memory/reports/demand.json"}
				r.Phases["requirements"] = p
			}},
		{name: "done-task-output-missing", code: "output-missing", sev: "HIGH", text: "t1.json (output of done task t1)",
			mutate: func(r *workflow.Record) {
				r.Tasks = []workflow.Task{{ID: "t1", Status: "done", Output: "t1.json"}}
			}},
		// An id an older Cairn stored with an invisible character, or one with spaces, is
		// shown as messages show task ids: not as "t1", nor as words of the sentence.
		{name: "done-task-output-missing-unclear-id", code: "output-missing", sev: "HIGH", text: `t1.json (output of done task "t1\u200e")`,
			mutate: func(r *workflow.Record) {
				r.Tasks = []workflow.Task{{ID: "t1\u200e", Status: "done", Output: "t1.json"}}
			}},
		{name: "done-task-output-missing-spaced-id", code: "output-missing", sev: "HIGH", text: `t1.json (output of done task "write the tests")`,
			mutate: func(r *workflow.Record) {
				r.Tasks = []workflow.Task{{ID: "write the tests", Status: "done", Output: "t1.json"}}
			}},
		// 300 tasks of a status a newer Cairn wrote were 300 findings, each a line of the
		// resume report and a warning of resume_check's result: they are one.
		{name: "tasks-of-unknown-status", code: "bad-task-status", sev: "MEDIUM", text: `tasks of a status this Cairn does not know: t000 "skipped", t001 "skipped", t002 "skipped", t003 "skipped", t004 "skipped" and 295 more`,
			mutate: func(r *workflow.Record) {
				for i := range 300 {
					r.Tasks = append(r.Tasks, workflow.Task{ID: fmt.Sprintf("t%03d", i), Status: "skipped"})
				}
			}},
		{name: "artifact-missing", code: "artifact-missing", sev: "MEDIUM", text: "design.md",
			mutate: func(r *workflow.Record) { r.Artifacts = []string{"design.md", "here.md"} }, exists: existsIn("here.md")},
		{name: "future-updated-at", code: "future-timestamp", sev: "HIGH", text: "updated_at 2026-11-22T18:32:01Z",
			mutate: func(r *workflow.Record) { r.UpdatedAt = now.Add(time.Second) }},
		// changed_at is what ages and the TTL count from: one in the future is as wrong.
		{name: "future-changed-at", code: "future-timestamp", sev: "HIGH", text: "changed_at 2026-11-22T18:32:01Z",
			mutate: func(r *workflow.Record) { r.ChangedAt = now.Add(time.Second) }},
		{name: "future-history", code: "future-timestamp", sev: "HIGH", text: "history[1].at",
			mutate: func(r *workflow.Record) { r.History[1].At = now.Add(time.Hour) }},
		{name: "ancient", code: "ancient", sev: "MEDIUM", text: "more than 7 days",
			now: base.UpdatedAt.Add(7*24*time.Hour + time.Second)},
		{name: "history-bad-move", code: "history-invalid", sev: "HIGH", text: "requirements->implementation, is not allowed",
			mutate: func(r *workflow.Record) {
				r.History = []workflow.HistoryEntry{{From: "requirements", To: "implementation"}}
			}},
		// A phase the workflow went through, renamed or removed in the definition since: the
		// workflow can still move from its phase, so it is said, and does not block the resume
		// (it was HIGH, and every session start asked to resume or start fresh).
		{name: "history-phase-gone", code: "history-phase-gone", sev: "MEDIUM", text: "passed phases the dotagent definition no longer has (renamed or removed since): design; it goes on from implementation",
			mutate: func(r *workflow.Record) { r.History[0].To, r.History[1].From = "design", "design" }},
		{name: "history-start-phase-gone", code: "history-phase-gone", sev: "MEDIUM", text: "no longer has (renamed or removed since): reqs;",
			mutate: func(r *workflow.Record) { r.History[0].From = "reqs" }},
		// Where the workflow's own phase is gone too, it cannot move: said once, with the step
		// (TestCheckLostPhaseSaidOnce).
		{name: "history-current-phase-gone", code: "unknown-phase", sev: "CRITICAL", text: `phase "build" is not a phase of the dotagent definition now (requirements, architecture, implementation, verification, reflection), so the workflow cannot move: put the phase back in the definition`,
			mutate: func(r *workflow.Record) { r.State, r.History[1].To = "build", "build" }},
		{name: "history-broken-chain", code: "history-invalid", sev: "HIGH", text: "leaves verification but the move before it ended in architecture",
			mutate: func(r *workflow.Record) { r.History[1].From = "verification" }},
		{name: "history-wrong-start", code: "history-invalid", sev: "HIGH", text: "not in the start phase requirements",
			mutate: func(r *workflow.Record) { r.History = r.History[1:] }},
		{name: "history-wrong-end", code: "history-invalid", sev: "HIGH", text: "ends in implementation but the workflow is in verification",
			mutate: func(r *workflow.Record) { r.State = "verification" }},
		{name: "no-history", code: "no-history", sev: "LOW", text: "from requirements to implementation",
			mutate: func(r *workflow.Record) { r.History = nil }},
		{name: "interrupted-write", code: "interrupted-write", sev: "HIGH", text: "interruption_safe is false",
			mutate: func(r *workflow.Record) { f := false; r.InterruptionSafe = &f }},
		{name: "safety-unset", code: "interruption-safe-unset", sev: "LOW", text: "not recorded",
			mutate: func(r *workflow.Record) { r.InterruptionSafe = nil }},
		{name: "unknown-phase", code: "unknown-phase", sev: "CRITICAL", text: `phase "deploy" is not a phase of the dotagent definition`,
			mutate: func(r *workflow.Record) {
				r.State = "deploy"
				r.History = nil
			}},
		// No tool or command sets a running workflow's ttl: it said "write 90m ... until it is
		// fixed", a step nowhere to take. It says what still works and what ends it.
		{name: "bad-ttl", code: "bad-ttl", sev: "MEDIUM", text: "ttl \"1.5h\" on record is not one Cairn reads, so the workflow does not expire; all else works, and `cairn archive` ends it (kept, not lost) when the user wants",
			mutate: func(r *workflow.Record) { r.TTL = "1.5h" }},
		{name: "owned-elsewhere", code: "owned-by-live-session", sev: "MEDIUM", text: "Another live session",
			by: workflow.Actor{SessionID: "sess-bob"}, now: base.UpdatedAt.Add(5 * time.Minute)},
		{name: "approval-pending", code: "approval-pending", sev: "INFO", text: "present it again rather than re-running it",
			mutate: func(r *workflow.Record) {
				r.State = "architecture"
				r.History = r.History[:1]
				r.Approvals[len(r.Approvals)-1].ApprovedAt = time.Time{}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base.Clone()
			if tc.mutate != nil {
				tc.mutate(r)
			}
			exists := tc.exists
			if exists == nil {
				exists = existsIn()
			}
			n := now
			if !tc.now.IsZero() {
				n = tc.now
			}
			fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: n, Exists: exists, By: tc.by})
			i := slices.IndexFunc(fs, func(f workflow.Finding) bool { return f.Code == tc.code })
			if i < 0 {
				t.Fatalf("no %s finding in %+v", tc.code, fs)
			}
			if fs[i].Severity != tc.sev || !strings.Contains(fs[i].Text, tc.text) {
				t.Fatalf("finding %+v, want severity %s and text containing %q", fs[i], tc.sev, tc.text)
			}
			if len(fs) != 1 && !slices.Contains(codes(fs), "unknown-phase") {
				t.Fatalf("want exactly the one finding, got %v", codes(fs))
			}
		})
	}
	// Just inside the 7 days: no warning.
	if fs := workflow.Check(workflow.CheckInput{Def: def, Record: base, Now: base.UpdatedAt.Add(7 * 24 * time.Hour)}); len(fs) != 0 {
		t.Fatalf("exactly 7 days: %v", codes(fs))
	}
	// Without a definition, say so.
	if fs := workflow.Check(workflow.CheckInput{Record: base, Now: now}); !slices.Equal(codes(fs), []string{"no-definition"}) {
		t.Fatalf("no def: %v", codes(fs))
	}
	// Most serious first.
	r := base.Clone()
	r.InterruptionSafe = nil
	r.State = "nowhere"
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: now})
	if fs[0].Severity != workflow.Critical || fs[len(fs)-1].Severity != workflow.Low {
		t.Fatalf("order: %+v", fs)
	}
}

func TestRecoverScenarios(t *testing.T) {
	def := mustDef(t, "dotagent")
	base := walk(t, def, mustStart(t, def), "architecture", "implementation")
	later := base.UpdatedAt.Add(time.Hour)
	mk := func(tasks ...workflow.Task) *workflow.Record {
		r := base.Clone()
		r.Tasks = tasks
		return r
	}
	t.Run("ctrl-c-during-subagent", func(t *testing.T) {
		r := mk(workflow.Task{ID: "task-001", Status: "running", Attempts: 1, StartedAt: base.UpdatedAt})
		res, acts, err := workflow.Recover(r, later, writtenIn(later), alice)
		if err != nil {
			t.Fatal(err)
		}
		tk := res.Record.Tasks[0]
		if !res.Changed || tk.Status != "pending" || tk.Attempts != 2 || !tk.UpdatedAt.Equal(later) || len(acts) != 1 || !strings.Contains(acts[0], "back to pending") {
			t.Fatalf("%+v %+v", tk, acts)
		}
		if r.Tasks[0].Status != "running" {
			t.Fatal("input modified")
		}
	})
	t.Run("output-recorded-but-missing", func(t *testing.T) {
		r := mk(workflow.Task{ID: "t2", Status: "running", Output: "out/t2.json"})
		res, _, _ := workflow.Recover(r, later, writtenIn(later), alice)
		if tk := res.Record.Tasks[0]; tk.Status != "pending" || tk.Attempts != 1 {
			t.Fatalf("%+v", tk)
		}
	})
	t.Run("crash-after-write-before-update", func(t *testing.T) {
		r := mk(workflow.Task{ID: "task-001", Status: "running", Output: "out/t1.json"}, workflow.Task{ID: "t3", Status: "pending"})
		res, acts, _ := workflow.Recover(r, later, writtenIn(later, "out/t1.json"), alice)
		tk := res.Record.Tasks[0]
		if tk.Status != "done" || !tk.CompletedAt.Equal(later) || tk.Attempts != 0 || len(acts) != 1 || !strings.Contains(acts[0], "marked done") {
			t.Fatalf("%+v %+v", tk, acts)
		}
		if res.Record.Tasks[1].Status != "pending" {
			t.Fatal("a pending task was touched")
		}
	})
	// Only an output written since the run started is the run's: one an earlier run left (a
	// retry after a failure) is none, up to the rounding of file systems that keep whole
	// seconds (or two).
	for _, tc := range []struct {
		name    string
		written time.Duration // from the run's start
		want    workflow.TaskStatus
	}{
		{"output-written-during-the-run", time.Minute, "done"},
		{"output-time-rounded-down", -time.Second, "done"},
		{"output-left-by-an-earlier-run", -time.Hour, "pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := base.UpdatedAt
			r := mk(workflow.Task{ID: "t1", Status: "running", Attempts: 1, Output: "out/t1.json", StartedAt: started})
			res, acts, _ := workflow.Recover(r, later, writtenIn(started.Add(tc.written), "out/t1.json"), alice)
			if tk := res.Record.Tasks[0]; tk.Status != tc.want || len(acts) != 1 {
				t.Fatalf("%+v %q, want %s", tk, acts, tc.want)
			}
		})
	}
	// A 1,000-character output path was said whole: the report cut the line inside the path,
	// so "marked done" or "back to pending" never reached the model. It is cut as a finding's.
	long := strings.Repeat("d/", 500)
	for _, written := range []time.Time{later, base.UpdatedAt.Add(-time.Hour)} {
		r := mk(workflow.Task{ID: "t1", Status: "running", Output: long, StartedAt: base.UpdatedAt})
		_, acts, _ := workflow.Recover(r, later, writtenIn(written, long), alice)
		if len(acts) != 1 || len(acts[0]) > 250 {
			t.Errorf("recovery with a long output says %d bytes: %.200q", len(acts[0]), acts)
		}
	}
	t.Run("interrupted-during-approval", func(t *testing.T) {
		r := walk(t, def, mustStart(t, def), "architecture") // in a gate, approval requested
		res, acts, err := workflow.Recover(r, later, writtenIn(later), alice)
		if err != nil || res.Changed || len(acts) != 0 {
			t.Fatalf("%v %+v %+v", err, res, acts)
		}
		// The check before a resume asks for the approval to be shown again, not re-run.
		fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: later})
		if !slices.ContainsFunc(fs, func(f workflow.Finding) bool {
			return f.Code == workflow.FindingApprovalPending && strings.Contains(f.Text, "architecture phase") && strings.Contains(f.Text, "rather than re-running it")
		}) {
			t.Fatalf("findings %+v", fs)
		}
	})
	t.Run("nothing-to-do", func(t *testing.T) {
		res, acts, err := workflow.Recover(mk(workflow.Task{ID: "a", Status: "done"}), later, writtenIn(later), alice)
		if err != nil || res.Changed || len(acts) != 0 {
			t.Fatalf("%v %+v %+v", err, res, acts)
		}
	})
	t.Run("ancient-state", func(t *testing.T) {
		// Seed 002 scenario 4: started 7 days ago: warned, not refused. (With the default TTL
		// it would have expired: a TTL of 30 days keeps it active.)
		r := base.Clone()
		r.TTL = "30d"
		fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: r.UpdatedAt.Add(8 * 24 * time.Hour)})
		p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: true, L2Available: true, Findings: fs, Now: r.UpdatedAt.Add(8 * 24 * time.Hour)})
		if !p.CanResume || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "8d ago") || !strings.HasPrefix(p.Next, "Confirm with the user") {
			t.Fatalf("%+v", p)
		}
	})
}

// TestCheckLostPhaseSaidOnce: a workflow in a phase its definition renamed or dropped since got
// two warnings for the one cause, "phase X is not a phase of the definition; the state was
// kept as it is" (no step) and "phase history is not a valid path: move 2 ... is not allowed:
// phase X is not in the definition now". It gets the first alone, with the step.
func TestCheckLostPhaseSaidOnce(t *testing.T) {
	def := mustDef(t, "dotagent")
	r := walk(t, def, mustStart(t, def), "architecture", "implementation")
	r.State, r.History[len(r.History)-1].To = "build", "build"
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: r.UpdatedAt, Exists: existsIn(), By: alice})
	if got := codes(fs); !slices.Equal(got, []string{"unknown-phase"}) {
		t.Fatalf("findings %v, want unknown-phase alone: %+v", got, fs)
	}
	if !strings.HasSuffix(fs[0].Text, ": put the phase back in the definition") {
		t.Errorf("finding %q gives no step", fs[0].Text)
	}
}

// Five missing artifacts or outputs of 1000 characters each were named whole: the session
// start's report grew by 5 KB a finding. Each path is named by its start, cut with "…"; an
// artifact that is also a missing output is still named once, as the output.
func TestCheckLongPathsAreCut(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement")
	long := func(i int) string { return fmt.Sprintf("out/%04d/%s", i, strings.Repeat("a", 1000)) }
	for i := range 7 {
		r.Artifacts = append(r.Artifacts, long(i))
	}
	r.Tasks = []workflow.Task{{ID: "t1", Status: "done", Output: long(0)}}
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: r.UpdatedAt.Add(time.Hour), Exists: existsIn(), By: alice})
	texts := map[string]string{}
	for _, f := range fs {
		texts[f.Code] = f.Text
	}
	for code, want := range map[string]string{
		workflow.FindingOutputMissing:   "referenced outputs are missing: " + long(0)[:119] + "… (output of done task t1)",
		workflow.FindingArtifactMissing: "artifacts are missing: " + long(1)[:119] + "…, ",
	} {
		if got := texts[code]; !strings.HasPrefix(got, want) || len(got) > 1000 {
			t.Errorf("%s: %d bytes %.300q, want it to start %q and be under 1000", code, len(got), got, want)
		}
	}
	if got := texts[workflow.FindingArtifactMissing]; strings.Contains(got, "out/0000") || !strings.HasSuffix(got, " and 1 more") {
		t.Errorf("artifacts: %q, want out/0001 to out/0005 named and one more", got)
	}
}
