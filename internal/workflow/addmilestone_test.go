package workflow

import (
	"testing"
	"time"
)

func TestAddMilestone(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	in, err := NewInitiative("init-1", "Ship v2", nil, now)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := AddMilestone(in, MilestoneSpec{ID: "m1", Title: "design"}, now.Add(time.Minute))
	if err != nil || !ch.Changed || ch.Initiative.CurrentMilestone != "m1" || len(ch.Initiative.Milestones) != 1 {
		t.Fatalf("first add: %+v, %v", ch, err)
	}
	if len(in.Milestones) != 0 {
		t.Fatal("the input initiative was modified")
	}
	again, err := AddMilestone(ch.Initiative, MilestoneSpec{ID: "m1"}, now)
	if err != nil || again.Changed {
		t.Fatalf("adding the same id again: %+v, %v", again, err)
	}
	two, err := AddMilestone(ch.Initiative, MilestoneSpec{ID: "m2"}, now)
	if err != nil || two.Initiative.CurrentMilestone != "m1" || len(two.Initiative.Milestones) != 2 {
		t.Fatalf("second add: %+v, %v", two, err)
	}
	for _, bad := range []string{"", "  ", "a\nb"} {
		if _, err := AddMilestone(in, MilestoneSpec{ID: bad}, now); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
	done, _ := SetInitiativeStatus(ch.Initiative, InitiativeInProgress, now)
	done, _ = SetInitiativeStatus(done.Initiative, InitiativeCompleted, now)
	if _, err := AddMilestone(done.Initiative, MilestoneSpec{ID: "m3"}, now); err == nil {
		t.Error("a milestone was added to a completed initiative")
	}
	if _, err := AddMilestone(nil, MilestoneSpec{ID: "m3"}, now); err == nil {
		t.Error("nil initiative accepted")
	}
}
