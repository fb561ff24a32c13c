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
