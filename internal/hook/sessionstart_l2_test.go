package hook_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/memory"
)

// TestSessionStartRestoresBeforeItSettles: a line owed while Cairn's memory lock was held
// (planning), then a newer line written (analyzing), then the topic file dropped by a
// background memory writer: the session start puts Cairn's topic file back before it writes
// the owed line into its history. Written onto the emptied file, the owed line stood alone
// there as the latest, and its write marked that as Cairn's.
func TestSessionStartRestoresBeforeItSettles(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": mem, "HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42, LockWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	if _, err := en.Start(engine.StartRequest{Type: "apex", Context: "owed and dropped"}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := holdLocks(t, mem, ".cairn-memory.lock")
	if res, err := en.Transition(engine.TransitionRequest{To: "plan"}); err != nil || len(res.Warnings) == 0 {
		t.Fatalf("the move to plan: %v; its line was written although the memory lock is held", err)
	}
	unlock()
	if _, err := en.Transition(engine.TransitionRequest{To: "analyze"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mem, memory.TopicFile)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	hook.SessionStart(strings.NewReader(`{"session_id":"s2","hook_event_name":"SessionStart","source":"startup"}`), &stdout, &stderr, getenv, nil)
	entries, err := memory.New(memory.Location{Dir: mem}, memory.Options{}).Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || !strings.Contains(entries[0].Text, "planning") || !strings.Contains(entries[1].Text, "analyzing") {
		t.Errorf("the topic file's lines are %+v, want the planning line, then the analyzing line (stderr %s)", entries, stderr.String())
	}
}
