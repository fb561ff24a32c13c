package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A learning refused by a full disk said "Auto-memory unavailable — learnings will not persist:
// writing ...: no space left on device", which reads as for good and gives no step: it says
// the disk is full and the step, and once there is space the same call records it.
func TestRecordLearningOnAFullDisk(t *testing.T) {
	e := newEnv(t)
	durabletest.Mount(t, "tmpfs", e.home, "tmpfs", 0, "size=256k,mode=0700", false)
	en := e.open("s1")
	must(en.RecordLearning(engine.LearningRequest{Title: "first", Body: "b"}))(t)
	filler := durabletest.FillDisk(t, e.home)
	l := engine.LearningRequest{Title: "second", Body: strings.Repeat("a line of the body, long enough to need a page of its own. ", 8) + "\nsecond line"}
	_, err := en.RecordLearning(l)
	if err == nil {
		t.Fatal("a learning was recorded on a full disk")
	}
	if msg := err.Error(); !strings.Contains(msg, "no space left") || !strings.Contains(msg, "the disk is full") || !strings.Contains(msg, "call record_learning again") {
		t.Errorf("refusal %q: want what failed and the step", msg)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	must(en.RecordLearning(l))(t)
}

// A workflow's memory line refused by a full disk said "auto-memory line not written (Cairn
// retries after the next turn): Auto-memory unavailable — learnings will not persist: ...":
// no learning failed, and once there is space they persist. With the state directory full
// too, it said "nor could it be kept to be retried", and the Stop after space was freed wrote
// it all the same, from the journal. It says the line was not written, the disk full, and
// that Cairn retries; the Stop after space is freed writes it.
func TestWorkflowLineOnAFullDisk(t *testing.T) {
	for _, stateFull := range []bool{false, true} {
		e := newEnv(t)
		full := []string{e.memoryDir()}
		if stateFull {
			full = append(full, filepath.Join(e.project, ".claude"))
		}
		for _, d := range full {
			noErr(t, os.MkdirAll(d, 0o700))
			durabletest.Mount(t, "tmpfs", d, "tmpfs", 0, "size=256k,mode=0700", false)
		}
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "full memory"}))(t)
		var fillers []string
		for _, d := range full {
			fillers = append(fillers, durabletest.FillDisk(t, d))
		}
		res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		w := strings.Join(res.Warnings, "\n")
		if !strings.Contains(w, "auto-memory line not written") || strings.Contains(w, "learnings") || strings.Contains(w, "nor could it be kept") ||
			!strings.Contains(w, "the disk is full") || !strings.Contains(w, "Cairn retries after the next turn") {
			t.Errorf("state directory full %v: warnings %q: want the line not written, the disk full and the retry, nothing of learnings", stateFull, res.Warnings)
		}
		for _, f := range fillers {
			noErr(t, os.Remove(f))
		}
		if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "planning") {
			t.Errorf("state directory full %v: stop wrote %q once there is space; want the line owed since the move to plan", stateFull, out.Wrote)
		}
	}
}
