package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestMigratedRecordIsNotInTheFuture: a record without timestamps, migrated as it is read,
// takes the migration's time for created_at; the resume that read it judges the times by a
// clock read after the migration, so a ticking clock does not make them "in the future".
func TestMigratedRecordIsNotInTheFuture(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	at := e.clock.Now()
	tick := func() time.Time { mu.Lock(); defer mu.Unlock(); at = at.Add(time.Millisecond); return at }
	en, err := engine.Open(engine.Config{Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project,
		Now: tick, SessionID: "s1", PID: 4242, Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	if err := os.MkdirAll(en.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte(`{"command":"coordinate","state":"plan"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := en.Resume(engine.ResumeOptions{})
	text := strings.Join(r.Warnings, "\n") + r.Report
	if !strings.Contains(text, "the workflow snapshot, written by an older Cairn, was migrated") {
		t.Fatalf("not migrated:\n%s", text)
	}
	if strings.Contains(text, "in the future") {
		t.Fatalf("a record migrated just now is said to be in the future:\n%s", text)
	}
}
