package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
)

// Two processes write L2 lines one after the other while the first waits for the mark's
// lock. Once the Stop hook has run, L2 must hold the second (last) position: never the first
// process's older line "restored" over it from a mark taken before it.
func TestMarkKeptLateIsWhatL2Holds(t *testing.T) {
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	slow := openWait("s1", 3*time.Second)
	must(slow.Start(engine.StartRequest{Type: "apex", Context: "marks"}))(t)

	d, err := durable.OpenDir(slow.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(".lock-l2-mark", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := slow.Transition(engine.TransitionRequest{To: "plan"}) // its mark waits for the lock
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	must(openWait("s1", 50*time.Millisecond).Transition(engine.TransitionRequest{To: "analyze"}))(t)
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	index := func() string {
		b, _ := os.ReadFile(filepath.Join(e.memoryDir(), "MEMORY.md"))
		return string(b)
	}
	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !strings.Contains(index(), "analyzing") {
		t.Fatalf("after the Stop hook, MEMORY.md does not hold the last position:\n%s", index())
	}
}

// A Stop hook that runs after another process wrote a newer L2 line but before that process
// recorded its mark must not take the newer line for a foreign rewrite and put the old back.
func TestRestoreDoesNotUndoAWriteNotMarkedYet(t *testing.T) {
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 3*time.Second)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "marks"}))(t)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t) // L2 and its mark: planning

	// The agent's next write waits for the mark's lock, held here as a slow process would.
	d, err := durable.OpenDir(agent.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(".lock-l2-mark", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := agent.Transition(engine.TransitionRequest{To: "analyze"})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	hook := openWait("s1", 100*time.Millisecond)
	_, _ = hook.Stop(engine.StopInput{}) // meanwhile, a Stop hook
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	index := func() string {
		b, _ := os.ReadFile(filepath.Join(e.memoryDir(), "MEMORY.md"))
		return string(b)
	}
	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !strings.Contains(index(), "analyzing") {
		t.Fatalf("the newer line was undone:\n%s", index())
	}
}
