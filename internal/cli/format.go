package cli

import (
	"strings"
	"time"
	"unicode"

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

// stamp renders a time as UTC RFC 3339 to the second, "-" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
