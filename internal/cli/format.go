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
func clean(s string) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case r == unicode.ReplacementChar, unicode.IsControl(r), invisible(r):
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsClean(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && (unicode.IsControl(r) || invisible(r) || r == unicode.ReplacementChar) {
			return true
		}
	}
	return false
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
