package engine_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// topicLines is the text of the topic file's lines, oldest first.
func (e *env) topicLines(t *testing.T) []string {
	t.Helper()
	m := memory.New(memory.Location{Dir: e.memoryDir()}, memory.Options{Now: e.clock.Now})
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Text)
	}
	return got
}

// saying reports whether each of got holds the text of want at its place.
func saying(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.Contains(got[i], want[i]) {
			return false
		}
	}
	return true
}

// Two moves write their lines and are killed before noting them written. The settling that
// recovers their lines from the journal stamps each with the journal's time, taken when the
// change committed; the move stamped its own after the commit, here a few seconds later. The
// lines are found written all the same, not added again after them.
func TestRecoveredLinesOfWrittenMovesAreNotAddedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	now := e.clock.Now()
	open := func() *engine.Engine {
		en, err := engine.Open(engine.Config{
			Getenv:  func(k string) string { return e.vars[k] },
			WorkDir: e.project,
			Now: func() time.Time { // every look at the clock a second later
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(time.Second)
				return now
			},
			SessionID: "s1", PID: 4242, Actor: "test", YAML: yamldoc.Codec{},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { en.Close() })
		return en
	}
	en := open()
	must(en.Start(engine.StartRequest{Type: "apex", Context: "killed moves"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 2
	st := must(store.Open(en.StateDir()))(t)
	defer st.Close()
	before := must(st.Read("l2-state"))(t)
	must(en.Transition(engine.TransitionRequest{To: "analyze"}))(t) // rev 3
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)    // rev 4
	if err := st.Write("l2-state", before); err != nil {            // neither noted its line written
		t.Fatal(err)
	}
	want := []string{"analyze completed, planning", "back from plan, analyzing", "analyze completed, planning"}
	if got := e.topicLines(t); !saying(got, want) {
		t.Fatalf("before the settling, topic lines = %q, want lines saying %q", got, want)
	}
	must(open().Stop(engine.StopInput{}))(t)
	if got := e.topicLines(t); !saying(got, want) {
		t.Errorf("topic lines = %q, want lines saying %q", got, want)
	}
}

// A loop back and forth (plan, back to analyze, plan again) writes the same position line
// twice, a real move each time. When the line between them is owed (L2 was unavailable for
// it), the second line is not taken for the first: the history keeps all three in order,
// and the last line of L2 is the latest position, not the owed line settled after it.
func TestSamePositionAgainAfterAnOwedLineIsItsOwnLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "loop"}))(t)
	e.clock.Add(time.Minute)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 2: "analyze completed, planning"
	unblock := holdLock(t, e.memoryDir(), ".cairn-memory.lock")  // a slow writer: L2 writes fail and are owed
	e.clock.Add(time.Minute)
	if res := must(en.Transition(engine.TransitionRequest{To: "analyze"}))(t); len(res.Warnings) == 0 { // rev 3, owed
		t.Fatal("the line was written although the memory lock is held")
	}
	unblock()
	e.clock.Add(time.Minute)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t) // rev 4: "analyze completed, planning" again
	e.clock.Add(time.Minute)
	must(e.open("s1").Stop(engine.StopInput{}))(t) // settles rev 3's line

	want := []string{"analyze completed, planning", "back from plan, analyzing", "analyze completed, planning"}
	if got := e.topicLines(t); !saying(got, want) {
		t.Errorf("topic lines = %q, want lines saying %q", e.topicLines(t), want)
	}
	m := memory.New(memory.Location{Dir: e.memoryDir()}, memory.Options{Now: e.clock.Now})
	if last, ok, err := m.LastPosition(); err != nil || !ok || !strings.Contains(last.Text, "analyze completed, planning") {
		t.Errorf("LastPosition = %q %v %v, want the position of rev 4 (planning)", last.Text, ok, err)
	}
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyze completed, planning") {
		t.Errorf("MEMORY.md does not show the latest position:\n%s", index)
	}
}

// Lines of two workflows, their moves made on clocks that disagree (a container's 10 minutes
// ahead of the host's): the workflow in the active slot is the newest whatever the stamps
// say, as no other can have moved since it started. Its move's line is shown in MEMORY.md and
// is the latest in the topic file, over the line of the workflow archived before it started.
func TestTheActiveWorkflowsLineIsNewestWhateverTheClocks(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "first")
	e.clock.Add(time.Minute)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	e.clock.Add(10 * time.Minute) // archived from the container, its clock ahead
	must(en.Archive("abandoned"))(t)
	e.clock.Add(-9 * time.Minute) // back on the host
	must(en.Start(engine.StartRequest{Type: "debug", Context: "second"}))(t)
	e.clock.Add(time.Minute)
	must(en.Transition(engine.TransitionRequest{To: "fix"}))(t)

	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "DEBUG workflow: troubleshoot completed") {
		t.Errorf("MEMORY.md does not show the active workflow's position:\n%s", index)
	}
	want := []string{"APEX workflow: analyze completed", "Abandoned APEX", "DEBUG workflow: troubleshoot completed"}
	if got := e.topicLines(t); !saying(got, want) {
		t.Errorf("topic lines = %q, want lines saying %q", got, want)
	}
	// The next move of the active workflow, still before the container's stamp, is shown too.
	e.clock.Add(time.Minute)
	must(en.Transition(engine.TransitionRequest{To: "troubleshoot"}))(t)
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "back from fix, troubleshooting") {
		t.Errorf("MEMORY.md does not show the active workflow's latest position:\n%s", index)
	}
}
