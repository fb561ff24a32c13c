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
		{"full", r, true, true, "", workflow.TierFull, "continue phase implement; allowed next: review", nil},
		{"minimal", r, true, false, "", workflow.TierMinimal, "continue phase implement; allowed next: review", []string{workflow.WarnL2Unavailable}},
		{"l2-only", nil, true, true, "Active APEX workflow: plan completed, implementing add login", workflow.TierL2Only,
			"last known position from memory: Active APEX workflow: plan completed, implementing add login; the workflow state file is gone", nil},
		{"none", nil, true, true, "", workflow.TierNone, "no workflow to resume", nil},
		{"none-no-layers", nil, false, false, "", workflow.TierNone, "no workflow to resume", []string{workflow.WarnL1Unavailable, workflow.WarnL2Unavailable}},
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
	tasks := walk(t, def, inPlan, "implement")
	for _, id := range []string{"a", "b"} {
		res, _ := workflow.UpdateTask(tasks, workflow.TaskUpdate{ID: id, Status: "pending"}, tasks.UpdatedAt, alice)
		tasks = res.Record
	}
	blocked, _ := workflow.SetPhaseStatus(tasks, workflow.PhaseBlocked, tasks.UpdatedAt, alice)
	done, _ := workflow.Complete(review, "shipped", review.UpdatedAt, alice)
	now := review.UpdatedAt.Add(time.Hour)
	for _, tc := range []struct {
		name string
		rec  *workflow.Record
		find []workflow.Finding
		want string
	}{
		{"approval", inPlan, nil, "phase plan needs the user's approval before moving on: if its result was already presented, present it again for approval (do not re-run it); otherwise finish it, then ask; allowed next: implement, analyze"},
		{"blocking-violations", withV.Record, nil, "resolve 1 blocking violation first; continue phase review; allowed next: implement, git-commit"},
		{"tasks", tasks, nil, "continue phase implement (2 tasks to run); allowed next: review"},
		{"phase-blocked", blocked.Record, nil, "phase implement is blocked: deal with that, then continue it (2 tasks to run); allowed next: review"},
		{"completed", done.Record, nil, "the workflow is completed (shipped); start a new one for new work"},
		{"integrity", review, []workflow.Finding{{Code: "output-missing", Severity: "HIGH", Text: "x missing"}, {Code: "approval-pending", Severity: "INFO", Text: "info only"}},
			"integrity problems (output-missing): show them to the user and ask whether to resume anyway or start fresh (the current state is archived, not lost); continue phase review"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := workflow.BuildPlan(workflow.PlanInput{Record: tc.rec, Def: def, L1Available: true, L2Available: true, Findings: tc.find, Now: now})
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
