package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The line of the change L2 shows, written again, is not a new line: a completion line the
// move wrote is written once more by the session start that archives the workflow a crash
// left completed in the active slot (same workflow, same revision), a minute later.
func TestTheShownChangeWrittenAgainIsNotANewLine(t *testing.T) {
	t.Parallel()
	en, now := openS1(t)
	const line = "Completed APEX for “x”: “done”"
	for range 2 {
		if w := en.writeL2("apex-x", 3, line); w != "" {
			t.Fatal(w)
		}
		*now = now.Add(time.Minute)
	}
	entries, err := en.mem.Entries()
	if err != nil || len(entries) != 1 || entries[0].Text != line {
		t.Errorf("topic lines = %+v (%v), want the completion line once", entries, err)
	}
}

// openS1 opens an engine as session s1 on a new git project, closed when the test ends. Its
// clock reads the returned time, 2026-11-22 10:00 UTC until the test moves it.
func openS1(t *testing.T) (*Engine, *time.Time) {
	t.Helper()
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	env := map[string]string{"HOME": t.TempDir(), "CLAUDE_PROJECT_DIR": project}
	en, err := Open(Config{Getenv: func(k string) string { return env[k] }, WorkDir: project,
		Now: func() time.Time { return now }, SessionID: "s1", Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	return en, &now
}
