package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A record an older Cairn let fill to exactly the 1 MiB cap, left with a task running, took
// no recovery whose times had more digits than the ones it replaced (a session starting past a
// whole second): every session start tried it again and was refused, and the model was told
// the task was open, to run the phase's task, and that recovery failed. Recovery records its
// times to the second, so it takes no more room than the record had.
func TestRecoveryAtTheCap(t *testing.T) {
	for _, at := range []time.Duration{1, 123456789} { // the session start, past a whole second
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			e := newEnv(t)
			first := e.openAs("s1", 4242)
			must(first.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(first.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
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
			e.clock.Add(time.Hour + at)
			r := e.openAs("s2", 4242).Resume(engine.ResumeOptions{Apply: true})
			for _, w := range r.Warnings {
				if strings.Contains(w, "recovering") {
					t.Fatalf("warning %q", w)
				}
			}
			want := "task t1 was running with no output: back to pending, to run again (attempts 1)"
			if !strings.Contains(strings.Join(r.Notices, "\n"), want) {
				t.Fatalf("notices %q, want %q", r.Notices, want)
			}
		})
	}
}
