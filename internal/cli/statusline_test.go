package cli

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestStatusLine: a phase cut to fit never makes a secret its whole name does not hold (a
// key glued to more text, "sk_live_...-x", cut after its body): the cut ends before that word.
func TestStatusLine(t *testing.T) {
	t.Parallel()
	key := secrettest.GluedKey(t, 32) // the phase's width
	for _, tc := range []struct {
		in   engine.Status
		want string
	}{
		{engine.Status{Type: "apex", Phase: "plan", PhaseStatus: "in_progress", Done: 2, Total: 5, Age: 12 * time.Minute}, "apex · plan 2/5 · 12m"},
		{engine.Status{Type: "apex", Phase: "plan", PhaseStatus: "blocked", Done: 2, Total: 5, Age: 3*time.Hour + 5*time.Minute}, "apex · plan (blocked) 2/5 · 3h 5m"},
		{engine.Status{Type: "mine", Phase: "draft", Done: 1}, "mine · draft 1 done"},
		{engine.Status{Type: "mine", Phase: "draft"}, "mine · draft"},
		{engine.Status{Type: "a\nb\x1b[31m", Phase: "p\u202eq", Total: 3}, "a b?[31m · p?q 0/3"},
		{engine.Status{Type: "apex", Phase: key, Total: 3}, "apex · … 0/3"},
	} {
		if got := statusLine(tc.in); got != tc.want {
			t.Errorf("statusLine(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
