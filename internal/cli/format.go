package cli

import (
	"strings"
	"time"
	"unicode"
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

// invisible: bidi controls, zero-width characters, the BOM and tag characters.
func invisible(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069,
		r == 0xfeff, r == 0x061c, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// stamp renders a time as UTC RFC 3339 to the second, "-" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// cut shortens s to n runes with "…", for table columns.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
