package engine_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// One client kept open for days on a project, /clear at every task: its session record's
// Replaced list is bounded, so the session that owns the workflow, recorded without a pid
// (the agent's cairn in its Bash tool without a live CLAUDE_PID), falls off it. Nothing a
// report needs goes with it: the client's first turn end after the owner's last change stamps
// the client's pid on the owner, which then says whose it is. Many /clears on, the client's
// own session is told of no other, and a second terminal is still told of the client.
func TestLongLivedClientReplacedListLosesNothing(t *testing.T) {
	t.Parallel()
	client := os.Getpid() // a running client
	e := newEnv(t)
	must(e.openAs("sess-0000", 0).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(0, e.openAs("sess-0000", client).RecordSession(engine.Session{SessionID: "sess-0000", PID: client}))(t)
	session := "sess-0000"
	for i := 1; i <= 40; i++ { // a /clear, then a turn, every few minutes
		session = fmt.Sprintf("sess-%04d", i)
		must(0, e.openAs(session, client).RecordSession(engine.Session{SessionID: session, PID: client}))(t)
		e.clock.Add(3 * time.Minute)
		must(e.openAs(session, client).Stop(engine.StopInput{SessionID: session}))(t)
	}
	if w := e.openAs(session, client).Resume(engine.ResumeOptions{}).Warnings; strings.Contains(strings.Join(w, "\n"), "Another live session") {
		t.Errorf("the client's own session is warned of another: %q", w)
	}
	if w := e.openAs("sess-second", 4243).Resume(engine.ResumeOptions{}).Warnings; !strings.Contains(strings.Join(w, "\n"), "Another live session") {
		t.Errorf("a second terminal is not warned of the client working on the workflow: %q", w)
	}
}
