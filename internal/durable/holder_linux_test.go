package durable_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
)

// TestStoppedStat: a holder in a tracing stop (t: strace stops a running process
// at each system call, a debugger at a breakpoint) was taken for one stopped by Ctrl-Z, so a
// waiter gave up on a running holder at once and said to resume it with kill -CONT, which
// does not end a tracing stop. Only a stop by a signal (T) is one.
func TestStoppedStat(t *testing.T) {
	for _, tc := range []struct {
		stat, cmd string
		want      bool
	}{
		{"123 (cairn) T 1 123 123 0", "cairn", true},
		{"123 (cairn) t 1 123 123 0", "cairn", false},
		{"123 (cairn) S 1 123 123 0", "cairn", false},
		{"123 (bash) T 1 123 123 0", "cairn", false},
		{"123 (cairn-session-s) T 1 123", "cairn-session-start", true},
		{"123 (a) b) T 1", "a) b", true},
		{"123 (cairn)", "cairn", false},
	} {
		if got := durable.StoppedStat([]byte(tc.stat), tc.cmd); got != tc.want {
			t.Errorf("stat %q, command %q: stopped %t, want %t", tc.stat, tc.cmd, got, tc.want)
		}
	}
}
