package cli

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/vars"
)

// clean makes a stored string safe to print on a terminal: line breaks (U+2028 and U+2029,
// which some terminals and viewers break a line at, included) and tabs become spaces,
// and what textsafe drops from memory lines (control characters such as escape sequences and
// carriage returns, bidi overrides, zero-width, format and tag characters, variation
// selectors...) becomes '?', so a workflow's context or a note cannot rewrite the screen or
// hide text, and the terminal and MEMORY.md hide the same set. Invalid UTF-8 reaches the
// mapping as unicode.ReplacementChar, so it becomes '?' too.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029':
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

// shownValue is a variable's value on show's one line, as a POSIX shell reads it: single-quoted
// (vars.Quote), or, when it holds a character clean would turn into a space or '?' (a line
// break, a tab, a control or invisible character), $'...' with each such character escaped,
// so that 'line one line two' is never shown for two lines. vars export writes the value
// itself; this is for reading.
func shownValue(v string) string {
	if clean(v) == v {
		return vars.Quote(v)
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range v {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == unicode.ReplacementChar || r == '\u2028' || r == '\u2029' || textsafe.Dropped(r):
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08X`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
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
