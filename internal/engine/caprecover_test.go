package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A record an older Cairn let fill to exactly the 1 MiB cap, left with a task running, took
// no recovery whose times had more digits than the ones it replaced (a session starting past a
// whole second): every session start tried it again and was refused, and the model was told
// the task was open, to run the phase's task, and that recovery failed. Recovery records its
// times to the second, so it takes no more room than the record had. A recovery that must grow
// the record (a task whose output exists, marked done, gains a completed_at; a client whose
// pid has more digits becomes the owner) was refused the same way: the record leaves out
// what its journal keeps, its oldest artifact here, and says so (as one, not "its 1 oldest artifacts").
func TestRecoveryAtTheCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		at     time.Duration // the session start, past a whole second
		output string
		pid    int
		want   string
	}{
		{"whole second", 1, "", 4242, "task t1 was running with no output: back to pending, to run again (attempts 1)"},
		{"past a second", 123456789, "", 4242, "task t1 was running with no output: back to pending, to run again (attempts 1)"},
		{"output exists", 123456789, "out.txt", 4242, "task t1 was running and its output out.txt exists: marked done"},
		{"longer pid", 1, "", 4242000, "task t1 was running with no output: back to pending, to run again (attempts 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			first := e.openAs("s1", 4242)
			must(first.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			if tc.output != "" {
				if err := os.WriteFile(filepath.Join(e.project, tc.output), []byte("done"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			must(first.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Output: tc.output}))(t)
			editSlot(t, first, func(cur []byte) ([]byte, error) {
				var rec map[string]any
				if err := json.Unmarshal(cur, &rec); err != nil {
					return nil, err
				}
				var arts []string
				for i := range 1000 {
					arts = append(arts, fmt.Sprintf("out/%04d/%s", i, strings.Repeat("a", 1000)))
				}
				rec["artifacts"] = arts
				rec["revision"] = rec["revision"].(float64) + 1
				b, _ := json.Marshal(rec)
				arts[len(arts)-1] += strings.Repeat("a", 1<<20-len(b)) // at the cap
				return json.Marshal(rec)
			})
			e.clock.Add(time.Hour + tc.at)
			r := e.openAs("s2", tc.pid).Resume(engine.ResumeOptions{Apply: true})
			for _, w := range r.Warnings {
				if strings.Contains(w, "recovering") {
					t.Fatalf("warning %q", w)
				}
			}
			if !strings.Contains(strings.Join(r.Notices, "\n"), tc.want) {
				t.Fatalf("notices %q, want %q", r.Notices, tc.want)
			}
			grew := tc.output != "" || tc.pid != 4242
			if said := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "its oldest artifact, which its journal keeps") }); said != grew {
				t.Errorf("warnings %q: the artifacts left out said %t, want %t", r.Warnings, said, grew)
			}
		})
	}
}
