package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A workflow past its TTL (no change for 30m) whose owner's client runs and keeps ending turns
// (its heartbeat a minute old): a session started in a second terminal archived it as
// expired and was told there was nothing to resume, so its model started another workflow
// while the owner's went on working in the one archived under it. The read beside the live
// owner now leaves it, as the owner's own reads do, and that session is told of the owner;
// once the owner's client has left its session (/clear) and the owner has gone quiet, the read
// expires it. (Quiet alone, its client still in its session, is one long turn: still live.)
// Its step, though, was to call expire_ttl: it is now to ask the user which session goes on.
func TestLiveOwnersWorkflowNotExpiredBesideIt(t *testing.T) {
	t.Parallel()
	client := os.Getpid() // a running client
	e := newEnv(t)
	must(e.openAs("sess-aaaa-1", client).Start(engine.StartRequest{Type: "apex", Context: "c", TTL: "30m"}))(t)
	must(0, e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-aaaa-1", PID: client}))(t)
	for range 10 { // turns ending every three minutes, the workflow unchanged
		e.clock.Add(3 * time.Minute)
		must(e.openAs("sess-aaaa-1", client).Stop(engine.StopInput{SessionID: "sess-aaaa-1"}))(t)
	}
	e.clock.Add(time.Minute)
	res := e.openAs("sess-bbbb-2", 4243).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID == "" || !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session") {
		t.Errorf("beside the live owner: workflow %q, warnings %q, report:\n%s", res.WorkflowID, res.Warnings, res.Report)
	}
	// Its step was to call expire_ttl, which archives the workflow the owner works in.
	if want := "Ask the user which session goes on with this workflow (another live session changed it too) before continuing phase analyze."; res.Next != want {
		t.Errorf("beside the live owner: next step %q, want %q", res.Next, want)
	}
	must(0, e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-cccc-3", PID: client, Source: "clear"}))(t)
	e.clock.Add(10 * time.Minute) // the owner quiet past the live window
	res = e.openAs("sess-bbbb-2", 4243).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID != "" || !strings.Contains(res.SystemMessage, "expired after 30m without a change and was archived") {
		t.Errorf("after the owner went quiet: workflow %q, told %q", res.WorkflowID, res.SystemMessage)
	}
}

// expire_ttl, called beside the live owner of a workflow past its TTL, archives it as asked,
// and says so without a word of the owner, whose client goes on working in it; a start with
// replace says it. It now says it too.
func TestExpireTTLBesideLiveOwnerSaysSo(t *testing.T) {
	t.Parallel()
	client := os.Getpid() // a running client
	e := newEnv(t)
	must(e.openAs("sess-aaaa-1", client).Start(engine.StartRequest{Type: "apex", Context: "c", TTL: "30m"}))(t)
	must(0, e.openAs("sess-aaaa-1", client).RecordSession(engine.Session{SessionID: "sess-aaaa-1", PID: client}))(t)
	for range 11 {
		e.clock.Add(3 * time.Minute)
		must(e.openAs("sess-aaaa-1", client).Stop(engine.StopInput{SessionID: "sess-aaaa-1"}))(t)
	}
	res := must(e.openAs("sess-bbbb-2", 4243).ExpireTTL(false))(t)
	if !res.Changed || !strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session was working in") {
		t.Errorf("expire_ttl beside the live owner: %+v", res)
	}
}
