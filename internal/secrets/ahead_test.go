package secrets

import (
	"strings"
	"testing"
)

// The look-aheads before provider-credential, token-assignment and the AWS rules read runs
// of a value's bytes: each case sits at one of their edges (a run one byte short, one that
// ends on the last byte read or just past it, one counted from the keyword and not before).
func TestRunsAhead(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	// valueEndsAhead at i with tokenSpan reads s[i:i+213]; base64RunAhead with reach 25, s[i:i+66].
	for _, c := range []struct {
		base64 bool
		s      string
		i      int
		want   bool
	}{
		{false, "token: " + a(16) + " ", 0, true},
		{false, "token: " + a(15) + " ", 0, false},
		{false, "token: " + a(16), 0, true},  // ends with s
		{false, "token: " + a(15), 0, false}, // too short, though s ends
		{false, a(20) + " ", 8, false},       // 12 bytes from i: the run is counted from there
		{false, a(20) + " ", 4, true},
		{false, a(212) + " ", 0, true},       // ends on the last byte read
		{false, a(213) + " ", 0, false},      // ends just past it
		{false, "token=" + a(300), 0, false}, // runs on past what is read
		{false, "token: \u00e9", 0, true},    // past ASCII: left to the regexp
		{false, strings.Repeat(":", 213) + "\u00e9", 0, false},
		{false, "token: " + a(10) + ":" + a(10) + " ", 0, false},
		{true, "session_token=" + a(40), 0, true},
		{true, "session_token=" + a(39), 0, false},
		{true, "session_token=" + a(39) + "+", 0, true},
		{true, "session_token=" + a(20) + "=" + a(20), 0, false},
		{true, strings.Repeat(" ", 26) + a(40), 0, true},  // its 40th byte is the last read
		{true, strings.Repeat(" ", 27) + a(40), 0, false}, // one past it
		{true, strings.Repeat(" ", 66) + "\u00e9", 0, false},
		{true, strings.Repeat(" ", 65) + "\u00e9", 0, true},
		{true, a(50), 20, false}, // 30 bytes from i
		{true, a(70), 20, true},
	} {
		got := false
		if c.base64 {
			got = base64RunAhead(c.s, c.i, 25)
		} else {
			got = valueEndsAhead(c.s, c.i, tokenSpan)
		}
		if got != c.want {
			t.Errorf("base64 %v, %q at %d: %v, want %v", c.base64, c.s, c.i, got, c.want)
		}
	}
}
