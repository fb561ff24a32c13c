package hook

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// The stderr line shows Claude Code's UUID session ids as they are (without the secret
// scan), other ids only when the store would keep them, and never a secret.
func TestLogSession(t *testing.T) {
	const hidden = "(not a valid session id, not shown)"
	cases := []struct{ id, want string }{
		{"", "-"},
		{"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93", "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93"},
		{"6F1C2A9E-3B7D-4C8E-9A0F-2D5B7E1C4A93", "6F1C2A9E-3B7D-4C8E-9A0F-2D5B7E1C4A93"},
		{"s-1", "s-1"},
		{"bench-session", "bench-session"},
		{"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a9g", "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a9g"}, // not hex: the store's check
		{"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93/", hidden},
		{"6f1c2a9e+3b7d-4c8e-9a0f-2d5b7e1c4a93", hidden},
		{"../etc", hidden},
		{"a b", hidden},
	}
	for _, sh := range secrettest.Shapes() {
		if len(sh.Text) <= 64 && !strings.ContainsAny(sh.Text, " /\\=:\"'") {
			cases = append(cases, struct{ id, want string }{sh.Text, hidden})
		}
	}
	for _, c := range cases {
		if got := logSession(c.id); got != c.want {
			t.Errorf("logSession(%.16q...) = %.16q..., want %q", c.id, got, c.want)
		}
	}
}
