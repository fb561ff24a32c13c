package workflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// Recovery says what it did in a few lines however many tasks it put back: the report shows
// few notices and sends the model to resume_check for the rest, which cannot show notices of
// a recovery done already. A few tasks keep a line each.
func TestRecoverManyTasksSaysSoBriefly(t *testing.T) {
	now := time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name          string
		pending, done int
		want          []string
	}{
		{"three", 2, 1, []string{
			"task t1 was running with no output: back to pending, to run again (attempts 1)",
			"task t2 was running with no output: back to pending, to run again (attempts 1)",
			"task d1 was running and its output out/d1 exists: marked done",
		}},
		{"many", 40, 7, []string{
			"40 tasks were running with no output of their run: back to pending, to run again",
			"7 tasks were running and their output exists: marked done (d1, d2, d3, d4, d5 +2 more)",
		}},
		{"one put back, three done", 1, 3, []string{
			"1 task was running with no output of its run: back to pending, to run again",
			"3 tasks were running and their output exists: marked done (d1, d2, d3)",
		}},
		{"many put back", 5, 0, []string{
			"5 tasks were running with no output of their run: back to pending, to run again",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := startedApex(t)
			var ids []string
			for i := 1; i <= tt.pending; i++ {
				ids = append(ids, fmt.Sprintf("t%d", i))
			}
			for i := 1; i <= tt.done; i++ {
				ids = append(ids, fmt.Sprintf("d%d", i))
			}
			for _, id := range ids {
				u := workflow.TaskUpdate{ID: id, Status: workflow.TaskRunning}
				if strings.HasPrefix(id, "d") {
					u.Output = "out/" + id
				}
				res, err := workflow.UpdateTask(r, u, now.Add(-time.Hour), workflow.Actor{})
				if err != nil {
					t.Fatal(err)
				}
				r = res.Record
			}
			written := func(string) (time.Time, bool) { return now, true }
			res, acts, err := workflow.Recover(r, now, written, workflow.Actor{})
			if err != nil || !slices.Equal(acts, tt.want) {
				t.Fatalf("recovery said\n%q (%v)\nwant\n%q", acts, err, tt.want)
			}
			if n := len(workflow.OpenTasks(res.Record, false)); n != tt.pending {
				t.Errorf("%d open tasks after recovery, want %d", n, tt.pending)
			}
		})
	}
}
