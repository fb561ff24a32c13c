package cli

import (
	"strings"
	"time"
	"unicode"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// clean makes a stored string safe to print on a terminal: control characters (escape
// sequences, carriage returns), bidi overrides, zero-width and tag characters become '?', so
// a workflow's context or a note cannot rewrite the screen or hide text. Newlines and tabs
// become spaces.
// Invalid UTF-8 reaches the mapping as unicode.ReplacementChar, so it becomes '?' too.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r == unicode.ReplacementChar, unicode.IsControl(r), invisible(r):
			return '?'
		}
		return r
	}, s)
}

// invisible: what textsafe drops from memory lines (bidi controls, zero-width and format
// characters, soft hyphen, tag characters, variation selectors, Hangul fillers...), so the
// terminal and MEMORY.md hide the same set.
func invisible(r rune) bool { return r >= 0x80 && textsafe.Dropped(r) }

// stamp renders a time as UTC RFC 3339 to the second, "-" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
