package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// Two processes write L2 lines one after the other; the first records its mark of L2 last.
// The mark must hold what L2 holds then (the second line), or the next Stop hook "restores"
// the first process's older line over the newer one.
func TestMarkKeptLateIsWhatL2Holds(t *testing.T) {
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine {
		en, err := engine.Open(engine.Config{Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project,
			Now: e.clock.Now, SessionID: session, PID: 4242, Actor: "test", YAML: yamldoc.Codec{}, LockWait: wait})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { en.Close() })
		return en
	}
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
	if !strings.Contains(index(), "analyzing") {
		t.Fatalf("MEMORY.md does not hold the last line:\n%s", index())
	}
	must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !strings.Contains(index(), "analyzing") {
		t.Fatalf("the Stop hook put an older line back over the last one:\n%s", index())
	}
}
