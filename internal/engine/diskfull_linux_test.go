package engine_test

import (
	"os"
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
