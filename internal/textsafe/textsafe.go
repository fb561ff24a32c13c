// Package textsafe turns stored, untrusted strings into text that is safe to place on one
// line of Markdown that a model or a person will read: MEMORY.md index lines, L2 topic lines
// and the resume report.
//
// It is not an HTML sanitiser and not a Markdown renderer. It guarantees a narrow set of
// properties: the result is a single line of valid UTF-8, holds no control, bidi, zero-width,
// tag or other invisible characters, cannot form a Markdown link, image, link reference, code
// span, autolink or raw HTML, and is capped at a number of runes.
//
// Bare URLs are left as they are: GitHub-style renderers may linkify them, but such a link
// shows exactly its own target, so it can neither hide where it points nor fetch anything,
// which is the harm link and image syntax could do. Emphasis characters (* _ ~) are left too:
// they change how text looks, not where it leads, and escaping them would garble identifiers
// such as PLAN_PATH.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Units is the length of s as Claude Code (JavaScript) measures it: UTF-16 code units.
func Units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // range yields U+FFFD, one unit, for an invalid byte: never -1
	}
	return n
}

// Ellipsis ends a line cut at its rune cap.
const Ellipsis = "…"

// OneLine returns s as one plain line: invalid UTF-8 and the characters Dropped names
// (control and invisible ones) removed, line breaks, tabs and other spaces folded into single
// spaces, the ends trimmed. It escapes nothing: Line is for text that will be read as
// Markdown. Every one-line rendering of stored text (hook messages, journal notes, a
// workflow's context) is this one.
func OneLine(s string) string {
	return line(s, len(s)+1, none) // s has at most len(s) runes: never cut
}

// Line returns s as one safe Markdown line of at most max runes, escapes and the ellipsis
// included.
//
// Line breaks, tabs and other Unicode spaces become a space, runs of spaces are folded and the
// result is trimmed. Invalid UTF-8, control characters (C0, C1, DEL) and invisible characters
// (Unicode format characters, which cover the bidi controls, zero-width characters and the
// BOM; the whole tag block U+E0000–E007F; variation selectors, which can smuggle hidden bytes;
// Hangul fillers and the combining grapheme joiner; the noncharacters U+FFFE and U+FFFF) are
// dropped. The characters that start Markdown links, images, code spans, autolinks and HTML
// ([ ] < `) are backslash-escaped, and so is the backslash itself, so stored text cannot
// cancel an escape; > is escaped only at the start, where it would open a block quote, so
// that arrows such as plan->implement stay readable (without < it can close nothing). A result longer than max is cut between characters, never inside an
// escape, and ends with "…". max < 1 yields "".
func Line(s string, max int) string { return line(s, max, markdown) }

// Step is Line for Cairn's own words, such as a next step that names a command in backticks:
// the same cleaning and cap, but only < is escaped (no tag can open or close), so the reader
// sees `cairn doctor`, not \`cairn doctor\`. Text read from storage goes through Line where
// it is read as Markdown; in JSON (a tool's structured content), which is not, through Step.
func Step(s string, max int) string { return line(s, max, tagOnly) }

// The escapes of line: none, Line's Markdown ones, or Step's < alone.
const (
	none = iota
	markdown
	tagOnly
)

// Clip cuts s, already safe text, to at most max runes (max >= 1), ending a cut with "…".
func Clip(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

// Quote renders text that came from tool input (a workflow's context or outcome) for a line
// Cairn writes in its own words: Line's cleaning and cap (max runes, the quotes included) but
// no Markdown escapes, so the writer's own Line call escapes it once, inside “ and ”, any “ or ”
// in it turned into ". A reader, person or model, can tell what Cairn says from what a tool
// supplied, and the quoted part cannot run on past its cap.
func Quote(s string, max int) string {
	if max < 3 {
		return ""
	}
	s = strings.NewReplacer("“", `"`, "”", `"`).Replace(s)
	return "“" + line(s, max-2, none) + "”"
}

// WithoutQuoted is s with each “…” span (Quote's) replaced with "…": Cairn's words only. An
// unclosed span runs to the end.
func WithoutQuoted(s string) string {
	var b strings.Builder
	for {
		before, after, open := strings.Cut(s, "“")
		b.WriteString(before)
		if !open {
			return b.String()
		}
		b.WriteString("…")
		var closed bool
		if _, s, closed = strings.Cut(after, "”"); !closed {
			return b.String()
		}
	}
}

// LineQuoted is Line for a line Cairn words around parts in “ and ” (Quote's): when the
// whole is longer than max runes, the longest quoted parts are cut first, each keeping its
// start, an ellipsis and its closing ”, so that Cairn's own words after them (an outcome's
// quote, ", archived") are kept. Only when every quoted part is down to a few characters is
// the end of the line cut, as Line cuts it.
func LineQuoted(s string, max int) string {
	const least = 12 // a quoted part is cut no shorter than this, in runes
	if !strings.Contains(s, "“") {
		return Line(s, max)
	}
	// fits is t as Line renders it whole (escapes at most double t's runes), and whether it
	// has at most max runes.
	fits := func(t string) (string, bool) {
		v := Line(t, 2*len(t)+1)
		return v, utf8.RuneCountInString(v) <= max
	}
	if v, ok := fits(s); ok {
		return v
	}
	parts := strings.Split(s, "“") // parts[i>0] is a quoted part, then ”, then Cairn's words
	longest := 0
	for _, p := range parts[1:] {
		if q, _, ok := strings.Cut(p, "”"); ok {
			if n := utf8.RuneCountInString(q); n > longest {
				longest = n
			}
		}
	}
	if longest <= least {
		return Line(s, max)
	}
	// quotesAt returns s with every quoted part cut to at most c runes.
	quotesAt := func(c int) string {
		var b strings.Builder
		b.WriteString(parts[0])
		for _, p := range parts[1:] {
			b.WriteString("“")
			if q, rest, ok := strings.Cut(p, "”"); ok && utf8.RuneCountInString(q) > c {
				p = line(q, c, none) + "”" + rest
			}
			b.WriteString(p)
		}
		return b.String()
	}
	// The longest cap under which the line fits: it only grows as the cap does.
	lo, hi := least, longest-1
	if _, ok := fits(quotesAt(lo)); !ok {
		return Line(quotesAt(lo), max)
	}
	for lo < hi {
		c := (lo + hi + 1) / 2
		if _, ok := fits(quotesAt(c)); ok {
			lo = c
		} else {
			hi = c - 1
		}
	}
	v, _ := fits(quotesAt(lo))
	return v
}

func line(s string, max int, escape int) string {
	if max < 1 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), 4*max) + 8)
	n := 0         // runes in b
	cut := -1      // length of b at the last piece boundary with n <= max-1: room for "…"
	space := false // a space is owed before the next visible rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1: // invalid UTF-8
			continue
		case unicode.IsSpace(r):
			space = n > 0 // leading spaces are trimmed
			continue
		case Dropped(r):
			continue
		}
		w := 1
		if space {
			w++
		}
		esc := escape == markdown && (Escaped(r) || r == '>' && n == 0) || escape == tagOnly && r == '<' // a leading > would open a block quote
		if esc {
			w++
		}
		if n+w > max {
			if cut < 0 {
				return Ellipsis
			}
			return b.String()[:cut] + Ellipsis
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if esc {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		n += w
		if n <= max-1 {
			cut = b.Len()
		}
	}
	return b.String()
}

// Escaped reports whether Line always backslash-escapes r: the ASCII punctuation that could
// start Markdown link, image, code-span, autolink or HTML syntax, and the backslash. (A
// leading > is escaped too.)
func Escaped(r rune) bool {
	switch r {
	case '\\', '[', ']', '<', '`':
		return true
	}
	return false
}

// Dropped reports whether Line removes r outright (spaces aside, which it folds).
func Dropped(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7f // the common case, without a table lookup
	}
	switch {
	case r <= 0x9f: // C1 (C0 and DEL are handled above)
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag block, assigned or not
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef: // variation selectors
		return true
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0: // CGJ, Hangul fillers
		return true
	case r == 0xfffe || r == 0xffff:
		return true
	}
	// Cf holds U+200B–200F, U+202A–202E, U+2060–2064, U+2066–2069, U+061C, U+FEFF, U+00AD...
	return unicode.Is(unicode.Cf, r)
}
