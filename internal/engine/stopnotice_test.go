package engine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestStopHeartbeatSaysWhatItsReadRepaired: a change recorded in the journal whose snapshot
// replace was cut short is read without the lock (the journal is the commit point) and put
// into the snapshot by the next locked write. When that write is the owner's heartbeat at the
// end of a turn, what it did is said as any other write says it: the snapshot brought up to
// date, or the revisions a damaged journal line cut off, which no later read says again.
func TestStopHeartbeatSaysWhatItsReadRepaired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage bool // the journal line of the move is damaged, breaking its chain
		want   string
	}{
		{"rolled forward", false, "the snapshot was brought up to date"},
		{"chain broken", true, "cannot be rebuilt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cutShort(t, e, tc.damage)
			e.clock.Add(5 * time.Minute)
			out, err := e.open("s1").Stop(engine.StopInput{SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Heartbeat || strings.Count(out.SystemMessage, tc.want) != 1 {
				t.Errorf("heartbeat %v, system message %q; want the heartbeat recorded and the message to say %q once", out.Heartbeat, out.SystemMessage, tc.want)
			}
		})
	}
}

// TestSessionStartSaysABrokenChainAheadOfTheSnapshot: a journal ahead of the snapshot whose
// chain a damaged line breaks cannot give the newest state; the session start's read says
// which revisions are lost and goes on from the newest state there is, as a locked read does.
// Before, the read without the lock showed the older snapshot as if it were the newest, and
// said nothing.
func TestSessionStartSaysABrokenChainAheadOfTheSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cutShort(t, e, true)
	res := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(res.SystemMessage, "cannot be rebuilt") {
		t.Errorf("the session start's system message is %q; want it to say the revisions that cannot be rebuilt (notices %q)", res.SystemMessage, res.Notices)
	}
}

// cutShort starts workflow apex-cut as session s1, moves it to plan and adds a task (revision
// 3), then puts the start's snapshot back, as a crash before two snapshot replaces leaves it;
// with damage, the move's journal line is damaged too, breaking the journal's chain.
func cutShort(t *testing.T, e *env, damage bool) {
	t.Helper()
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "cut short", WorkflowID: "apex-cut"}))(t)
	snapshot := filepath.Join(en.StateDir(), store.WorkflowFile)
	started := must(os.ReadFile(snapshot))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "pending", Note: "after the move"}))(t)
	if err := os.WriteFile(snapshot, started, 0o600); err != nil {
		t.Fatal(err)
	}
	if damage {
		journal := filepath.Join(en.StateDir(), "journal", "apex-cut.jsonl")
		lines := bytes.SplitAfter(must(os.ReadFile(journal))(t), []byte("\n"))
		lines[1] = []byte("{\"damaged\n")
		if err := os.WriteFile(journal, bytes.Join(lines, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEventLeavesABrokenChainToAHookThatSaysIt: an event hook's engine (NoRepair: a task
// event prints nothing, StopFailure's output is discarded) that meets a journal whose chain a
// damaged line breaks, ahead of the snapshot, changes nothing: its change would go on past
// the break, after which no read says which revisions were lost. The next session start says
// it. Before, the task's record or the failed turn's heartbeat went on past the break, told
// only on the event's stderr, and the move after the break was lost without a word.
func TestEventLeavesABrokenChainToAHookThatSaysIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		event func(*engine.Engine) error
	}{
		{"task event", func(en *engine.Engine) error {
			_, err := en.RecordClaudeTask(engine.ClaudeTask{SessionID: "s1", TaskID: "1", Subject: "write the plan"}, false)
			return err
		}},
		{"StopFailure", func(en *engine.Engine) error {
			out, err := en.Stop(engine.StopInput{SessionID: "s1", NoAsk: true})
			if err == nil && out.HeartbeatErr != nil {
				err = out.HeartbeatErr
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cutShort(t, e, true)
			e.clock.Add(5 * time.Minute) // the owner's heartbeat is due
			err := tc.event(e.openWith("s1", 4242, func(c *engine.Config) { c.NoRepair = true }))
			if !errors.Is(err, store.ErrRepairLeft) {
				t.Errorf("the event's change: %v; want it left for a hook that says the repair (store.ErrRepairLeft)", err)
			}
			res := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if !strings.Contains(res.SystemMessage, "cannot be rebuilt") || !strings.Contains(res.Report, "cannot be rebuilt") {
				t.Errorf("the next session start does not say the revisions lost: system message %q, report:\n%s", res.SystemMessage, res.Report)
			}
		})
	}
}

// TestABrokenChainIsSaidOnce: the read that says which revisions a broken journal chain lost
// (a session start's report, a turn's end) ends the break, so the next read does not say it
// again. Before, every session start and every Stop of a session that owns no heartbeat
// said it again, until some change was made.
func TestABrokenChainIsSaidOnce(t *testing.T) {
	t.Parallel()
	stop := func(en *engine.Engine) string {
		return must(en.Stop(engine.StopInput{SessionID: "s2"}))(t).SystemMessage
	}
	start := func(en *engine.Engine) string {
		return en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}).SystemMessage
	}
	for _, tc := range []struct {
		name        string
		first, then func(*engine.Engine) string
	}{
		{"session start, then Stop", start, stop},
		{"session start, then session start", start, start},
		{"Stop, then Stop", stop, stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cutShort(t, e, true)
			if msg := tc.first(e.openAs("s2", 4343)); !strings.Contains(msg, "cannot be rebuilt") {
				t.Fatalf("the first read says %q; want it to say the revisions that cannot be rebuilt", msg)
			}
			if msg := tc.then(e.openAs("s2", 4343)); strings.Contains(msg, "cannot be rebuilt") {
				t.Errorf("the next read says it again: %q", msg)
			}
			res := e.openAs("s2", 4343).Resume(engine.ResumeOptions{})
			if res.Phase != "analyze" || len(res.OpenTasks) != 0 {
				t.Errorf("after the break the workflow is in phase %q with open tasks %q; want it to go on from the start's revision (analyze, none)", res.Phase, res.OpenTasks)
			}
		})
	}
}

// TestCompactAnchorLeavesABrokenChainToTheSessionStart: the PreCompact hook's engine
// (NoRepair) meeting a journal whose chain a damaged line breaks, ahead of the snapshot, gives
// no anchor, as for any repair it leaves: the session start after the compaction says which
// revisions are lost and where the workflow goes on. Before, the anchor named the snapshot's
// older phase as the position to keep, and said nothing of the changes lost after it; a
// journal only ahead of the snapshot still gives the anchor of its newest state.
func TestCompactAnchorLeavesABrokenChainToTheSessionStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage bool
		anchor string // "" for none
	}{
		{"rolled forward", false, "phase plan"},
		{"chain broken", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cutShort(t, e, tc.damage)
			anchor, problem := e.openWith("s1", 4242, func(c *engine.Config) { c.NoRepair = true }).CompactAnchor()
			if tc.anchor == "" && (anchor != "" || problem == "") || tc.anchor != "" && !strings.Contains(anchor, tc.anchor) {
				t.Errorf("anchor %q, problem %q; want an anchor with %q (none: %q)", anchor, problem, tc.anchor, tc.anchor)
			}
			if !tc.damage {
				return
			}
			res := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Compaction: true})
			if !strings.Contains(res.SystemMessage, "cannot be rebuilt") {
				t.Errorf("the session start after the compaction does not say the revisions lost: %q", res.SystemMessage)
			}
		})
	}
}

// TestStopTellsTheModelOfRevisionsLost: the Stop that finds first that a damaged journal line
// cut off revisions the session made (and ends the break, so no later read says it) tells the
// model too, which still holds those changes as made: it is asked to continue, once, with the
// revisions lost and resume_check. Before, only the user's systemMessage said it, and the
// model went on from a position the workflow no longer had. A continuation's Stop, and an
// event hook's (NoAsk), never ask.
func TestStopTellsTheModelOfRevisionsLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage bool
		in     engine.StopInput
		block  bool
	}{
		{"chain broken", true, engine.StopInput{SessionID: "s1"}, true},
		{"chain broken, heartbeat due", true, engine.StopInput{SessionID: "s1"}, true},
		{"continuation", true, engine.StopInput{SessionID: "s1", StopHookActive: true}, false},
		{"rolled forward", false, engine.StopInput{SessionID: "s1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cutShort(t, e, tc.damage)
			if strings.Contains(tc.name, "heartbeat") {
				e.clock.Add(5 * time.Minute)
			}
			out := must(e.open("s1").Stop(tc.in))(t)
			if out.Block != tc.block || tc.block && (!strings.Contains(out.Reason, "cannot be rebuilt") || !strings.Contains(out.Reason, engine.ToolPrefix+"resume_check")) {
				t.Errorf("block %v, reason %q; want block %v with the revisions lost and resume_check", out.Block, out.Reason, tc.block)
			}
			if again := must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t); again.Block {
				t.Errorf("the next Stop asks again: %q", again.Reason)
			}
		})
	}
}
