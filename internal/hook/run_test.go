package hook_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hook"
)

func TestRunnerRun(t *testing.T) {
	fallback := func(why string) []byte { return []byte("fallback: " + why) }
	t.Run("returns-body-output", func(t *testing.T) {
		r := &hook.Runner{Name: "h", Deadline: time.Second}
		got := r.Run(time.Now(), func(context.Context) []byte { return []byte("ok") }, fallback)
		if string(got) != "ok" {
			t.Fatalf("Run = %q", got)
		}
	})
	t.Run("hang-hits-the-deadline", func(t *testing.T) {
		var stderr bytes.Buffer
		r := &hook.Runner{Name: "cairn-stop", Stderr: &stderr, Deadline: 100 * time.Millisecond}
		// The real timer, not an injected one: this is the test that it is armed and ends Run.
		// The bound only keeps a missing deadline from hanging the suite; it is no speed test.
		block := make(chan struct{})
		defer close(block)
		ran := make(chan []byte, 1)
		go func() {
			ran <- r.Run(time.Now(), func(context.Context) []byte { <-block; return []byte("late") }, fallback)
		}()
		var got []byte
		select {
		case got = <-ran:
		case <-time.After(time.Minute):
			t.Fatal("Run never gave up on a hung body; the deadline was 100ms")
		}
		if string(got) != "fallback: did not finish within 100ms" {
			t.Fatalf("Run = %q", got)
		}
		if !strings.HasPrefix(stderr.String(), "cairn-stop: did not finish within 100ms") {
			t.Fatalf("stderr = %q", stderr.String())
		}
	})
	t.Run("body-that-honours-ctx-answers-itself", func(t *testing.T) {
		// The hard stop comes a tenth of the deadline after the context ends: that grace lets a
		// body that honours ctx give its own answer. Whether a loaded machine schedules the body
		// within it is not Run's to decide, so the hard stop here is noted, not fired.
		r := &hook.Runner{Name: "h", Deadline: 100 * time.Millisecond}
		var hardAt time.Time
		hook.SetHardStop(r, func(at time.Time) <-chan time.Time { hardAt = at; return nil })
		start := time.Now()
		got := r.Run(start, func(ctx context.Context) []byte {
			if d, ok := ctx.Deadline(); !ok || !d.Equal(start.Add(100*time.Millisecond)) {
				return []byte("the context ends at " + d.String())
			}
			<-ctx.Done()
			return []byte("gave up: " + ctx.Err().Error())
		}, fallback)
		if string(got) != "gave up: context deadline exceeded" {
			t.Fatalf("Run = %q", got)
		}
		if grace := hardAt.Sub(start); grace != 110*time.Millisecond {
			t.Fatalf("the hard stop comes %s after the start, want 110ms: the deadline and a tenth of it", grace)
		}
	})
	t.Run("deadline-counts-from-start", func(t *testing.T) {
		r := &hook.Runner{Name: "h", Deadline: 200 * time.Millisecond}
		got := r.Run(time.Now().Add(-time.Second), func(ctx context.Context) []byte {
			if ctx.Err() == nil {
				return []byte("context still live")
			}
			return []byte("context already over")
		}, fallback)
		if string(got) != "context already over" && !strings.HasPrefix(string(got), "fallback") {
			t.Fatalf("Run = %q: a start a second ago with a 200ms deadline left time", got)
		}
	})
	t.Run("hard-stop-before-claude-codes-timeout", func(t *testing.T) {
		// hooks.json gives a hook 10 s, counted by Claude Code from before this process began.
		// With the longest deadline EnvDeadline allows, a hung body must still be given up well
		// before then, grace included. That the timer's firing ends Run is hang-hits-the-deadline's.
		r := &hook.Runner{Name: "h", Deadline: 9 * time.Second}
		var hardAt time.Time
		fired := make(chan time.Time)
		close(fired)
		hook.SetHardStop(r, func(at time.Time) <-chan time.Time { hardAt = at; return fired })
		block := make(chan struct{})
		defer close(block)
		start := time.Now()
		got := r.Run(start, func(context.Context) []byte { <-block; return []byte("late") }, fallback)
		if at := hardAt.Sub(start); at != 9500*time.Millisecond {
			t.Errorf("a hung body is given up %s after the start, want 9.5s; Claude Code kills the hook at 10s", at)
		}
		if string(got) != "fallback: did not finish within 9s" {
			t.Fatalf("Run = %q", got)
		}
	})
	t.Run("panic", func(t *testing.T) {
		var stderr bytes.Buffer
		r := &hook.Runner{Name: "cairn-session-start", Stderr: &stderr, Deadline: time.Second}
		got := r.Run(time.Now(), func(context.Context) []byte { panic("boom") }, fallback)
		if string(got) != "fallback: internal error (boom)" {
			t.Fatalf("Run = %q", got)
		}
		if !strings.HasPrefix(stderr.String(), "cairn-session-start: internal error: boom\n") || !strings.Contains(stderr.String(), "goroutine") {
			t.Fatalf("stderr = %q, want the error line and a stack", stderr.String())
		}
	})
}

func TestDeadlineFrom(t *testing.T) {
	tests := []struct {
		name, env string
		want      time.Duration
		note      bool
	}{
		{"unset", "", hook.Deadline, false},
		{"set", "3s", 3 * time.Second, false},
		{"garbage", "soon", hook.Deadline, true},
		{"too-long", "1m", hook.Deadline, true},
		{"too-short", "1ms", hook.Deadline, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, note := hook.DeadlineFrom(func(k string) string {
				if k == hook.EnvDeadline {
					return tt.env
				}
				return ""
			})
			if got != tt.want || (note != "") != tt.note {
				t.Fatalf("DeadlineFrom(%q) = %s, %q", tt.env, got, note)
			}
		})
	}
}

func TestLogf(t *testing.T) {
	var b bytes.Buffer
	r := &hook.Runner{Name: "cairn-stop", Stderr: &b}
	r.Logf("wrote %d lines\nto %s", 2, "MEMORY.md")
	if b.String() != "cairn-stop: wrote 2 lines to MEMORY.md\n" {
		t.Fatalf("Logf wrote %q", b.String())
	}
	(&hook.Runner{Name: "x"}).Logf("no stderr: no panic")
}
