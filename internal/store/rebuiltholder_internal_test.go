package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// A read answered from the journal because a stopped process holds the workflow lock says who
// holds it and how to resume it: before, it said only that "another process" held it.
func TestRebuiltNoticeNamesAStoppedHolder(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := []byte(`{"version":"2.0","workflow_id":"wf-1","type":"apex","state":"plan","status":"active","revision":1}`)
	if _, err := s.UpdateWorkflow(func([]byte) ([]byte, Event, error) {
		return rec, Event{Kind: "transition", Detail: "to plan"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, WorkflowFile)); err != nil {
		t.Fatal(err)
	}
	held := &durable.LockTimeoutError{Path: filepath.Join(dir, ".lock-workflow"), Stopped: true,
		Holder: &durable.Holder{PID: 4242, Command: "cairn-hook", Since: time.Now()}}
	w, err := s.rebuildInMemory(held)
	if err != nil || len(w.Notices) != 1 {
		t.Fatalf("read: %+v %v", w, err)
	}
	if m := w.Notices[0].Message; !strings.Contains(m, "pid 4242 (cairn-hook, stopped)") || !strings.Contains(m, "kill -CONT 4242") {
		t.Errorf("notice %q: does not name the stopped holder and its resume step", m)
	}
}
