package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestOwnershipWarning(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def) // owned by alice, heartbeat t0
	bob := workflow.Actor{SessionID: "sess-bob", PID: 202}
	live := 10 * time.Minute
	for _, tc := range []struct {
		name string
		by   workflow.Actor
		now  time.Time
		warn bool
	}{
		{"same-session", alice, t0.Add(time.Minute), false},
		// `claude --continue` in a second terminal: alice's session in another client.
		{"same-session-other-client", workflow.Actor{SessionID: alice.SessionID, PID: 303}, t0.Add(time.Minute), true},
		{"same-session-no-pid", workflow.Actor{SessionID: alice.SessionID}, t0.Add(time.Minute), false},
		{"other-fresh", bob, t0.Add(9 * time.Minute), true},
		{"other-at-window", bob, t0.Add(10 * time.Minute), true},
		{"other-stale", bob, t0.Add(10*time.Minute + time.Second), false},
		// A heartbeat ahead of now: from a clock off by its time zone (up to UTC+14) it is
		// still proof of life; further ahead, a gone owner's would hold for as long.
		{"other-ahead-by-a-zone", bob, t0.Add(-14 * time.Hour), true},
		{"other-ahead-past-any-zone", bob, t0.Add(-14*time.Hour - time.Minute), false},
		{"other-a-day-ahead", bob, t0.Add(-24 * time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workflow.OwnershipWarning(r, tc.by, tc.now, live)
			if (w != "") != tc.warn {
				t.Fatalf("warning %q, want warn=%v", w, tc.warn)
			}
			// The reader can do nothing with a session id or a pid: the warning says what to do.
			if tc.warn && (strings.Contains(w, "sess-alice") || strings.Contains(w, "101") || !strings.Contains(w, workflow.OwnedAsk)) {
				t.Fatalf("warning %q names ids the reader cannot use, or no step", w)
			}
			// Changing the workflow carries the warning and takes ownership.
			res, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "plan"}, tc.now, tc.by)
			if err != nil {
				t.Fatal(err)
			}
			if (len(res.Warnings) > 0) != tc.warn || res.Record.Owner.SessionID != tc.by.SessionID ||
				res.Record.Owner.PID != tc.by.PID || !res.Record.Owner.Heartbeat.Equal(tc.now) {
				t.Fatalf("warnings %v owner %+v", res.Warnings, res.Record.Owner)
			}
		})
	}
}

func TestHeartbeat(t *testing.T) {
	def := mustDef(t, "apex")
	r := mustStart(t, def)
	res, err := workflow.Heartbeat(r, alice, t0.Add(5*time.Minute))
	if err != nil || !res.Changed || !res.Record.Owner.Heartbeat.Equal(t0.Add(5*time.Minute)) || !res.Record.UpdatedAt.Equal(t0) {
		t.Fatalf("%v %+v", err, res.Record.Owner)
	}
	other, _ := workflow.Heartbeat(r, workflow.Actor{SessionID: "sess-bob"}, t0.Add(5*time.Minute))
	if other.Changed || other.Record.Owner.SessionID != "sess-alice" {
		t.Fatal("a heartbeat from another session took ownership")
	}
}

func TestResolveConflict(t *testing.T) {
	def := mustDef(t, "apex")
	a := mustStart(t, def)
	b := walk(t, def, a, "plan") // newer
	d := workflow.ResolveConflict(a, b)
	if d.KeepIndex != 1 || d.Tie {
		t.Fatalf("%+v", d)
	}
	d = workflow.ResolveConflict(b, a)
	if d.KeepIndex != 0 {
		t.Fatalf("order: %+v", d)
	}
	c := a.Clone()
	c.Revision = 3
	if d = workflow.ResolveConflict(a, c); d.KeepIndex != 1 || d.Tie {
		t.Fatalf("revision tiebreak: %+v", d)
	}
	if d = workflow.ResolveConflict(a, a.Clone()); !d.Tie || d.KeepIndex != 0 || !strings.Contains(d.Reason, "confirm with the user") {
		t.Fatalf("tie: %+v", d)
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {45 * time.Second, "45s"}, {12 * time.Minute, "12m"},
		{3 * time.Hour, "3h"}, {3*time.Hour + 5*time.Minute, "3h 5m"}, {47*time.Hour + 59*time.Minute, "47h 59m"},
		{48 * time.Hour, "2d"}, {50 * time.Hour, "2d 2h"}, {8 * 24 * time.Hour, "8d"},
	}
	for _, tt := range tests {
		if got := workflow.Age(tt.d); got != tt.want {
			t.Errorf("Age(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestOwnershipWarningFutureHeartbeat: a heartbeat after now counts as live, and the warning
// says it is in the future, as the HIGH finding on owner.heartbeat does, not "0s ago".
func TestOwnershipWarningFutureHeartbeat(t *testing.T) {
	r := mustStart(t, mustDef(t, "apex")) // heartbeat t0
	w := workflow.OwnershipWarning(r, workflow.Actor{SessionID: "sess-bob", PID: 202}, t0.Add(-time.Hour), 10*time.Minute)
	if want := "Another live session last changed this workflow in the future (clock skew?); ask the user which session goes on with it"; !strings.HasPrefix(w, want) {
		t.Fatalf("warning %q, want it to start %q", w, want)
	}
}
