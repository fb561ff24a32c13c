package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
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
			got = base64RunAhead(new(look), c.s, c.i, 25)
		} else {
			got = valueEndsAhead(new(look), c.s, c.i, tokenSpan)
		}
		if got != c.want {
			t.Errorf("base64 %v, %q at %d: %v, want %v", c.base64, c.s, c.i, got, c.want)
		}
	}
}

// A look-ahead that reads on where the one at an earlier keyword stopped (see look) answers
// as one that reads its whole stretch afresh: random texts of the bytes each one sorts
// (runs of a value's bytes, of base64, blanks, quotes, symbols, digits, bytes past ASCII),
// asked at places that mostly move on, at times stay or step back.
func TestLookAnswersAsAFreshRead(t *testing.T) {
	alphabet := []string{"a", "Z", "7", "0", "=", ":", "/", "+", "-", "_", ".", "~", " ", "\t", "\n", "\r", "\"", "'", "`",
		",", ";", "!", "#", "%", "@", "\u00e9", "\xff"}
	g := rand.New(rand.NewPCG(7, 8))
	for range Corpus(1500) {
		var b strings.Builder
		for n := g.IntN(600); n > 0; n-- {
			if g.IntN(3) == 0 {
				b.WriteString(alphabet[g.IntN(len(alphabet))])
			} else {
				b.WriteString(strings.Repeat(alphabet[g.IntN(4)], 1+g.IntN(24)))
			}
		}
		s := b.String()
		if s == "" {
			continue
		}
		var l look
		i := 0
		for range 60 {
			switch g.IntN(8) {
			case 0:
				i = g.IntN(len(s))
			case 1:
			default:
				i = min(len(s)-1, i+g.IntN(24))
			}
			for _, c := range []struct {
				name       string
				got, fresh bool
			}{
				{"valueEndsAhead", valueEndsAhead(&l, s, i, tokenSpan), runAheadFresh(s, i, min(len(s), i+tokenSpan+128), credentialByte, 16, true)},
				{"valueEndsAhead", valueEndsAhead(&l, s, i, credentialSpan), runAheadFresh(s, i, min(len(s), i+credentialSpan+128), credentialByte, 16, true)},
				{"base64RunAhead", base64RunAhead(&l, s, i, 25), runAheadFresh(s, i, min(len(s), i+25+41), base64Byte, 40, false)},
				{"base64RunAhead", base64RunAhead(&l, s, i, 54), runAheadFresh(s, i, min(len(s), i+54+41), base64Byte, 40, false)},
				{"digitAhead", digitAhead(&l, s, i, credentialSpan), strings.ContainsAny(s[i:min(len(s), i+credentialSpan+128)], "0123456789")},
				{"digitAhead", digitAhead(&l, s, i, tokenSpan), strings.ContainsAny(s[i:min(len(s), i+tokenSpan+128)], "0123456789")},
				{"assignedNear", assignedNear(&l, s, i), strings.ContainsAny(s[i:min(len(s), i+72)], ":=")},
				{"symbolAhead", symbolAhead(&l, s, i), symbolAheadFresh(s, i)},
			} {
				if c.got != c.fresh {
					t.Fatalf("%s(%q, %d): %v, read afresh %v", c.name, s, i, c.got, c.fresh)
				}
			}
		}
	}
}

// runAheadFresh is the loop valueEndsAhead and base64RunAhead ran before they read on where
// the last stopped: s[i:stop] holds a run of need bytes that in takes, counted from i (that
// ends there, when ended), or a byte past ASCII.
func runAheadFresh(s string, i, stop int, in func(byte) bool, need int, ended bool) bool {
	run := 0
	for k := i; k < stop; k++ {
		switch c := s[k]; {
		case c >= utf8.RuneSelf:
			return true
		case in(c):
			if run++; run >= need && !ended {
				return true
			}
		case run >= need:
			return true
		default:
			run = 0
		}
	}
	return ended && stop == len(s) && run >= need
}

// symbolAheadFresh is symbolAhead's reading of the value as it was, afresh at each keyword.
func symbolAheadFresh(s string, i int) bool {
	if !strings.ContainsAny(s[i:min(len(s), i+72)], ":=") {
		return false
	}
	j := i + 1
	for j < len(s) && j-i < 16 && (isAlnum(s[j]) || s[j] == '_' || s[j] == '-') {
		j++
	}
	assignment := func() {
		for n := 0; j < len(s) && n < 10 && strings.IndexByte("\"'` \t:=>", s[j]) >= 0; n++ {
			j++
		}
	}
	if assignment(); j < len(s) && (s[j] == ',' || isBlank(s[j])) {
		if g := valueNamed(s, j); g > 0 {
			j += g
			assignment()
		}
	}
	from := j
	for from > i && strings.IndexByte(":=>", s[from-1]) >= 0 {
		from--
	}
	symbol, digit := false, false
	for stop := min(len(s), j+128); j < stop && !isBlank(s[j]) && strings.IndexByte("\"'`,;\r", s[j]) < 0; j++ {
		symbol = symbol || symbolByte(s[j])
		digit = digit || '0' <= s[j] && s[j] <= '9'
	}
	return symbol && digit && j-from >= 16
}

// symbolAhead's classes, written as sets, hold the bytes symbolByte and the value's end take.
func TestLookSets(t *testing.T) {
	for b := range 256 {
		c := byte(b)
		if got := strings.IndexByte(symbolClass.set, c) >= 0; got != symbolByte(c) {
			t.Errorf("byte %#x: in symbolClass %v, symbolByte %v", c, got, symbolByte(c))
		}
		if got, want := strings.IndexByte(valueEndClass.set, c) >= 0, isBlank(c) || strings.IndexByte("\"'`,;\r", c) >= 0; got != want {
			t.Errorf("byte %#x: in valueEndClass %v, ends a value %v", c, got, want)
		}
	}
}
