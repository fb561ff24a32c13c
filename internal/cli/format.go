package cli

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// clean makes a stored string safe to print on a terminal: newlines and tabs become spaces,
// and what textsafe drops from memory lines (control characters such as escape sequences and
// carriage returns, bidi overrides, zero-width, format and tag characters, variation
// selectors...) becomes '?', so a workflow's context or a note cannot rewrite the screen or
// hide text, and the terminal and MEMORY.md hide the same set. Invalid UTF-8 reaches the
// mapping as unicode.ReplacementChar, so it becomes '?' too.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r == unicode.ReplacementChar || textsafe.Dropped(r):
			return '?'
		}
		return r
	}, s)
}

// forTerminal is data printed as stored (vars get, vars export) when a person reads it on a
// terminal: line breaks and tabs stay, every character clean replaces becomes '?' too, so a
// stored escape sequence cannot act on the terminal. It reports whether any did.
func forTerminal(s string) (string, bool) {
	changed := false
	out := strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (r == unicode.ReplacementChar || textsafe.Dropped(r)) {
			changed = true
			return '?'
		}
		return r
	}, s)
	return out, changed
}

// stamp renders a time as UTC RFC 3339 to the second, "-" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// safeJSON is the JSON text data with every character that could rewrite or hide text on a
// terminal written as a \u escape: DEL, C1 controls and what textsafe drops (bidi, zero-width,
// tag characters...), which JSON lets stand raw in a string; invalid UTF-8 becomes \ufffd.
// Outside its strings JSON text is ASCII, so these stand only in strings, where the escape is
// the same value to any JSON reader. Data without them is returned as it is.
func safeJSON(data []byte) []byte {
	i := 0
	for i < len(data) && data[i] < 0x7f {
		i++
	}
	if i == len(data) {
		return data
	}
	out := append(make([]byte, 0, len(data)+32), data[:i]...)
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, `\ufffd`...)
		case r >= 0x7f && textsafe.Dropped(r):
			if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
				out = appendEscape(appendEscape(out, r1), r2)
			} else {
				out = appendEscape(out, r)
			}
		default:
			out = append(out, data[i:i+n]...)
		}
		i += n
	}
	return out
}

func appendEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
