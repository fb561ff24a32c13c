package engine_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// The owner's session ends with /clear, and the same client goes on in a new session, its
// turns ending every few minutes. Its Stop refreshed no heartbeat (the owner is another
// session), so ten minutes on, a session in a second terminal was not warned of the client
// working on the workflow, as it is when the owner's session goes on without /clear, and took
// it over silently. The client's new session keeps the replaced owner's heartbeat, without
// taking the workflow (a change does that). An owner recorded without a pid (the agent's
// cairn in its Bash tool without a live CLAUDE_PID) is the same: the client's session record
// names its session as one it ran before /clear. Such an owner was taken as ended by every
// engine, a second terminal's included, the moment the client /cleared, and its heartbeat was
// never kept.
func TestClearedOwnersClientKeepsItsHeartbeat(t *testing.T) {
	t.Parallel()
	client := os.Getpid() // a running client
	for _, c := range []struct {
		name     string
		cleared  bool
		ownerPID int // the pid the owner's change recorded
	}{
		{"no clear", false, client},
		{"after clear", true, client},
		{"no clear, owner without a pid", false, 0},
		{"after clear, owner without a pid", true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			must(e.openAs("sess-aaaa-1", c.ownerPID).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(0, e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-aaaa-1", PID: client}))(t)
			session := "sess-aaaa-1"
			if c.cleared {
				session = "sess-bbbb-2"
				must(0, e.openAs(session, client).RecordSession(engine.Session{SessionID: session, PID: client}))(t)
			}
			second := func(when string) {
				t.Helper()
				res := e.openAs("sess-cccc-3", 4243).Resume(engine.ResumeOptions{})
				if !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session") {
					t.Errorf("%s, a second terminal is not warned of the client working on the workflow: warnings %q", when, res.Warnings)
				}
			}
			e.clock.Add(time.Minute)
			second("before the client's next turn ends")
			for range 5 {
				e.clock.Add(3 * time.Minute)
				must(e.openAs(session, client).Stop(engine.StopInput{SessionID: session}))(t)
			}
			second("fifteen minutes on")
			res := e.openAs("sess-cccc-3", 4243).Resume(engine.ResumeOptions{Apply: true})
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session") {
				t.Errorf("a second terminal is not warned of the client working on the workflow: warnings %q", res.Warnings)
			}
			var r struct {
				Owner struct {
					SessionID string `json:"session_id"`
				}
			}
			if err := json.Unmarshal(e.openAs("sess-cccc-3", 4243).Resume(engine.ResumeOptions{}).Workflow, &r); err != nil {
				t.Fatal(err)
			}
			if r.Owner.SessionID != "sess-aaaa-1" {
				t.Errorf("owner %+v, want the session that changed the workflow", r.Owner)
			}
			// The client's own session is told of no other.
			if w := e.openAs(session, client).Resume(engine.ResumeOptions{}).Warnings; strings.Contains(strings.Join(w, "\n"), "Another live session") {
				t.Errorf("the client's own session is warned of another: %q", w)
			}
		})
	}
}
