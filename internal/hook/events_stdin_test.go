package hook_test

import (
	"bytes"
	"strings"
	"testing"

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
	if code := hook.Events(strings.NewReader(huge), &stdout, &stderr, getenv, nil); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	got := stderr.String()
	if !strings.Contains(got, "stdin is larger than the limit") || strings.Contains(got, "stdin was empty") {
		t.Errorf("stderr does not say the event was too large, or also says stdin was empty:\n%s", got)
	}
}
