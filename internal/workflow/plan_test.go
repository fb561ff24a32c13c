package workflow_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestBuildPlanTiers(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement")
	now := r.UpdatedAt.Add(90 * time.Minute)
	for _, tc := range []struct {
		name     string
		rec      *workflow.Record
		l1, l2   bool
		line     string
		tier     workflow.Tier
		next     string
		warnings []string
	}{
		{"full", r, true, true, "", workflow.TierFull, "Continue phase implement, then move on to review.", nil},
		{"minimal", r, true, false, "", workflow.TierMinimal, "Continue phase implement, then move on to review.", []string{workflow.WarnL2Unavailable}},
		{"l2-only", nil, true, true, "Active APEX workflow: plan completed, implementing add login", workflow.TierL2Only,
			"Tell the user the last position memory holds", nil},
		{"none", nil, true, true, "", workflow.TierNone, "Nothing to resume", nil},
		{"none-no-layers", nil, false, false, "", workflow.TierNone, "Nothing to resume", []string{workflow.WarnL1Unavailable, workflow.WarnL2Unavailable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := workflow.BuildPlan(workflow.PlanInput{Record: tc.rec, Def: def, L1Available: tc.l1, L2Available: tc.l2, L2Line: tc.line, Now: now})
			if p.Tier != tc.tier || !strings.HasPrefix(p.Next, tc.next) || !slices.Equal(p.Warnings, tc.warnings) {
				t.Fatalf("tier %s next %q warnings %q", p.Tier, p.Next, p.Warnings)
			}
			if tc.rec != nil {
				if p.WorkflowID != "apex-1" || p.Type != "apex" || p.Context != "add login" || p.Phase != "implement" ||
					p.Age != 90*time.Minute || !slices.Equal(p.Completed, []string{"analyze", "plan"}) || !p.CanResume {
					t.Fatalf("%+v", p)
				}
			} else if p.CanResume {
				t.Fatal("nothing to resume but CanResume")
			}
		})
	}
}

func TestBuildPlanNextStep(t *testing.T) {
	def := mustDef(t, "apex")
	inPlan := walk(t, def, mustStart(t, def), "plan")
	review := walk(t, def, inPlan, "implement", "review")
	withV, _ := workflow.SetEnforcement(review, []workflow.Violation{{Code: "V-TEST-03", Severity: "HIGH"}, {Code: "V-DOC", Severity: "LOW"}}, review.UpdatedAt, alice)
	twoV, _ := workflow.SetEnforcement(review, []workflow.Violation{{Code: "V-1", Severity: "HIGH"}, {Code: "V-2", Severity: "CRITICAL"}}, review.UpdatedAt, alice)
	ancient := workflow.Finding{Code: workflow.FindingAncient, Severity: workflow.Medium, Text: "stale"}
	owned := workflow.Finding{Code: workflow.FindingOwnedElsewhere, Severity: workflow.Medium, Text: "owned"}
	tasks := walk(t, def, inPlan, "implement")
	for _, id := range []string{"a", "b"} {
		res, _ := workflow.UpdateTask(tasks, workflow.TaskUpdate{ID: id, Status: "pending"}, tasks.UpdatedAt, alice)
		tasks = res.Record
	}
	blocked, _ := workflow.SetPhaseStatus(tasks, workflow.PhaseBlocked, tasks.UpdatedAt, alice)
	failed := tasks
	for _, st := range []string{"running", "failed"} {
		res, err := workflow.UpdateTask(failed, workflow.TaskUpdate{ID: "a", Status: workflow.TaskStatus(st)}, failed.UpdatedAt, alice)
		if err != nil {
			t.Fatal(err)
		}
		failed = res.Record
	}
	onlyFailed, err := workflow.UpdateTask(failed, workflow.TaskUpdate{ID: "b", Status: "running"}, failed.UpdatedAt, alice)
	if err == nil {
		onlyFailed, err = workflow.UpdateTask(onlyFailed.Record, workflow.TaskUpdate{ID: "b", Status: "failed"}, failed.UpdatedAt, alice)
	}
	if err != nil {
		t.Fatal(err)
	}
	done, _ := workflow.Complete(review, "shipped", review.UpdatedAt, alice)
	approved, err := workflow.Approve(def, inPlan, workflow.ApprovalCLI, "ok", inPlan.UpdatedAt, alice)
	if err != nil {
		t.Fatal(err)
	}
	approvedTasks := approved.Record
	for _, id := range []string{"a", "b"} {
		res, _ := workflow.UpdateTask(approvedTasks, workflow.TaskUpdate{ID: id, Status: "pending"}, approvedTasks.UpdatedAt, alice)
		approvedTasks = res.Record
	}
	now := review.UpdatedAt.Add(time.Hour)
	for _, tc := range []struct {
		name string
		rec  *workflow.Record
		find []workflow.Finding
		want string
	}{
		{"approval", inPlan, nil, "Finish phase plan (if its result was already shown, show it again without re-running it) and ask the user to approve it; leaving plan needs their yes."},
		{"blocking-violations", withV.Record, nil, "Fix the blocking violation, then call " + workflow.ToolPrefix + "set_enforcement with what is still open ([] once none is)."},
		{"blocking-violations-2", twoV.Record, nil, "Fix the 2 blocking violations, then call " + workflow.ToolPrefix + "set_enforcement with what is still open ([] once none is)."},
		// A warning that asks for something before going on makes that the next step, not
		// "continue phase ...", which would be a second one.
		{"stale", review, []workflow.Finding{ancient},
			"Confirm with the user that this workflow, last active 8d ago, should go on before continuing phase review."},
		{"owned-elsewhere", review, []workflow.Finding{owned},
			"Ask the user which session goes on with this workflow (another live session changed it too) before continuing phase review."},
		{"stale-and-owned-elsewhere", withV.Record, []workflow.Finding{ancient, owned},
			"Confirm with the user that this workflow, last active 8d ago, should go on, and which session goes on with it (another live session changed it too), before continuing phase review."},
		{"tasks", tasks, nil, "Continue phase implement (2 tasks to run), then move on to review."},
		// Entering git-commit completes and archives the workflow: moving there before the
		// commit left the commit outside the workflow, and a failed one with nothing to go
		// back to. The step says so.
		{"terminal-ahead", review, nil, "Continue phase review, then move on to implement or git-commit: entering git-commit completes the workflow: do its work first."},
		// A failed task is not open, but the phase's work is not done with it: it is said, with
		// what to do about it, not left out of the step.
		{"failed-task", failed, nil, "Continue phase implement (1 task to run, 1 failed to retry or report to the user), then move on to review."},
		{"failed-tasks-only", onlyFailed.Record, nil, "Continue phase implement (2 failed tasks to retry or report to the user), then move on to review."},
		// A person's yes is for the phase's result: "continue phase plan" would do it again.
		{"approved", approved.Record, nil, "Phase plan is approved (by a person, with cairn approve): move on to implement or analyze."},
		{"approved-with-tasks", approvedTasks, nil, "Phase plan is approved (by a person, with cairn approve): run its 2 open tasks, then move on to implement or analyze."},
		{"phase-blocked", blocked.Record, nil, "Phase implement is blocked: deal with that, then continue it."},
		{"completed", done.Record, nil, "The workflow is completed; call " + workflow.ToolPrefix + "start_workflow for new work."},
		{"integrity", review, []workflow.Finding{{Code: "future-time", Severity: "HIGH", Text: "x missing"}, {Code: "approval-pending", Severity: "INFO", Text: "info only"}},
			"Show the user the warnings above and ask whether to resume this workflow or start fresh"},
		// Resuming leaves the outputs missing, and the same question came at every session
		// start: the step says what ends it. It said what the warning above it says again, in
		// other words ("files the workflow recorded as written are missing").
		{"output-missing", review, []workflow.Finding{{Code: workflow.FindingOutputMissing, Severity: "HIGH", Text: "x missing"}},
			"Show the user the warnings above and ask: write the missing outputs again at the same paths and go on with phase review, go on without them (then run `cairn outputs drop`), or start fresh (the current one is archived, not lost). Each session start asks until one is done."},
		{"output-missing-and-more", review, []workflow.Finding{{Code: workflow.FindingOutputMissing, Severity: "HIGH", Text: "x missing"}, {Code: "future-time", Severity: "HIGH", Text: "future"}},
			"Show the user the warnings above and ask whether to resume this workflow or start fresh"},
		// Without its definition the workflow cannot move at all: resuming it is no choice, and
		// starting fresh is not the fix.
		{"no-definition", review, []workflow.Finding{{Code: workflow.FindingNoDefinition, Severity: "HIGH", Text: "no definition"}},
			"Show the user the warnings above: the definition of this workflow's type does not load, so the workflow cannot move and is kept as it is; " + workflow.DefinitionAsk + ", and it goes on once that loads."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, at := tc.rec, now
			if slices.Contains(tc.find, ancient) {
				rec = rec.Clone()
				rec.TTL = "30d" // stale, not expired
				at = rec.LastActivity().Add(8*24*time.Hour + time.Minute)
			}
			p := workflow.BuildPlan(workflow.PlanInput{Record: rec, Def: def, L1Available: true, L2Available: true, Findings: tc.find, Now: at})
			if !strings.HasPrefix(p.Next, tc.want) {
				t.Fatalf("next %q\nwant %q", p.Next, tc.want)
			}
			switch tc.name {
			case "blocking-violations":
				if len(p.Blocking) != 1 || p.Blocking[0].Code != "V-TEST-03" {
					t.Fatalf("blocking %+v", p.Blocking)
				}
			case "tasks":
				if p.Tasks.Pending != 2 {
					t.Fatalf("tasks %+v", p.Tasks)
				}
			case "integrity":
				if p.CanResume || !slices.Equal(p.Warnings, []string{"x missing"}) {
					t.Fatalf("%+v", p)
				}
			case "approval":
				if p.AwaitingApproval != "plan" {
					t.Fatal(p.AwaitingApproval)
				}
			}
		})
	}
}

// An active workflow past its TTL that a read-only view sees (cairn status, a state directory
// that cannot be written) is not resumed: the next step says so, never "continue phase".
func TestBuildPlanExpired(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement").Clone()
	r.TTL = "1h"
	now := r.LastActivity().Add(2 * time.Hour)
	for _, tc := range []struct {
		l1   bool
		want string
	}{
		// One step, the one the model takes first: a start is refused while it is in the slot.
		{true, "The workflow has expired after 1h without a change, so it is not resumed: call " + workflow.ToolPrefix + "expire_ttl, which archives it (kept, not lost)."},
		{false, "Tell the user the workflow has expired after 1h without a change and is not resumed: the first session start that can write the state directory archives it; this one cannot."},
	} {
		p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: tc.l1, L2Available: true, Now: now})
		if p.Next != tc.want || p.CanResume {
			t.Errorf("L1 available %t: next %q (can resume %t)\nwant %q", tc.l1, p.Next, p.CanResume, tc.want)
		}
	}
	if p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: true, L2Available: true, Now: now.Add(-time.Hour)}); !strings.HasPrefix(p.Next, "Continue phase implement") {
		t.Errorf("at its deadline the workflow is still live, but next is %q", p.Next)
	}
}

// TestBuildPlanAgeInTheFuture: a last activity after Now keeps its sign (at least a second, so
// whole seconds keep it too) for the report and the status to say "in the future", as the
// HIGH finding does, and not "0s ago".
func TestBuildPlanAgeInTheFuture(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement")
	for _, tc := range []struct {
		ahead, want time.Duration
	}{{time.Hour, -time.Hour}, {300 * time.Millisecond, -time.Second}, {0, 0}} {
		p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: true, L2Available: true, Now: r.LastActivity().Add(-tc.ahead)})
		if p.Age != tc.want {
			t.Errorf("last activity %s after now: age %s, want %s", tc.ahead, p.Age, tc.want)
		}
	}
}

// Every next step that has the model start a workflow names the tool it calls, at each tier
// and ending: "start a new workflow" alone leaves it to guess which of its tools that is.
// Nothing on record sends it on with the user's request, and an expired workflow to
// expire_ttl first: one step each (TestBuildPlanExpired).
func TestBuildPlanStartNamesTheTool(t *testing.T) {
	def := mustDef(t, "apex")
	review := walk(t, def, mustStart(t, def), "plan", "implement", "review")
	done, _ := workflow.Complete(review, "shipped", review.UpdatedAt, alice)
	later := review.LastActivity().Add(2 * time.Hour)
	for _, tc := range []struct {
		name string
		in   workflow.PlanInput
	}{
		{"l2-only", workflow.PlanInput{Def: def, L1Available: true, L2Available: true, L2Line: "Active APEX workflow: plan completed, implementing add login", Now: later}},
		{"completed", workflow.PlanInput{Record: done.Record, Def: def, L1Available: true, L2Available: true, Now: later}},
	} {
		if p := workflow.BuildPlan(tc.in); !strings.Contains(p.Next, workflow.ToolPrefix+"start_workflow") {
			t.Errorf("%s: next %q does not name %sstart_workflow", tc.name, p.Next, workflow.ToolPrefix)
		}
	}
}

// A workflow that ended (completed, expired or archived: another machine's end, pulled by a
// sync, before a session start files it) has no next phase: the plan listed the definition's
// moves from its phase beside a next step that says it is completed, which the model reads
// (resume_check's structured content) when its state directory cannot be written or the
// archive failed, and cairn status --json shows.
func TestBuildPlanEndedAllowsNoMove(t *testing.T) {
	def := mustDef(t, "apex")
	live := walk(t, def, mustStart(t, def), "plan")
	if p := workflow.BuildPlan(workflow.PlanInput{Record: live, Def: def, L1Available: true, L2Available: true, Now: live.LastActivity()}); len(p.Allowed) == 0 {
		t.Fatal("an active workflow in plan lists no next phase")
	}
	for _, st := range []workflow.Status{workflow.StatusCompleted, workflow.StatusExpired, workflow.StatusArchived} {
		r := live.Clone()
		r.Status = st
		for _, l1 := range []bool{true, false} {
			if p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: l1, L2Available: true, Now: r.LastActivity()}); len(p.Allowed) != 0 {
				t.Errorf("%s workflow (L1 available %t) lists next phases %v (next %q)", st, l1, p.Allowed, p.Next)
			}
		}
	}
}

// TestBuildPlanTasksRunningElsewhere: a task another machine sharing the workflow runs under
// its live claim was counted as this session's to run ("Continue phase implement (1 task to
// run)" when that was the only one); update_task refuses it here. It is now said apart.
func TestBuildPlanTasksRunningElsewhere(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, walk(t, def, mustStart(t, def), "plan"), "implement")
	set := func(r *workflow.Record, id, st string) *workflow.Record {
		t.Helper()
		res, err := workflow.UpdateTask(r, workflow.TaskUpdate{ID: id, Status: workflow.TaskStatus(st)}, r.UpdatedAt, alice)
		if err != nil {
			t.Fatal(err)
		}
		return res.Record
	}
	oneRunning := set(set(r, "a", "running"), "b", "pending")
	bothRunning := set(oneRunning, "b", "running")
	failed := set(set(oneRunning, "b", "running"), "b", "failed")
	// A person's yes to the phase said "move on" as if no task of it ran anywhere.
	plan := walk(t, def, mustStart(t, def), "plan")
	approved, err := workflow.Approve(def, set(set(plan, "a", "running"), "b", "pending"), workflow.ApprovalCLI, "ok", plan.UpdatedAt, alice)
	if err != nil {
		t.Fatal(err)
	}
	approvedBoth := set(approved.Record, "b", "running")
	for _, tc := range []struct {
		name      string
		rec       *workflow.Record
		elsewhere []string
		want      string
	}{
		{"none-elsewhere", oneRunning, nil, "Continue phase implement (2 tasks to run), then"},
		{"one-elsewhere", oneRunning, []string{"a"}, "Continue phase implement (1 task to run, 1 running on another machine), then"},
		{"running-here-too", set(oneRunning, "b", "running"), []string{"a"}, "Continue phase implement (1 task to run, 1 running on another machine), then"},
		{"all-elsewhere", bothRunning, []string{"a", "b"}, "Continue phase implement (2 tasks running on another machine), then"},
		{"pending-not-elsewhere", oneRunning, []string{"b"}, "Continue phase implement (2 tasks to run), then"},
		{"elsewhere-and-failed", failed, []string{"a"}, "Continue phase implement (1 task running on another machine, 1 failed to retry or report to the user), then"},
		{"approved-one-elsewhere", approved.Record, []string{"a"}, "Phase plan is approved (by a person, with cairn approve): run its 1 open task, then move on to implement or analyze; its 1 task running on another machine is that machine's to finish."},
		{"approved-all-elsewhere", approvedBoth, []string{"a", "b"}, "Phase plan is approved (by a person, with cairn approve): move on to implement or analyze; its 2 tasks running on another machine are that machine's to finish."},
		{"approved-none-elsewhere", approvedBoth, nil, "Phase plan is approved (by a person, with cairn approve): run its 2 open tasks, then move on to implement or analyze."},
		// The owner reading it mid-work runs its running tasks: to finish, not to run again.
		{"mine", oneRunning, nil, "Continue phase implement (1 task to run, 1 to finish), then"},
		{"mine-one-elsewhere", bothRunning, []string{"a"}, "Continue phase implement (1 task to finish, 1 running on another machine), then"},
		{"mine-approved", approved.Record, nil, "Phase plan is approved (by a person, with cairn approve): finish its 2 open tasks, then move on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := workflow.PlanInput{Record: tc.rec, Def: def, L1Available: true, L2Available: true, Now: tc.rec.UpdatedAt, OwnerMidWork: strings.HasPrefix(tc.name, "mine")}
			if tc.elsewhere != nil {
				in.RunsElsewhere = func(task string) bool { return slices.Contains(tc.elsewhere, task) }
			}
			if p := workflow.BuildPlan(in); !strings.HasPrefix(p.Next, tc.want) {
				t.Fatalf("next %q\nwant %q", p.Next, tc.want)
			}
		})
	}
}

// TestBuildPlanStaleAskedOnce: a long idle workflow's report asked the user's confirmation
// twice, in the warning ("...; confirm with the user before continuing") and in the Next
// line ("Confirm with the user that this workflow, last active 10d ago, should go on ...").
// The step asks; the warning says what is so.
func TestBuildPlanStaleAskedOnce(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement").Clone()
	r.TTL = "30d" // stale, not expired
	now := r.LastActivity().Add(10 * 24 * time.Hour)
	fs := workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: now})
	if !slices.ContainsFunc(fs, func(f workflow.Finding) bool { return f.Code == workflow.FindingAncient }) {
		t.Fatalf("no stale finding: %+v", fs)
	}
	p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: true, L2Available: true, Findings: fs, Now: now})
	if n := strings.Count(strings.ToLower(strings.Join(append(p.Warnings, p.Next), "\n")), "confirm with the user"); n != 1 || !strings.HasPrefix(p.Next, "Confirm with the user") {
		t.Errorf("the confirmation is asked %d times:\nwarnings %q\nnext %q", n, p.Warnings, p.Next)
	}
}

// TestBuildPlanOwnedAskedOnce: with another live session on the workflow, the report asked the
// user which session goes on twice, in the warning and in the Next line. The step asks; the
// warning says what is so. A step that asks something else keeps the warning's ask.
func TestBuildPlanOwnedAskedOnce(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement").Clone()
	r.Owner = &workflow.Owner{SessionID: "other", Heartbeat: r.UpdatedAt}
	now := r.UpdatedAt.Add(time.Minute)
	w := workflow.OwnershipWarning(r, alice, now, workflow.DefaultLiveWindow)
	owned := workflow.Finding{Code: workflow.FindingOwnedElsewhere, Severity: workflow.Medium, Text: w}
	for _, tc := range []struct {
		name  string
		find  []workflow.Finding
		asked int // in the warnings
	}{
		{"owned", []workflow.Finding{owned}, 0},
		{"owned and more", []workflow.Finding{owned, {Code: "future-time", Severity: workflow.High, Text: "future"}}, 1},
	} {
		p := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: true, L2Available: true, Findings: tc.find, Now: now})
		ws := strings.Join(p.Warnings, "\n")
		if n := strings.Count(ws, "which session goes on"); n != tc.asked || !strings.Contains(ws, "Another live session last changed this workflow 1m ago") || !strings.Contains(ws, "changes from both may cross.") {
			t.Errorf("%s: the warnings ask %d times, want %d:\nwarnings %q\nnext %q", tc.name, n, tc.asked, p.Warnings, p.Next)
		}
	}
}
