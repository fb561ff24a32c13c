package engine_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// A Stop hook works out the line of a move whose L2 write was lost (rev 3, "back from plan,
// analyzing") and waits for the mark's lock; meanwhile the agent moves on (rev 4, planning)
// and records that revision. The hook must not then write its older line over the newer
// position: it decides what to write under the lock, from the state as it is then.
func TestSettlingWritesNoLineOlderThanOneRecordedMeanwhile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "overlapping writers"}))(t)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 2: planning, recorded

	// Rev 3 commits to L1, and its process dies before its L2 write (the write is kept from
	// L2 by the mark's lock, and l2-state put back as it was): l2-state stays at rev 2.
	st := must(store.Open(agent.StateDir()))(t)
	before := must(st.Read("l2-state"))(t)
	unlock := holdLock(t, agent.StateDir(), ".lock-l2-mark")
	must(agent.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	unlock()
	if err := st.Write("l2-state", before); err != nil {
		t.Fatal(err)
	}
	if index := e.readMemory("MEMORY.md"); strings.Contains(index, "analyzing") {
		t.Fatalf("rev 3's line was written:\n%s", index)
	}
	var s struct{ Revision int64 }
	if err := json.Unmarshal(before, &s); err != nil || s.Revision != 2 {
		t.Fatalf("l2-state before the lost write = %s (%v), want revision 2", before, err)
	}

	unlock = holdLock(t, agent.StateDir(), ".lock-l2-mark")
	done := make(chan error, 1)
	go func() {
		_, err := openWait("s1", 3*time.Second).Stop(engine.StopInput{}) // owes rev 3's line, waits
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(agent.StateDir(), ".lock-l2-mark"), done) {
		t.Fatalf("the Stop hook did not wait for the mark's lock: %v", <-done)
	}
	// The agent's next move (rev 4) records its revision; its line, not written while the
	// lock is held, is owed.
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t)
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if index := e.readMemory("MEMORY.md"); strings.Contains(index, "analyzing") || !strings.Contains(index, "analyze completed, planning") {
		t.Fatalf("after the Stop hook, MEMORY.md does not hold the last position (planning):\n%s", index)
	}
}

// A move (rev 3, "back from plan, analyzing") waits for the mark's lock to write its line;
// meanwhile the next move (rev 4, planning) notes its revision. The older move must then
// write nothing: its line would stand in MEMORY.md over the newer position.
func TestMoveWritesNoLineOlderThanOneNotedMeanwhile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "overlapping writers"}))(t)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 2: planning

	slow := openWait("s1", 3*time.Second)
	unlock := holdLock(t, slow.StateDir(), ".lock-l2-mark")
	done := make(chan error, 1)
	go func() {
		_, err := slow.Transition(engine.TransitionRequest{To: "analyze"}) // rev 3, its line waits
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(slow.StateDir(), ".lock-l2-mark"), done) {
		t.Fatalf("the move did not wait for the mark's lock: %v", <-done)
	}
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 4: its line is owed
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if index := e.readMemory("MEMORY.md"); strings.Contains(index, "analyzing") {
		t.Fatalf("the older move's line was written after the newer move noted its revision:\n%s", index)
	}
	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyze completed, planning") {
		t.Fatalf("after the Stop hook, MEMORY.md does not hold the last position (planning):\n%s", index)
	}
	// The older move's line is not lost: the topic file keeps it in its history, before the
	// newer line.
	topic := e.readMemory("cairn-workflow.md")
	if older, newer := strings.Index(topic, "analyzing"), strings.LastIndex(topic, "planning"); older < 0 || newer < older {
		t.Errorf("the topic file does not hold the older move's line before the newer one:\n%s", topic)
	}
}
