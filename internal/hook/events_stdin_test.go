package hook_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
)

// TestEventsStdinProblemsAreSaidAsTheyAre: cairn-event reads stdin as the other hooks do, so
// an event over the size limit is reported as too large, not also as an empty stdin.
func TestEventsStdinProblemsAreSaidAsTheyAre(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": dir + "/memory", "HOME": dir, "CLAUDE_CODE_SESSION_ID": "s1"}
	getenv := func(k string) string { return env[k] }
	huge := `{"hook_event_name":"TaskCreated","task_id":"1","task_subject":"` + strings.Repeat("x", hook.MaxInput) + `"}`
	var stdout, stderr bytes.Buffer
	hook.Events(strings.NewReader(huge), &stdout, &stderr, getenv, nil)
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	got := stderr.String()
	if !strings.Contains(got, "stdin is larger than the limit") || strings.Contains(got, "stdin was empty") {
		t.Errorf("stderr does not say the event was too large, or also says stdin was empty:\n%s", got)
	}
}

// TestEventsWithoutProjectDirCreateNothing: run without a usable CLAUDE_PROJECT_DIR, cairn-event
// reads the working directory's project as the other hooks do, and creates no state directory
// there: it has nothing to record where no workflow is.
func TestEventsWithoutProjectDirCreateNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := t.TempDir()
	env := map[string]string{"CAIRN_MEMORY_DIR": home + "/memory", "HOME": home, "CLAUDE_CODE_SESSION_ID": "s1"}
	getenv := func(k string) string { return env[k] }
	for _, ev := range []string{
		`{"hook_event_name":"TaskCreated","task_id":"1","task_subject":"write it"}`,
		`{"hook_event_name":"TaskCompleted","task_id":"1","task_subject":"write it"}`,
		`{"hook_event_name":"PreCompact","trigger":"manual"}`,
	} {
		var stdout, stderr bytes.Buffer
		hook.Events(strings.NewReader(ev), &stdout, &stderr, getenv, nil)
		if stdout.Len() != 0 {
			t.Errorf("stdout = %q, want nothing", stdout.String())
		}
		if !strings.Contains(stderr.String(), "nothing is created there") {
			t.Errorf("stderr does not say the project was guessed:\n%s", stderr.String())
		}
		if _, err := os.Lstat(filepath.Join(dir, ".claude")); err == nil {
			t.Fatalf("%s created %s", ev, filepath.Join(dir, ".claude"))
		}
	}

	// Where a workflow is, the task is still recorded.
	e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "add retries"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	var stdout, stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"hook_event_name":"TaskCreated","task_id":"1","task_subject":"write it"}`), &stdout, &stderr, getenv, nil)
	if !strings.Contains(stderr.String(), "Claude Code task 1 recorded as open") {
		t.Errorf("the task was not recorded in the existing state:\n%s", stderr.String())
	}
}
