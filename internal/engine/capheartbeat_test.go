package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A record an older Cairn let fill to exactly the 1 MiB cap took no heartbeat whose time had
// more digits than the one before (a change at a whole second, turns ending between
// seconds): every Stop tried it again, wrote nothing, and logged a refusal naming steps for
// the agent, while the owner's heartbeat went stale for the sessions that read it. A
// heartbeat is recorded to the second, all it needs (it is refreshed every two minutes), so
// it takes no more room than the one before. An owner an older Cairn wrote, without the
// host and client start a heartbeat records, was refused the same way. The same client keeps
// its owner as it was, with a fresh time, and leaves out nothing (it left out an artifact for
// the host it added). Another client of the session, whose pid tells it from this one, leaves
// out what its journal keeps, its oldest artifact here, and says so (as one, not "its 1 oldest
// artifacts"); when that is not enough, its pid goes, and no artifact goes for nothing (all
// did, and the pid too).
func TestHeartbeatAtTheCapIsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		started time.Duration // the owner's time, past a whole second
		older   bool          // an owner without host and client start
		tasks   bool          // filled by tasks, which no write that must land leaves out
		// exited: the owner's client exited, and its session goes on in a client whose pid
		// has more digits (claude --continue)
		exited bool
	}{{0, false, false, false}, {123456789, false, false, false}, {0, true, false, false}, {0, true, true, false}, {0, true, false, true}, {0, true, true, true}} {
		t.Run(fmt.Sprint(tc.started, tc.older, tc.tasks, tc.exited), func(t *testing.T) {
			client := os.Getpid()
			e := newEnv(t)
			e.clock.Add(tc.started)
			en := e.openAs("sess-aaaa-1", client)
			must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			editSlot(t, en, func(cur []byte) ([]byte, error) {
				var rec map[string]any
				if err := json.Unmarshal(cur, &rec); err != nil {
					return nil, err
				}
				if tc.older {
					delete(rec["owner"].(map[string]any), "host")
					delete(rec["owner"].(map[string]any), "client_start")
				}
				if tc.exited {
					gone := exec.Command("true")
					if err := gone.Run(); err != nil {
						return nil, err
					}
					rec["owner"].(map[string]any)["pid"] = gone.Process.Pid
					client = 99999999
				}
				rec["revision"] = rec["revision"].(float64) + 1
				if tc.tasks {
					var tasks []map[string]any
					for i := range 900 {
						tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%04d", i), "status": "running", "attempts": 1, "note": strings.Repeat("n", 1000)})
					}
					rec["tasks"] = tasks
					rec["artifacts"] = []string{"out/kept"}
					b, _ := json.Marshal(rec)
					tasks[len(tasks)-1]["note"] = strings.Repeat("n", 1000+1<<20-len(b)) // at the cap
					return json.Marshal(rec)
				}
				var arts []string
				for i := range 1000 {
					arts = append(arts, fmt.Sprintf("out/%04d/%s", i, strings.Repeat("a", 1000)))
				}
				rec["artifacts"] = arts
				b, _ := json.Marshal(rec)
				arts[len(arts)-1] += strings.Repeat("a", 1<<20-len(b)) // at the cap
				return json.Marshal(rec)
			})
			for turn := range 2 {
				e.clock.Add(3*time.Minute + 1234567)
				out := must(e.openAs("sess-aaaa-1", client).Stop(engine.StopInput{SessionID: "sess-aaaa-1"}))(t)
				if !out.Heartbeat || out.HeartbeatErr != nil {
					t.Fatalf("turn %d: heartbeat %t, %v", turn, out.Heartbeat, out.HeartbeatErr)
				}
				if said := strings.Contains(out.SystemMessage, "its oldest artifact, which its journal keeps"); said != (tc.exited && !tc.tasks && turn == 0) {
					t.Errorf("turn %d: system message %q: the artifacts left out said %t", turn, out.SystemMessage, said)
				}
			}
			_, rec := storedRecord(t, en)
			if arts, _ := rec["artifacts"].([]any); len(arts) == 0 || (tc.tasks && arts[0] != "out/kept") {
				t.Errorf("artifacts %v", arts)
			}
			if pid, _ := rec["owner"].(map[string]any)["pid"].(float64); int(pid) != client && !tc.tasks {
				t.Errorf("owner's pid %v, want %d", pid, client)
			}
		})
	}
}
