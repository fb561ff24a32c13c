package hook_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
)

// TestStopLogSaysTheRestoreFailed: a writer changed Cairn's topic file and left it read-only,
// so the turn's end cannot put Cairn's line back. It exits 0 and tells no one after every turn
// (a file Cairn leaves as it is: SessionStart says it), but its one stderr line said "nothing to
// write", which reads as L2 being as Cairn left it; it says the restore failed, and why.
func TestStopLogSaysTheRestoreFailed(t *testing.T) {
	getenv, _ := startedProject(t, "apex-ro")
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	_, err = en.Transition(engine.TransitionRequest{To: "plan"})
	en.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr := runStop(getenv, "s1"); strings.Contains(stderr, "not restored") {
		t.Fatalf("the first turn's end, L2 as Cairn wrote it, says:\n%s", stderr)
	}
	top := filepath.Join(getenv("CAIRN_MEMORY_DIR"), memory.TopicFile)
	data, err := os.ReadFile(top)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "Active", "Paused", 1)
	if edited == string(data) {
		t.Fatalf("the topic file holds no line to change:\n%s", data)
	}
	if err := os.WriteFile(top, []byte(edited), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(top, 0o444); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := runStop(getenv, "s1")
	if strings.Contains(stderr, "nothing to write") || !strings.Contains(stderr, "not restored") || !strings.Contains(stderr, "read-only") {
		t.Errorf("stderr:\n%s\nwant the restore's failure and why", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing (SessionStart says it)", stdout)
	}
	if got, _ := os.ReadFile(top); string(got) != edited {
		t.Errorf("the read-only topic file was changed:\n%s", got)
	}
}
