package workflow

import (
	"fmt"
	"testing"
	"time"
)

// A status file newer than initiative.json is taken in milestone by milestone, each matched
// with initiative.json's of its id: searched for in the whole list, that took work in the
// square of their number, and the 256 KiB the file may hold has room for 25,000 (seconds of
// an initiative call). Each is now one look-up.
func TestSyncTakesInMilestonesInLinearWork(t *testing.T) {
	const n = 2000
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	in := &Initiative{Version: SchemaVersion, ID: "i-1", Status: InitiativeInProgress, LastUpdated: at}
	doc := &StatusDoc{Initiative: "i-1", Status: InitiativeInProgress, LastUpdated: at.Add(time.Hour).Format(time.RFC3339)}
	for i := range n {
		id := fmt.Sprintf("m%d", i)
		in.Milestones = append(in.Milestones, Milestone{ID: id, Title: "t", Status: MilestonePending})
		doc.Milestones = append(doc.Milestones, StatusMilestone{ID: id, Status: MilestoneCompleted})
	}
	work := 0
	milestoneCompared = func() { work++ }
	defer func() { milestoneCompared = nil }()
	d, err := Sync(in, doc, at.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if work > 2*n {
		t.Errorf("taking in %d milestones compared %d, want at most %d", n, work, 2*n)
	}
	if m := d.Initiative.Milestones; len(m) != n || m[n-1].ID != "m1999" || m[n-1].Title != "t" || m[n-1].Status != MilestoneCompleted {
		t.Errorf("taken in: %d milestones, the last %+v", len(m), m[len(m)-1])
	}
}
