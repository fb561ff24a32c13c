package hook_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/workflow"
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
	startApex(t, getenv)
	var stdout, stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"hook_event_name":"TaskCreated","task_id":"1","task_subject":"write it"}`), &stdout, &stderr, getenv, nil)
	if !strings.Contains(stderr.String(), "Claude Code task 1 recorded as open") {
		t.Errorf("the task was not recorded in the existing state:\n%s", stderr.String())
	}
}

// TestEventsOverTheSizeLimitKeepTheFieldsBeforeTheHugeOne: a task whose description runs to
// MiB is still a task. Claude Code writes task_description after the fields the hook needs,
// so those that come whole within the size limit are read: the task is recorded, created and
// then completed, and the huge description is neither kept nor needed.
func TestEventsOverTheSizeLimitKeepTheFieldsBeforeTheHugeOne(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": dir + "/memory", "HOME": dir, "CLAUDE_CODE_SESSION_ID": "sess-env-9"}
	getenv := func(k string) string { return env[k] }
	startApex(t, getenv)
	huge := strings.Repeat("d", 2*hook.MaxInput)
	for _, tc := range []struct{ event, want string }{
		{"TaskCreated", "Claude Code task 1 recorded as open"},
		{"TaskCompleted", "Claude Code task 1 recorded as done"},
	} {
		in := `{"session_id":"sess-aaaa-1111","transcript_path":"/t.jsonl","cwd":"/p","prompt_id":"p1","hook_event_name":"` + tc.event +
			`","task_id":"1","task_subject":"write the retry loop","task_description":"` + huge + `"}`
		var stdout, stderr bytes.Buffer
		hook.Events(strings.NewReader(in), &stdout, &stderr, getenv, nil)
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout = %q, want nothing", tc.event, stdout.String())
		}
		if got := stderr.String(); !strings.Contains(got, "stdin is larger than the limit") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: stderr does not say the event was too large and %q:\n%s", tc.event, tc.want, got)
		}
	}
	e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res := e.Resume(engine.ResumeOptions{ReportOnly: true})
	if len(res.OpenTasks) != 0 || !strings.Contains(string(e.Resume(engine.ResumeOptions{}).Workflow), `"`+workflow.ClaudeTaskID(engine.ClaudeTask{SessionID: "sess-aaaa-1111", TaskID: "1"})+`"`) {
		t.Errorf("open tasks %q; want the task recorded under the event's session, and done", res.OpenTasks)
	}
}

// startApex starts an apex workflow in getenv's project, as no session.
func startApex(t *testing.T, getenv func(string) string) {
	t.Helper()
	e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "add retries"}); err != nil {
		t.Fatal(err)
	}
}
