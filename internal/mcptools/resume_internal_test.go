package mcptools

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestResumeCheckBoundsCheckpointsBefore: past maxResumeCheckpoints, resume_check's
// structured content holds the first names, and of those saved before the workflow started,
// the ones among them: never a longer list than the names shown.
func TestResumeCheckBoundsCheckpointsBefore(t *testing.T) {
	var all, before []string
	for i := range maxResumeCheckpoints + 50 {
		n := fmt.Sprintf("c%04d", i)
		all = append(all, n)
		if i%2 == 0 {
			before = append(before, n)
		}
	}
	for _, tc := range []struct {
		name   string
		before []string
		want   []string
	}{
		{"some among the first", before, before[:maxResumeCheckpoints/2]},
		{"only past the first", all[maxResumeCheckpoints:], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, _ := json.Marshal(resumeOutcome(&engine.Resume{Tier: "Full", WorkflowID: "apex-1", Checkpoints: all, CheckpointsBefore: tc.before}).structured)
			var s struct {
				Checkpoints []string `json:"checkpoints"`
				Before      []string `json:"checkpoints_before_workflow"`
			}
			if err := json.Unmarshal(doc, &s); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Checkpoints, all[:maxResumeCheckpoints]) {
				t.Fatalf("checkpoints holds %d names, want the first %d", len(s.Checkpoints), maxResumeCheckpoints)
			}
			if !slices.Equal(s.Before, tc.want) {
				t.Errorf("%s = %v, want %v", beforeKey, s.Before, tc.want)
			}
		})
	}
}

// TestOpenTasksLeftOutSayWhereTheyAre: open tasks past one result were said to be left out,
// with no way to see them; the warning gives the one step that lists them all.
func TestOpenTasksLeftOutSayWhereTheyAre(t *testing.T) {
	var open []any
	for i := range 200 {
		open = append(open, fmt.Sprintf("t%d pending: %0300d", i, i))
	}
	s := map[string]any{"open_tasks": open}
	fitLists(s)
	want := fmt.Sprintf("open_tasks holds the first %d of 200; the others did not fit in one result. Run `cairn show` in your Bash tool for them all.", len(s["open_tasks"].([]any)))
	if w, _ := s["warnings"].([]any); !slices.Contains(w, any(want)) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}
