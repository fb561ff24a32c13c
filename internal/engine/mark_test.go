package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
)

// Two processes write L2 lines one after the other while the first waits for the mark's
// lock. Once the Stop hook has run, L2 must hold the second (last) position: never the first
// process's older line "restored" over it from a mark taken before it.
func TestMarkKeptLateIsWhatL2Holds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	slow := openWait("s1", 3*time.Second)
	must(slow.Start(engine.StartRequest{Type: "apex", Context: "marks"}))(t)

	unlock := holdLock(t, slow.StateDir(), ".lock-l2-mark")
	done := make(chan error, 1)
	go func() {
		_, err := slow.Transition(engine.TransitionRequest{To: "plan"}) // its mark waits for the lock
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(slow.StateDir(), ".lock-l2-mark"), done) {
		t.Fatalf("the transition did not wait for the mark's lock: %v", <-done)
	}
	must(openWait("s1", 50*time.Millisecond).Transition(engine.TransitionRequest{To: "analyze"}))(t)
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !strings.Contains(e.readMemory("MEMORY.md"), "analyzing") {
		t.Fatalf("after the Stop hook, MEMORY.md does not hold the last position:\n%s", e.readMemory("MEMORY.md"))
	}
}

// A Stop hook that runs after another process wrote a newer L2 line but before that process
// recorded its mark must not take the newer line for a foreign rewrite and put the old back.
func TestRestoreDoesNotUndoAWriteNotMarkedYet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 3*time.Second)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "marks"}))(t)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t) // L2 and its mark: planning

	// The agent's next write waits for the mark's lock, held here as a slow process would.
	unlock := holdLock(t, agent.StateDir(), ".lock-l2-mark")
	done := make(chan error, 1)
	go func() {
		_, err := agent.Transition(engine.TransitionRequest{To: "analyze"})
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(agent.StateDir(), ".lock-l2-mark"), done) {
		t.Fatalf("the transition did not wait for the mark's lock: %v", <-done)
	}
	hook := openWait("s1", 100*time.Millisecond)
	_, _ = hook.Stop(engine.StopInput{}) // meanwhile, a Stop hook
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !strings.Contains(e.readMemory("MEMORY.md"), "analyzing") {
		t.Fatalf("the newer line was undone:\n%s", e.readMemory("MEMORY.md"))
	}
}

// holdLock takes the lock file name in dir, as a slow process of Cairn's would hold it, until
// the returned func (or the test's end) releases it.
func holdLock(t *testing.T, dir, name string) (unlock func()) {
	t.Helper()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	release, err := d.Lock(name, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unlock = func() { once.Do(func() { release() }) }
	t.Cleanup(unlock)
	return unlock
}

// A background memory writer's rewrite of the topic file (here it drops Cairn's lines for a
// summary of its own) that the next move's L2 write meets is put back first, as the Stop hook
// puts it back before settling: written onto the rewrite, the move would mark it as Cairn's
// own, its summary standing in Cairn's data block as a line Cairn recorded, and the lines it
// dropped lost for good.
func TestMoveWritesOntoWhatCairnWroteNotARewrite(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	planning := "Active APEX workflow: analyze completed, planning “c”"
	if topic := e.readMemory(memory.TopicFile); !strings.Contains(topic, planning) {
		t.Fatalf("the move's line is not in the topic file:\n%s", topic)
	}
	rewrite := "---\nname: cairn-workflow\ndescription: where the work stands\nmetadata:\n  type: project\n---\n\n- The team ships OAuth today\n"
	if err := os.WriteFile(filepath.Join(e.memoryDir(), memory.TopicFile), []byte(rewrite), 0o600); err != nil {
		t.Fatal(err)
	}
	must(en.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	must(e.open("s1").Stop(engine.StopInput{}))(t)
	topic := e.readMemory(memory.TopicFile)
	if strings.Contains(topic, "The team ships OAuth today") || !strings.Contains(topic, planning) {
		t.Errorf("the topic file after the move and a Stop holds the rewrite's line, or lost Cairn's:\n%s", topic)
	}
}

// A restore that failed (here: a directory where the memory lock belongs) said "Cairn's auto-memory line
// not restored (...): Auto-memory unavailable — learnings will not persist: ...", the words of
// a learning's failure, as a line's failure no longer does. It says what failed.
func TestRestoreFailureSaysWhatFailed(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	index := filepath.Join(e.memoryDir(), memory.IndexFile)
	if err := os.WriteFile(index, []byte("- [Prefs](prefs.md) — tabs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(e.memoryDir(), ".cairn-memory.lock")
	os.Remove(lock)
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, w := e.open("s1").RestoreL2()
	if !strings.HasPrefix(w, "Cairn's auto-memory line not restored: reading .cairn-memory.lock: ") || !strings.Contains(w, ".cairn-memory.lock is a directory") || strings.Contains(w, "learnings") {
		t.Errorf("RestoreL2's warning: %q", w)
	}
}

// A restore that a memory file Cairn leaves as it is refuses (here MEMORY.md became a
// symbolic link) said the line was retried after the next turn, and no step: every retry
// fails until the person acts. It says the person's step, as a move's write does.
func TestRestoreRefusedByALinkSaysTheStep(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	index := filepath.Join(e.memoryDir(), memory.IndexFile)
	other := filepath.Join(e.home, "other.md")
	noErr(t, os.WriteFile(other, []byte("- [Prefs](prefs.md) — tabs\n"), 0o644))
	noErr(t, os.Remove(index))
	if err := os.Symlink(other, index); err != nil {
		t.Skip(err)
	}
	_, _, w := e.open("s1").RestoreL2()
	if strings.Contains(w, "retried") || !strings.HasSuffix(w, " for the user to replace the link with a copy of the file it leads to, and Cairn puts the line back after the next turn") {
		t.Errorf("RestoreL2's warning: %q", w)
	}
}

// A move whose L2 line waits for the mark's lock another Cairn process holds said, in the
// result the model reads, the lock's "try again once that process has finished": run again,
// the move would move the workflow once more. The line is owed and retried after the next turn,
// as said: the lock's retry is not.
func TestMoveWhoseLineWaitsForTheMarkSaysNoRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "marks"}))(t)
	holdLock(t, en.StateDir(), ".lock-l2-mark")
	res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if !containsAny(res.Warnings, "auto-memory line not written (Cairn retries after the next turn)") || containsAny(res.Warnings, "try again") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A replace whose line of the replaced workflow could be neither written (the memory
// directory is a file) nor kept to be retried (another process held l2-state's lock) told
// the model the lock's "try again once that process has finished": run again, the replace
// would replace the workflow just started. The line is not retried, and nothing says to.
func TestLineNotKeptSaysNoRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "old"}))(t)
	e.blockMemory(t)
	holdLock(t, en.StateDir(), ".lock-l2-state")
	res := must(en.Start(engine.StartRequest{Type: "apex", Context: "new", Replace: true}))(t)
	if !containsAny(res.Warnings, "nor could it be kept to be retried") || containsAny(res.Warnings, "try again") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
