package remote_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"apex-20261122T173000Z-3f9a", true},
		{"wf.1_a-b", true},
		{"", false},
		{"a/b", false},
		{"a..b", false},
		{"wf.lock", false},
		{"-wf", false},
		{"wf.", false},
		{"nul", false},
	} {
		if err := remote.ValidID(tc.id); (err == nil) != tc.ok {
			t.Errorf("ValidID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestHeadsEqual(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b remote.Heads
		want bool
	}{
		{"both-empty", remote.Heads{}, nil, true},
		{"zero-is-absent", remote.Heads{"a": 0}, remote.Heads{}, true},
		{"same", remote.Heads{"a": 2, "b": 1}, remote.Heads{"b": 1, "a": 2}, true},
		{"moved", remote.Heads{"a": 2}, remote.Heads{"a": 3}, false},
		{"new-workflow", remote.Heads{"a": 2}, remote.Heads{"a": 2, "b": 1}, false},
	} {
		if got := tc.a.Equal(tc.b); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.want)
		}
		if got := tc.b.Equal(tc.a); got != tc.want {
			t.Errorf("%s: Equal (swapped) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// counting counts Heads calls and fails the first few, as a flaky network would. At call
// cancelAt it calls cancel, if set.
type counting struct {
	remote.Backend
	calls, fail atomic.Int64
	cancelAt    int64
	cancel      func()
}

func (c *counting) Heads(ctx context.Context) (remote.Heads, error) {
	n := c.calls.Add(1)
	if n == c.cancelAt && c.cancel != nil {
		c.cancel()
	}
	if n <= c.fail.Load() {
		return nil, errors.New("connection refused")
	}
	return c.Backend.Heads(ctx)
}

func TestPoll(t *testing.T) {
	ctx := context.Background()
	b := &counting{Backend: memremote.New()}
	b.fail.Store(2)
	// Failed listings are retried; a change is returned once seen.
	if _, err := b.Append(ctx, "wf", 0, remote.Slice([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	h, err := remote.Poll(ctx, b, remote.Heads{}, 10*time.Millisecond)
	if err != nil || h["wf"] != 1 || b.calls.Load() != 3 {
		t.Fatalf("Poll = %v, %v after %d listings; want wf at 1 after 3", h, err, b.calls.Load())
	}
	// No change: Poll ends with the context, naming the last failure if there was one. The
	// context ends during the third listing, not at a time, which a loaded machine may reach
	// after fewer.
	b.calls.Store(0)
	b.fail.Store(1 << 30)
	short, cancel := context.WithCancel(ctx)
	defer cancel()
	b.cancelAt, b.cancel = 3, cancel
	_, err = remote.Poll(short, b, h, 10*time.Millisecond)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "connection refused") || b.calls.Load() != 3 {
		t.Fatalf("Poll with no change = %v after %d listings; want the context's end, naming the last failure, after 3", err, b.calls.Load())
	}
}

// An UnreadableError counts the lines it left out in words that agree with the count.
func TestUnreadableErrorCountsItsLines(t *testing.T) {
	cause := errors.New("bad")
	for _, tt := range []struct {
		ids  []string
		want string
	}{
		{[]string{"wf-a"}, "remote: 1 line left out (wf-a): bad"},
		{[]string{"wf-a", "wf-b"}, "remote: 2 lines left out (wf-a, wf-b): bad"},
	} {
		if got := (&remote.UnreadableError{IDs: tt.ids, Err: cause}).Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
