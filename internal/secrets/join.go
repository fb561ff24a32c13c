package secrets

import (
	"strings"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// NotShown stands for stored text that, joined to what is printed before it, has a secret's
// shape.
const NotShown = "(not shown: with what it is printed beside, it has a secret's shape)"

// Hidden stands for stored text that has a secret's shape by itself: text Cairn reads back
// from files with other writers (memory), or stored before a scan refused it.
const Hidden = "(not shown: it has a secret's shape)"

// Shown is s, or Hidden when s has a secret's shape.
func Shown(s string) string {
	if ScanString(s) != nil {
		return Hidden
	}
	return s
}

// Joined is head followed by rest, which holds stored text; or head and NotShown when the two
// together have a secret's shape (each was scanned alone when it was stored, and an output
// "api_key" and a note "Qk7a..." print as "api_key: Qk7a..."); or Hidden alone when head
// has that shape by itself (written by hand, or stored before a rule found it).
func Joined(head, rest string) string {
	switch {
	case ScanString(head+rest) == nil:
		return head + rest
	case head == "":
		return NotShown
	case ScanString(head) != nil:
		return Hidden
	}
	return head + " " + NotShown
}

// JoinNames joins names with sep, putting NotShown in place of a name that makes a secret with
// the one before it: "api_key, Qk7a..." from two checkpoint names.
func JoinNames(names []string, sep string) string {
	s := strings.Join(names, sep)
	if ScanString(s) == nil {
		return s
	}
	kept := []string{names[0]}
	for i := 1; i < len(names); i++ {
		if ScanString(names[i-1]+sep+names[i]) != nil {
			kept = append(kept, NotShown)
			continue
		}
		kept = append(kept, names[i])
	}
	return Joined("", strings.Join(kept, sep))
}

// LineQuoted is textsafe.LineQuoted: s, a line Cairn words around quoted tool input, made one
// safe line of at most max runes, its quoted parts shortened first. s was scanned whole, but
// the cut may make a secret of a token glued to more text ("ghp_…-x" cut after its body): the
// line is then shown without its quoted parts (textsafe.WithoutQuoted), Cairn's words only.
func LineQuoted(s string, max int) string {
	v := textsafe.LineQuoted(s, max)
	if ScanString(v) != nil {
		v = textsafe.Line(textsafe.WithoutQuoted(s), max)
	}
	return v
}

// Cut is cut, s shortened to fit and ended by textsafe.Ellipsis; or, when the cut makes a
// secret that s, scanned whole when it was stored, does not hold (a token glued to more text,
// "ghp_…-x" cut after its body), cut ended before that word, keeping what comes before it.
func Cut(s, cut string) string {
	if cut == s || ScanString(cut) == nil || ScanString(s) != nil {
		return cut // nothing cut off (no scan), no secret made, or s holds one itself
	}
	for ScanString(cut) != nil {
		kept := strings.TrimSuffix(cut, textsafe.Ellipsis)
		i := strings.LastIndexByte(kept, ' ')
		if i < 0 {
			return textsafe.Ellipsis
		}
		cut = kept[:i] + textsafe.Ellipsis
	}
	return cut
}

// Line is textsafe.Line(s, max), ended before a word its cut would make a secret of (Cut).
func Line(s string, max int) string { return Cut(s, textsafe.Line(s, max)) }

// Clip is textsafe.Clip(s, max), ended before a word its cut would make a secret of (Cut).
func Clip(s string, max int) string { return Cut(s, textsafe.Clip(s, max)) }

// Quote is textsafe.Quote(s, max), its quoted part ended before a word its cut would make a
// secret of (Cut).
func Quote(s string, max int) string {
	q := textsafe.Quote(s, max)
	if q == "" {
		return q
	}
	return "“" + Cut(s, strings.TrimSuffix(strings.TrimPrefix(q, "“"), "”")) + "”"
}
