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
// taking the workflow (a change does that).
func TestClearedOwnersClientKeepsItsHeartbeat(t *testing.T) {
	for _, cleared := range []bool{false, true} {
		t.Run(map[bool]string{false: "no clear", true: "after clear"}[cleared], func(t *testing.T) {
			e := newEnv(t)
			client := os.Getpid() // a running client
			must(e.openAs("sess-aaaa-1", client).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			must(0, e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-aaaa-1", PID: client}))(t)
			session := "sess-aaaa-1"
			if cleared {
				session = "sess-bbbb-2"
				must(0, e.openAs(session, client).RecordSession(engine.Session{SessionID: session, PID: client}))(t)
			}
			for range 5 {
				e.clock.Add(3 * time.Minute)
				must(e.openAs(session, client).Stop(engine.StopInput{SessionID: session}))(t)
			}
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
		})
	}
}
