package hook

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
)

func TestSessionTitleOutput(t *testing.T) {
	type out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
			SessionTitle      string `json:"sessionTitle"`
		} `json:"hookSpecificOutput"`
		SystemMessage string `json:"systemMessage"`
	}
	for _, tc := range []struct {
		name, ctx, msg, title string
		wantTitle             string
	}{
		{"context and title", "report <cairn-state>", "", "Cairn: apex · plan", "Cairn: apex · plan"},
		{"title only", "", "", "Cairn: apex · plan", "Cairn: apex · plan"},
		{"message and title", "r", "Cairn: look", "t", "t"},
		{"title made one line and capped", "r", "", "a\nb\x00c" + strings.Repeat("x", 200), "a bc" + strings.Repeat("x", maxTitle-5) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := sessionTitleOutput(tc.ctx, tc.msg, tc.title)
			var o out
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if o.HookSpecificOutput.HookEventName != "SessionStart" || o.HookSpecificOutput.SessionTitle != tc.wantTitle ||
				o.HookSpecificOutput.AdditionalContext != Context(tc.ctx, MaxContext) || o.SystemMessage != tc.msg {
				t.Errorf("got %+v from %s", o, b)
			}
		})
	}
	// Without a title it is SessionStartOutput, byte for byte.
	for _, c := range [][2]string{{"report", "msg"}, {"", ""}, {"report", ""}} {
		got, want := string(sessionTitleOutput(c[0], c[1], " \n")), string(SessionStartOutput(c[0], c[1]))
		if got != want {
			t.Errorf("no title: %q, want %q", got, want)
		}
	}
}

func TestParseTaskFields(t *testing.T) {
	ev, notes := Parse([]byte(`{"hook_event_name":"TaskCreated","task_id":"3","task_subject":"write it","task_description":null,"trigger":"auto"}`))
	if ev.TaskID != "3" || ev.TaskSubject != "write it" || ev.TaskDescription != "" || ev.Trigger != "auto" || len(notes) != 0 {
		t.Errorf("got %+v %q", ev, notes)
	}
	ev, notes = Parse([]byte(`{"task_id":3,"task_subject":["x"]}`))
	if ev.TaskID != "" || ev.TaskSubject != "" || len(notes) != 2 || !strings.Contains(notes[0], "task_id is a number") {
		t.Errorf("got %+v %q", ev, notes)
	}
}

// The Stop hook's log line counts the lines still owed in words that agree with the count.
func TestWroteSummaryCountsOwedLines(t *testing.T) {
	for _, tt := range []struct {
		owed int
		want string
	}{
		{1, "1 auto-memory line still owed, retried after the next turn"},
		{2, "2 auto-memory lines still owed, retried after the next turn"},
	} {
		if got := wroteSummary(&engine.StopOutcome{Owed: tt.owed}); got != tt.want {
			t.Errorf("wroteSummary(owed %d) = %q, want %q", tt.owed, got, tt.want)
		}
	}
}

// A task event a full disk kept out was told "free some space and try again", which no one
// can: Claude Code does not send a hook event again. It says the event is not kept, and what
// freeing space does: the events after it are recorded. Kept out for want of a free inode, it
// was told to free space, which does not help: it is told to free inodes.
func TestTaskNotRecordedOnAFullDiskSaysNoRetry(t *testing.T) {
	for _, tc := range []struct {
		inodes     bool
		said, step string
	}{
		{false, "the disk is full", "free some space so that the next events are recorded"},
		{true, "no free inodes", "free some inodes so that the next events are recorded"},
	} {
		var stderr strings.Builder
		r := &Runner{Name: EventsName, Stderr: &stderr}
		err := &store.WriteError{Dir: "/p/.claude/cairn", Name: "journal/w.jsonl", Err: syscall.ENOSPC, NoInodes: tc.inodes}
		sayTask(r, engine.ClaudeTask{TaskID: "7"}, false, nil, err)
		got := stderr.String()
		if strings.Contains(got, "try again") || !strings.Contains(got, tc.said) || strings.Contains(got, "free some space") != !tc.inodes ||
			!strings.Contains(got, "Claude Code does not send it again") || !strings.Contains(got, tc.step) {
			t.Errorf("stderr %q: want %s, no retry promised, and what freeing it does", got, tc.said)
		}
	}
}

// A task event from a session whose id has a secret's shape was refused with advice to keep
// the secret in an environment variable: a session id is Claude Code's, not anyone's secret
// to move. It is said plainly, the id not repeated. So is a task id of a secret's shape, which
// got that advice and the record's path; and one beside such a session id was blamed on the
// session id alone.
func TestTaskOfASecretShapedSessionSaysSo(t *testing.T) {
	id, other := "ghp_"+strings.Repeat("a1B2c3", 6), "ghp_"+strings.Repeat("d4E5f6", 6)
	for _, tc := range []struct {
		session, task, path, want string
	}{
		{id, "7", "$.owner.session_id", "task 7 not recorded: the session id has a secret's shape (not stored)"},
		{"sess-aaaa-1", other, "$.tasks[0].id", "not recorded: the task id has a secret's shape (not stored)"},
		{id, other, "$.tasks[0].id", "not recorded: the session id and the task id have a secret's shape (not stored)"},
	} {
		var stderr strings.Builder
		r := &Runner{Name: EventsName, Stderr: &stderr}
		err := fmt.Errorf("workflow not saved: %w", &secrets.Finding{Rule: "github-token", Path: tc.path})
		sayTask(r, engine.ClaudeTask{SessionID: tc.session, TaskID: tc.task}, false, nil, err)
		got := stderr.String()
		if strings.Contains(got, "environment variable") || strings.Contains(got, "$.") || !strings.Contains(got, tc.want) || strings.Contains(got, id) || strings.Contains(got, other) {
			t.Errorf("stderr %q: want %q, no id repeated", got, tc.want)
		}
	}
}

// A task event the lock kept out, from a session whose id has a secret's shape, could not be
// kept either: the store's refusal was said as it was, with advice to keep the id in an
// environment variable. It is said as the recorded path says it, the id not repeated.
func TestTaskNotKeptForASecretShapedSessionSaysSo(t *testing.T) {
	id := "ghp_" + strings.Repeat("a1B2c3", 6)
	var stderr strings.Builder
	r := &Runner{Name: EventsName, Stderr: &stderr}
	keepErr := fmt.Errorf("kept task event \"1-1\" not saved: %w", &secrets.Finding{Rule: "github-token", Path: "$.session_id"})
	notKept(r, engine.ClaudeTask{SessionID: id, TaskID: "7"}, false, engine.ErrKeptBusy, keepErr)
	got := stderr.String()
	if want := "task 7 not recorded: the session id has a secret's shape (not stored)"; strings.Contains(got, "environment variable") || strings.Contains(got, "$.") || !strings.Contains(got, want) || strings.Contains(got, id) {
		t.Errorf("stderr %q: want %q, no advice, the id not repeated", got, want)
	}
}
