package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// An owner whose clock was hours ahead when it last changed the workflow (corrected since), or
// whose record says year 9999, kept that heartbeat: its Stop refreshed it only once it was two
// minutes old, which a heartbeat in the future never is. Once the owner was gone, every other
// session was told of another live session for hours, or for ever. The owner's turn's end
// puts its heartbeat back at now, so that ten minutes after its last one it is no longer live.
func TestFutureHeartbeatIsRefreshed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		at   time.Time
	}{
		{"hours ahead", time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)},
		{"year 9999", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			now := e.clock.Now()
			e.clock.t = c.at
			must(e.openAs("sess-aaaa-1", 0).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			e.clock.t = now // the clock put right
			out := must(e.openAs("sess-aaaa-1", 0).Stop(engine.StopInput{SessionID: "sess-aaaa-1"}))(t)
			if !out.Heartbeat {
				t.Errorf("the owner's turn's end left its heartbeat in the future")
			}
			e.clock.Add(11 * time.Minute) // the owner is gone
			res := e.openAs("sess-bbbb-2", 0).Resume(engine.ResumeOptions{})
			if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "Another live session") {
				t.Errorf("11 minutes after the owner's last turn, another session is told it is live: %q", res.Warnings)
			}
		})
	}
}

// An owner that never came back after changing the workflow with its clock far ahead (more
// than any time zone's 14 hours, a record saying year 9999) counted as live for as long as its
// heartbeat was in the future: every other session was told of another live session, for
// ever, and its running tasks were never taken as interrupted. A heartbeat that far ahead is
// no proof of life; one an hour ahead (a clock off by its time zone) still is.
func TestFarFutureHeartbeatOfAGoneOwner(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		ahead time.Duration
		live  bool
	}{
		{"an hour ahead", time.Hour, true},
		{"fifteen hours ahead", 15 * time.Hour, false},
		{"two days ahead", 48 * time.Hour, false},
		{"a century ahead", 100 * 365 * 24 * time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			now := e.clock.Now()
			e.clock.t = now.Add(c.ahead)
			must(e.openAs("sess-aaaa-1", 0).Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			e.clock.t = now.Add(11 * time.Minute) // the clock put right; the owner is gone
			res := e.openAs("sess-bbbb-2", 0).Resume(engine.ResumeOptions{})
			if live := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session"); live != c.live {
				t.Errorf("another session told of a live owner %t, want %t: %q", live, c.live, res.Warnings)
			}
		})
	}
}
