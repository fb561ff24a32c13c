package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// An L2 line another process comes to owe while a Stop hook settles the lines owed before it
// is kept owed, not dropped when the settling records what it could not write.
func TestOwedLineAddedWhileSettlingIsKept(t *testing.T) {
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "owed lines"}))(t)

	// Hold Cairn's memory lock, as a slow writer would: L2 writes fail and are owed.
	mem := e.memoryDir()
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := holdLock(t, mem, ".cairn-memory.lock")
	if res := must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t); len(res.Warnings) == 0 {
		t.Fatal("the L2 line was written although the memory lock is held")
	}

	// A Stop hook settles the owed line; it waits for the lock a while, and meanwhile the
	// agent makes another move whose line is owed too.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = openWait("s1", 1500*time.Millisecond).Stop(engine.StopInput{})
	}()
	time.Sleep(300 * time.Millisecond)
	must(agent.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	<-done
	unlock()

	out := must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !slices.ContainsFunc(out.Wrote, func(l string) bool { return strings.Contains(l, "analyzing") }) {
		t.Fatalf("the line owed for the move back to analyze was lost; settled now: %q", out.Wrote)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, "MEMORY.md")); !strings.Contains(string(b), "analyzing") {
		t.Errorf("MEMORY.md does not hold the analyze line:\n%s", b)
	}
}
