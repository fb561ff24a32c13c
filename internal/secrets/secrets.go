// Package secrets finds credentials in text and JSON before Cairn stores them or puts them in a
// model's context. Its rules (rules.go) cover the providers of gitleaks' default rule set in
// Cairn's own expressions (AWS, GitHub, GitLab, Anthropic, OpenAI, Slack, Stripe, Google, npm,
// Hugging Face, SendGrid, Azure, and about sixty more), private key blocks, JWTs, credentials
// in URLs and in Authorization headers, and provider or credential names assigned a random-
// looking value. Text is scanned as it is and again without the characters Cairn drops when
// it stores or shows text (zero-width, bidi and other format characters), so a token split
// by U+200B is caught.
//
// All rules run in one pass: a table of the keywords' first two bytes skips most positions,
// and a rule's regexp runs only where one of its keywords starts (a full gitleaks build costs
// about 124 ms to start, too much for a hook). It never returns or logs the secret it found:
// a Finding holds only the rule's name and where the secret is.
package secrets

import (
	"bytes"
	"cmp"
	"iter"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// Finding says which rule matched and where. It never holds the secret.
type Finding struct {
	// Rule names the kind of secret, for example "github-token" (see rules.go).
	Rule string
	// Path locates it in a JSON document, such as $.vars.TOKEN or $["odd key"][2]; empty for
	// ScanString. When InKey is set, Path is the object whose key holds the secret.
	Path string
	// InKey is set when the secret is an object key rather than a value.
	InKey bool
}

// Error names the rule and the path and says what to do instead. It never contains the secret.
func (f *Finding) Error() string { return f.ErrorIn("") }

// ErrorIn is Error for a finding of ScanString in a value the caller names as place (see
// Refusal): a command's argument, "--note".
func (f *Finding) ErrorIn(place string) string {
	return f.Refusal(place) + "; keep it in an environment variable or a secret manager and store a" +
		" reference to it (the variable's name or the secret's path) instead"
}

// Refusal is the wording every refusal of a secret shares: the rule and where it was found,
// never the text, "secret found (github-token) at $.note: secrets are not stored". A caller
// that scanned one value of its own (ScanString: no path) names it as place ("the name"), or
// "" to say nowhere. Error adds advice for the agent that sent the secret; a caller whose
// text came from someone else (a person's note) uses this alone.
func (f *Finding) Refusal(place string) string {
	var b strings.Builder
	b.WriteString("secret found (")
	b.WriteString(f.Rule)
	b.WriteString(")")
	switch {
	case f.InKey:
		b.WriteString(" in an object key at ")
		b.WriteString(f.Path)
	case f.Path != "":
		b.WriteString(" at ")
		b.WriteString(f.Path)
	case place != "":
		b.WriteString(" in ")
		b.WriteString(place)
	}
	b.WriteString(": secrets are not stored")
	return b.String()
}

// ScanString reports a secret in s (from the first rule, in rules.go's order, that finds
// one), or nil when it finds none.
func ScanString(s string) *Finding {
	if r := match(s); r != nil {
		return &Finding{Rule: r.name}
	}
	return nil
}

// UUID reports whether s is a UUID in its usual text form, 8-4-4-4-12 lower case hex digits:
// what Claude Code names its sessions with, and text no rule finds a secret in (no keyword is
// made of those digits and dashes alone, TestNoKeywordInUUID), so it needs no scan.
func UUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c, dash := s[i], i == 8 || i == 13 || i == 18 || i == 23
		if dash && c != '-' || !dash && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

type rule struct {
	name string
	// keywords start every match: the regexp runs only where one occurs, anchored there.
	// Case-sensitive unless fold.
	keywords []string
	fold     bool
	// named marks a rule that needs a name and a value together (password = ..., "api_key":
	// "..."): the JSON scan reads each object member as "key": value for these, and looks
	// for them wherever one of their keywords occurs.
	named bool
	// asName, for a named rule whose keywords are common words, vets a keyword of n bytes met
	// at i as one a name may hold: elsewhere it does not make the JSON scan read members. It
	// must pass wherever the rule's regexp may match from i, in a document's text and in its
	// strings decoded. nil: every keyword counts.
	asName func(s string, i, n int) bool
	// re must begin with ^ and match from the keyword on. It is compiled on first use: most
	// scans meet no keyword, and compiling every rule at start-up cost each hook process
	// most of a millisecond. Held by value: a function per rule cost three allocations each
	// when the first scan lays the rules out (re is its accessor).
	rx lazyre.Regexp
	// before vets the text just before the keyword (word boundaries, a scheme before "://"):
	// RE2 has no lookbehind. nil means anything may precede.
	before func(s string, i int) bool
	// ahead vets what follows the keyword once before passes (an assignment near, a value's
	// run of bytes, its digits and symbols), read on from where the same look-ahead stopped
	// at an earlier keyword of the same scan (see look).
	ahead ahead
	// then, for a rule whose keywords are two bytes, lists the bytes that may follow one: its
	// third, then its fourth. The gates are set for the four, so text full of the two
	// (capitals: NT, OD) does not stop the scan; before must refuse other bytes there.
	then [2]string
	// span bounds how far past the keyword a match can reach (default defaultSpan). The
	// regexp runs on that window only: Go's backtracker clears a bitmap the size of its
	// input, so a 4 KB tail per keyword made scans of keyword-heavy text ten times slower.
	span int
	// win caches the window (see windowLen); 0 until the rule first runs.
	win atomic.Int32
	// window, when set, cuts the window in place of span (see urlWindow); "": no match can
	// start at i.
	window func(s string, i int) string
	// tail, when set, reads the end of a value whose first bytes end the regexp's match (its
	// last group that ends there, see valueGroup): it returns where the value ends in s, from
	// the match's end j, and whether what follows may end it. A value's whole length in the
	// expression (up to 128 bytes of a class) made the program ten times longer, and the
	// engine read it at every keyword of a flood (token=token=..., pwd=pwd=...).
	tail func(s string, j int) (end int, ok bool)
	// members, when set, reads on from the end of the regexp's match, the head of a holder
	// (see holderMembers): it returns where the match ends, or false. ok and tail are not
	// used.
	members func(r *rule, s string, j int) (end int, ok bool)
	// ok vets the submatches: it weeds out look-alikes (placeholders, hex SHAs, plain names)
	// the regexp cannot. m[0] is the match. nil accepts every match.
	ok func(s string, i int, m []string) bool
}

// match returns the first rule that finds a secret in s, or in s as it will be stored.
func match(s string) *rule {
	r, _ := matchAt(s)
	return r
}

// matchAt returns the first rule that finds a secret in s and the text it matched. When s
// holds characters Cairn drops before storing or showing text (zero-width, bidi and other
// format characters, controls, invalid UTF-8: see textsafe.Dropped), s is scanned again
// without them, so a token split by U+200B is caught as the token the writer would store.
// When s holds escapes, it is scanned again decoded (see decodings).
func matchAt(s string) (r *rule, span string) {
	if len(s) < 2 {
		// No keyword is shorter (buildIndex), nor decoding makes text longer: an empty field
		// (most of a report's without a workflow) costs no index.
		return nil, ""
	}
	if r, span = matchStored(s); r == nil {
		for u := range decodings(s, true) {
			if r, span = matchStored(u); r != nil {
				break
			}
		}
	}
	return r, span
}

// decodings yields s decoded as a writer may have hidden a token in it, each form that
// differs from the one before: its JSON escapes (unless json is false, for a document's own
// text, whose strings are decoded apart), its HTML character references, then its URL
// percent escapes (see entityDecoded, percentDecoded), and again on the result while it
// changes, up to escapeLevels rounds. One kind of escape may hide another: \u0025 then 5F
// is %5F, _ once decoded; &#37;5F and %26%2395; are too. Each form is decoded further without
// what normalize drops, as Cairn stores it: a zero-width space inside an escape (%5<U+200B>F)
// hides nothing once stored.
func decodings(s string, json bool) iter.Seq[string] {
	return func(yield func(string) bool) {
		if n, ok := normalize(s); ok {
			s = n // scanned by the caller, as s is
		}
		// A document's own escapes are decoded once a later round's decoding has written a
		// backslash (&#92;, %5C), not again in its whole text.
		own := 0
		if !json {
			own = strings.Count(s, `\`)
		}
		for round := range escapeLevels {
			was := s
			next := func(u string) bool {
				if !yield(u) {
					return false
				}
				if n, ok := normalize(u); ok {
					u = n
				}
				s = u
				return true
			}
			if strings.IndexByte(s, '\\') >= 0 && (json || round > 0 && strings.Count(s, `\`) > own) {
				if u := string(strictjson.AppendUnescaped(make([]byte, 0, len(s)), []byte(s))); u != s && !next(u) {
					return
				}
			}
			for _, decode := range [...]func(string) (string, bool){entityDecoded, percentDecoded} {
				if u, ok := decode(s); ok && !next(u) {
					return
				}
			}
			if s == was {
				return
			}
		}
	}
}

// percentDecoded returns s with its URL percent escapes of printable ASCII decoded, and
// whether it had any: a token taken from a URL's query or encoded by hand (ghp%5F...,
// sk%2Dant%2D...) is read as the token it stands for. Tokens are ASCII, and an escape of
// another byte is more often text: %DB_PASS% is a Windows variable, not byte 0xDB.
func percentDecoded(s string) (string, bool) {
	return unescaped(s, '%', func(s string) (byte, int) {
		if c, n := hexAt(s); c >= 0x20 && c < 0x7f {
			return c, n
		}
		return 0, 0
	})
}

// hexAt reads the two hex digits that start s (after a %): the byte they stand for and 2, or 0.
func hexAt(s string) (c byte, n int) {
	if len(s) < 2 || !isHex(s[0]) || !isHex(s[1]) {
		return 0, 0
	}
	return hexDigit(s[0])<<4 | hexDigit(s[1]), 2
}

// entityDecoded returns s with its HTML character references of printable ASCII decoded,
// and whether it had any: a token pasted from a web page or encoded by hand (&#103;hp_...,
// ghp&#x5F;..., ghp&lowbar;...) is read as the token it stands for. A numeric reference may
// end without its ;, as browsers read it. As in percentDecoded, references to other
// characters stay as they are.
func entityDecoded(s string) (string, bool) { return unescaped(s, '&', entityAt) }

// unescaped returns s with each escape decoded that starts with mark and that at reads (what
// follows mark: the byte it stands for and how long it is, or 0), and whether it had any.
func unescaped(s string, mark byte, at func(string) (c byte, n int)) (string, bool) {
	if strings.IndexByte(s, mark) < 0 {
		return s, false
	}
	var b []byte
	from := 0 // s[from:] is not yet in b
	for i := 0; i < len(s); i++ {
		if s[i] != mark {
			continue
		}
		c, n := at(s[i+1:])
		if n == 0 {
			continue
		}
		b = append(append(b, s[from:i]...), c)
		from = i + 1 + n
		i += n
	}
	if b == nil {
		return s, false
	}
	return string(append(b, s[from:]...)), true
}

// entityAt reads the character reference that starts s, after its &, when it stands for
// printable ASCII: the character and the reference's length, or 0.
func entityAt(s string) (c byte, n int) {
	if len(s) < 3 {
		return 0, 0
	}
	if s[0] != '#' {
		name, _, ok := strings.Cut(s[:min(len(s), maxEntityName+1)], ";")
		if c := asciiEntity(name); ok && c != 0 {
			return c, len(name) + 1
		}
		return 0, 0
	}
	base, j := 10, 1
	if j < len(s) && (s[j] == 'x' || s[j] == 'X') {
		base, j = 16, j+1
	}
	v, start := 0, j
	for ; j < len(s) && j-start < 8; j++ {
		d := s[j]
		if !(base == 10 && '0' <= d && d <= '9' || base == 16 && isHex(d)) {
			break
		}
		v = v*base + int(hexDigit(d))
	}
	if j == start || v < 0x20 || v >= 0x7f {
		return 0, 0
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	return byte(v), j
}

// asciiEntity returns the printable ASCII that HTML's reference named name stands for, or 0:
// the punctuation a token or an assignment holds (no name stands for a letter or a digit).
func asciiEntity(name string) byte {
	for _, e := range asciiEntities {
		if e.name == name {
			return e.c
		}
	}
	return 0
}

// asciiEntities are the names asciiEntity knows. Static data, not a map: a map literal is
// built when each process starts, hooks too.
var asciiEntities = [...]struct {
	name string
	c    byte
}{
	{"excl", '!'}, {"quot", '"'}, {"QUOT", '"'}, {"num", '#'}, {"dollar", '$'}, {"percnt", '%'},
	{"amp", '&'}, {"AMP", '&'}, {"apos", '\''}, {"lpar", '('}, {"rpar", ')'}, {"ast", '*'},
	{"midast", '*'}, {"plus", '+'}, {"comma", ','}, {"period", '.'}, {"sol", '/'}, {"colon", ':'},
	{"semi", ';'}, {"lt", '<'}, {"LT", '<'}, {"equals", '='}, {"gt", '>'}, {"GT", '>'},
	{"quest", '?'}, {"commat", '@'}, {"lsqb", '['}, {"lbrack", '['}, {"bsol", '\\'},
	{"rsqb", ']'}, {"rbrack", ']'}, {"Hat", '^'}, {"lowbar", '_'}, {"UnderBar", '_'},
	{"grave", '`'}, {"DiacriticalGrave", '`'}, {"lcub", '{'}, {"lbrace", '{'}, {"verbar", '|'},
	{"vert", '|'}, {"VerticalLine", '|'}, {"rcub", '}'}, {"rbrace", '}'},
}

// maxEntityName is the longest name asciiEntity knows.
const maxEntityName = len("DiacriticalGrave")

// escapeLevels is how many rounds decodings decodes text: JSON escaped twice more and
// pasted as text (a log line quoting a request body that quoted JSON) is read too.
const escapeLevels = 3

// matchStored is matchAt for s as it is, and without what Cairn drops when it stores it.
func matchStored(s string) (r *rule, span string) {
	if r, a, b, _ := scan(s, nil); r != nil {
		return r, s[a:b]
	}
	if n, ok := normalize(s); ok {
		if r, a, b, _ := scan(n, nil); r != nil {
			return r, n[a:b]
		}
	}
	return nil, ""
}

// normalize drops what textsafe.Line drops (spaces aside): it reports false when s has none.
func normalize(s string) (string, bool) {
	i := firstDropped(s)
	if i == len(s) {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	changed := false
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsSpace(r) && textsafe.Dropped(r) {
			changed = true
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), changed
}

// firstDropped returns the index of the first character of s that normalize drops, or len(s).
// Most text is printable ASCII, which it passes eight bytes at a time, then 32; two-byte
// characters (accents, Greek, Cyrillic) are judged by their code point, since below U+0600
// only C1 controls, U+00AD and U+034F are dropped; the rest (CJK, emoji) is decoded and looked
// up. A 1 MB checkpoint is scanned twice, as stored and decoded, so this loop counts.
func firstDropped(s string) int {
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			u := unusual(le64(s, i))
			if u == 0 {
				i += 8
				for i+32 <= len(s) && unusual(le64(s, i))|unusual(le64(s, i+8))|unusual(le64(s, i+16))|unusual(le64(s, i+24)) == 0 {
					i += 32
				}
				continue
			}
			i += bits.TrailingZeros64(u) / 8 // the lowest flag is exact
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if c >= 0xc2 && c < 0xd8 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			r := rune(c&0x1f)<<6 | rune(s[i+1]&0x3f) // U+0080 to U+05FF
			if r <= 0x9f && r != 0x85 || r == 0xad || r == 0x34f {
				return i
			}
			i += 2
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsSpace(r) && textsafe.Dropped(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// unusual flags the eight bytes of w that are below 0x20, 0x7f or above. A borrow or carry
// may flag more, but only above a byte that is flagged itself, so the lowest flag is exact.
func unusual(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return ((w-ones*0x20)&^w | w | (w + ones)) & highs
}

// le64 reads the eight bytes of s at i as a little-endian word (one load, once compiled).
func le64(s string, i int) uint64 {
	s = s[i : i+8] // one bounds check, not eight
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// scan reports the first rule, in rules.go's order, that matches anywhere in s, at the
// first place it matches, and whether a keyword of a named rule occurs in s (see Finish). It
// makes one pass over s: a bit table of three bytes (gate), tested at every other position,
// skips most of s, and a table of the keywords' first two bytes lists the few keywords that
// start where it passes.
//
// When met is not nil, the places where a keyword occurs are appended to it; all of them
// when no rule matched (once one has, only the keywords of rules before it are looked for).
func scan(s string, met *[]int) (r *rule, start, end int, named bool) {
	ix, rs := index(), rules()
	best := len(rs)
	var l look
	for i := ix.next(s, 0); i < len(s) && best > 0; i = ix.next(s, i+1) {
		found, stop, idx, more, kw := ix.ruleAt(rs, s, i, best, &l)
		named = named || more
		if kw && met != nil {
			*met = append(*met, i)
		}
		if found != nil {
			r, start, end, best = found, i, stop, idx
		}
	}
	return r, start, end, named
}

// ruleAt returns the first rule of rs (rules()) before best with a keyword at i whose regexp
// matches there, where the match ends and the rule's place; named reports whether a named
// rule's keyword was met on the way, kw whether any keyword was.
func (ix *keywordIndex) ruleAt(rs []*rule, s string, i, best int, l *look) (r *rule, end, idx int, named, kw bool) {
	var tried *rule // a rule's keywords are listed together: "secret" then "secret_key"
	for _, e := range ix.at(s[i], s[i+1]) {
		if e.idx >= best {
			break // entries are in rule order
		}
		if len(s)-i < len(e.kw) {
			continue
		}
		if e.fold {
			if !strings.EqualFold(s[i:i+len(e.kw)], e.kw) {
				continue
			}
		} else if s[i:i+len(e.kw)] != e.kw {
			continue
		}
		r := rs[e.idx]
		named = named || r.named && (r.asName == nil || r.asName(s, i, len(e.kw)))
		kw = true
		if r == tried {
			continue // its regexp ran at i for another of its keywords
		}
		tried = r
		if stop, ok := r.at(s, i, l); ok {
			return r, stop, e.idx, named, kw
		}
	}
	return nil, 0, best, named, kw
}

// at runs r's regexp at i, where one of its keywords starts; l is the scan's look, its
// keywords met in order.
func (r *rule) at(s string, i int, l *look) (end int, ok bool) {
	if r.before != nil && !r.before(s, i) || !l.passes(&r.ahead, s, i) {
		return 0, false
	}
	var w string
	if r.window != nil {
		if w = r.window(s, i); w == "" {
			return 0, false
		}
	} else {
		w = s[i:min(len(s), i+r.windowLen())]
	}
	if r.members != nil {
		if loc := r.find(r.re(), w); loc != nil {
			return r.members(r, s, i+loc[1])
		}
		return 0, false
	}
	if regexpRan != nil {
		regexpRan(r, r.re(), w)
	}
	if r.ok == nil {
		if loc := r.re().FindStringIndex(w); loc != nil {
			return i + loc[1], true
		}
		return 0, false
	}
	loc := r.re().FindStringSubmatchIndex(w)
	if loc == nil {
		return 0, false
	}
	m := make([]string, len(loc)/2)
	for k := range m {
		if loc[2*k] >= 0 {
			m[k] = w[loc[2*k]:loc[2*k+1]]
		}
	}
	if k := valueGroup(loc); r.tail != nil && k > 0 {
		j := i + loc[1]
		stop, ok := r.tail(s, j)
		if !ok {
			return 0, false
		}
		m[k] = s[i+loc[2*k] : stop]
		m[0] = s[i:stop]
	}
	if r.ok(s, i, m) {
		return i + len(m[0]), true
	}
	return 0, false
}

// valueGroup returns the last group of a match (loc, as FindStringSubmatchIndex gives it) that
// ends where the match does, the value a rule's tail reads on, or 0 when none does (the
// match ends with a closing quote, say).
func valueGroup(loc []int) int {
	for k := len(loc)/2 - 1; k > 0; k-- {
		if loc[2*k] >= 0 && loc[2*k+1] == loc[1] {
			return k
		}
	}
	return 0
}

// find runs re, r's regexp or one of the parts its members function runs, on w.
func (r *rule) find(re *regexp.Regexp, w string) []int {
	if regexpRan != nil {
		regexpRan(r, re, w)
	}
	return re.FindStringSubmatchIndex(w)
}

// readAround, set by tests only, is told how many bytes a check before a keyword reads
// around it (commandBefore, pgpassHost, sasBefore: those that read more than a few): a
// flood's cost in Go is counted, as its regexps' is.
var readAround func(n int)

// regexpRan, set by tests only, is told of each window a rule's regexps run on: a flood's
// cost is counted, not timed.
var regexpRan func(r *rule, re *regexp.Regexp, w string)

// windowLen returns r's span, or one byte more than the longest text its regexp can match
// when that is less: a longer window changes no answer and costs the backtracker's bitmap
// (1Q~ repeated, with 1024 bytes at each for a 40-byte match, cost a hundred times plain
// text). It is worked out from the expression when the rule first runs.
func (r *rule) windowLen() int {
	if n := r.win.Load(); n > 0 {
		return int(n)
	}
	n := fitted(r.re(), cmp.Or(r.span, defaultSpan))
	r.win.Store(int32(n))
	return n
}

// fitted returns span, or one byte more than the longest text re can match when that is less.
func fitted(re *regexp.Regexp, span int) int {
	if p, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		if m := longest(p); m >= 0 {
			return min(span, m+1)
		}
	}
	return span
}

// longest returns the most bytes re can match, in any text (a rune of a class: its longest
// encoding; a literal in any case: its longest spelling, the Kelvin sign for k), or -1 when
// there is no bound.
func longest(re *syntax.Regexp) int {
	return bound(re, func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			n := 0
			for _, r := range re.Rune {
				m := utf8.RuneLen(r)
				if re.Flags&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
						m = max(m, utf8.RuneLen(f))
					}
				}
				n += m
			}
			return n
		case syntax.OpCharClass:
			n := 0
			for i := 1; i < len(re.Rune); i += 2 {
				n = max(n, utf8.RuneLen(re.Rune[i]))
			}
			return n
		case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			return utf8.UTFMax
		}
		return 0 // empty-width operators
	})
}

// bound returns the most bytes re can match, or -1 when there is no bound, given the most a
// literal, a character class or any character matches (leaf; it answers 0 for an
// empty-width operator).
func bound(re *syntax.Regexp, leaf func(*syntax.Regexp) int) int {
	switch re.Op {
	case syntax.OpCapture, syntax.OpQuest:
		return bound(re.Sub[0], leaf)
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := bound(re.Sub[0], leaf)
		if re.Max < 0 || n < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			m := bound(sub, leaf)
			if m < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
		}
		return n
	}
	return leaf(re)
}

type entry struct {
	kw   string
	idx  int  // the rule's place in rules
	fold bool // the rule's
}

type keywordIndex struct {
	// first[a] is 1 + the index in rows of the row for keywords starting with byte a (0:
	// none), and rows[first[a]-1][b] 1 + the index in lists of those starting with a, b.
	first [256]uint8
	rows  [][256]uint16
	lists [][]entry // each in rule order
	// gate has the bits gateHash sets for the three bytes at an even position q of a text
	// where a keyword, in any case its rule allows, may start at q-1, q or q+1: its first
	// three bytes (a two-byte keyword: followed by any byte) for q, its second to fourth (a
	// three-byte keyword: then any byte) for q-1, and for a two-byte keyword any byte then
	// its two for q+1. A scan tests it at every other position: a keyword's first two bytes
	// are too common a pair in prose (one position in six) for the lists to be looked at
	// everywhere, and half the positions cost half the hashing.
	gate [1 << gateBits / 64]uint64
	// gate4 is gate for four bytes (three-byte keywords: followed by any byte), tested where
	// gate passes: "path" and "text" would otherwise stop the scan as "pat." and "ext_" do,
	// in every item of a list. short has the bit of the two-byte keywords' bytes (the
	// first's in the low byte), which skip it.
	gate4 [1 << gateBits / 64]uint64
	short [1 << 16 / 64]uint64
	// escapes marks the ASCII bytes a JSON escape may stand for and so make a keyword appear
	// in a string once decoded: keywords' bytes, in both cases, and those normalize drops.
	escapes [256]bool
}

// hides reports whether the body of a JSON string that passed strictjson's check has an
// escape that may make a keyword appear in its decoded text, or in that text decoded again
// as often as match decodes it (see escapes, decodings): one for a byte it marks, a
// character normalize drops, or a surrogate (told apart only when decoded); or an escaped
// backslash before what may be such an escape. It runs on every escaped string of a large
// document, so it reads escapes itself.
func (ix *keywordIndex) hides(body []byte) bool {
	for {
		i := bytes.IndexByte(body, '\\')
		if i < 0 || i+1 == len(body) {
			return false
		}
		c := body[i+1]
		body = body[i+2:]
		if c == '\\' && len(body) > 0 {
			// An escaped backslash and what follows are an escape once the text is decoded
			// again, as match reads it (see decodings): \\/ is / then, \\u0070 is p. An
			// escaped backslash before another is one at the level after, so it counts.
			switch n := body[0]; n {
			case '\\', 'u':
				return true
			case '/', 'b', 'f', 'n', 'r', 't':
				if ix.escapes[unescape(n)] {
					return true
				}
			}
		}
		if c != 'u' {
			if ix.escapes[unescape(c)] {
				return true
			}
			continue
		}
		r := rune(0)
		for j := range min(4, len(body)) {
			r = r<<4 | rune(hexDigit(body[j]))
		}
		body = body[min(4, len(body)):]
		switch {
		case r < utf8.RuneSelf:
			if ix.escapes[r] {
				return true
			}
		case r < 0x600 && r > 0x9f && r != 0xad && r != 0x34f: // as in firstDropped
		case utf16.IsSurrogate(r) || !unicode.IsSpace(r) && textsafe.Dropped(r):
			return true
		}
	}
}

// unescape returns the byte a one-letter JSON escape (\n, \", ...) stands for.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // \", \\ and \/
}

// hexDigit returns the value of a hex digit that passed strictjson's check.
func hexDigit(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// gateBits sizes the gates: 16 KB each. Fewer bits let unrelated text collide with the
// keywords often enough to cost a 1 MB document's scan a sixth more.
const gateBits = 17

// gateHash hashes three bytes (the low 24 bits of k), each ORed with 0x20: that folds ASCII
// letters to lower case, so a fold keyword in any case sets and finds the same bit.
func gateHash(k uint32) uint32 {
	return ((k | 0x202020) & 0xffffff) * 0x9e3779b1 >> (32 - gateBits)
}

// gateHash4 is gateHash for four bytes.
func gateHash4(k uint32) uint32 {
	return (k | 0x20202020) * 0x9e3779b1 >> (32 - gateBits)
}

// passes4 reports whether a keyword may start at i, where the gate passed, by its first four
// bytes (always, where fewer are left or where a two-byte keyword starts).
func (ix *keywordIndex) passes4(s string, i int) bool {
	if i+3 >= len(s) {
		return true
	}
	if k := uint16(s[i]) | uint16(s[i+1])<<8; ix.short[k/64]&(1<<(k%64)) != 0 {
		return true
	}
	h := gateHash4(uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24)
	return ix.gate4[h/64]&(1<<(h%64)) != 0
}

// next returns the first position at or after from where a keyword may start by the gates
// (see gate, passes4), or len(s). It tests the gate at even positions only, reading eight
// bytes at a time and testing the three even positions of the first six with one branch:
// this loop is most of the time a scan of a large document takes.
func (ix *keywordIndex) next(s string, from int) int {
	for q := from &^ 1; q < len(s); {
		stop := len(s)
		if q+8 <= len(s) {
			w := le64(s, q)
			h0, h2, h4 := gateHash(uint32(w)), gateHash(uint32(w>>16)), gateHash(uint32(w>>32))
			if (ix.gate[h0/64]>>(h0%64)|ix.gate[h2/64]>>(h2%64)|ix.gate[h4/64]>>(h4%64))&1 == 0 {
				q += 6
				continue
			}
			stop = q + 6
		}
		for ; q < stop; q += 2 {
			if q+2 < len(s) { // else fewer than three bytes are left: a keyword may end here
				h := gateHash(uint32(s[q]) | uint32(s[q+1])<<8 | uint32(s[q+2])<<16)
				if ix.gate[h/64]&(1<<(h%64)) == 0 {
					continue
				}
			}
			for i := max(from, q-1); i <= q+1 && i+1 < len(s); i++ {
				if ix.passes4(s, i) {
					return i
				}
			}
		}
	}
	return len(s)
}

func (ix *keywordIndex) at(a, b byte) []entry {
	row := ix.first[a]
	if row == 0 {
		return nil
	}
	list := ix.rows[row-1][b]
	if list == 0 {
		return nil
	}
	return ix.lists[list-1]
}

//go:generate go test . -run ^TestIndexGenerated$ -update

// index returns the keyword index. It is laid out when Cairn is built (index_gen.go, from
// the rules by buildIndex in indexgen_test.go): laying it out at start cost every process
// that scanned about 0.8 M instructions, a fifth of a SessionStart with a workflow.
func index() *keywordIndex {
	if !built.Load() {
		built.Store(true)
	}
	return &keywords
}

// built is set by the first scan of text that may hold a keyword (the first use of index).
var built atomic.Bool

// Scanned reports whether this process has scanned text that may hold a keyword (used the
// keyword index, which every such scan needs): for tests that hold a path, such as a hook's
// common one, to running no scan.
func Scanned() bool { return built.Load() }

// defaultSpan is longer than any token the rules know (GitHub's 255, OpenAI project keys'
// ~170, a URL's user:password), so cutting there changes no answer: a run of token
// characters cut at the window's end still ends in a match, as it would at its real end.
const defaultSpan = 1024

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// notAlnum: the keyword is not glued to a letter or digit before it, unless that ends a
// percent escape (%2FAKIA..., %3Dghp_...: a value in a URL's query).
func notAlnum(s string, i int) bool {
	return i == 0 || !isAlnum(s[i-1]) || i >= 3 && s[i-3] == '%' && isHex(s[i-2]) && isHex(s[i-1])
}

// notWord: the keyword starts a token of its own: not glued to a letter or digit (xghp_,
// task-list's sk-), unless that is a percent escape's (%2Fghp_, a URL's query), and after _ or
// - only when a short word is before it (ctx-ghp_..., prod_sk-...): a keyword deep in a run
// of such characters is inside another token, and a flood of them (_github_pat_ repeated) is
// read once, not from each keyword on.
func notWord(s string, i int) bool {
	if c := s[max(i, 1)-1]; i == 0 || c != '_' && c != '-' {
		return notAlnum(s, i)
	}
	lo := max(0, i-gluedWord)
	if readAround != nil {
		readAround(i - lo)
	}
	for j := i - 2; j >= lo; j-- {
		if !isAlnum(s[j]) && s[j] != '_' && s[j] != '-' {
			return true
		}
	}
	return lo == 0
}

// gluedWord is the longest word notWord lets a token be glued to by _ or -.
const gluedWord = 48

// awsBefore reports "aws" just before i, with at most one separator between.
func awsBefore(s string, i int) bool {
	if i > 0 && strings.ContainsRune("_.- ", rune(s[i-1])) {
		i--
	}
	return i >= 3 && strings.EqualFold(s[i-3:i], "aws")
}

// schemeBefore: "://" follows a scheme (letters, digits, + . -).
func schemeBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	c := s[i-1]
	return isAlnum(c) || c == '+' || c == '.' || c == '-'
}

// mixedCase: real keys have upper- and lowercase letters; a 40-character git SHA does not.
func mixedCase(s string) bool {
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz")
}

// mixed: random key material has upper, lower and digits; names such as
// sk-proj-frontend-refactor-plan-for-oauth do not.
func mixed(s string) bool {
	return mixedCase(s) && strings.ContainsAny(s, "0123456789")
}

// notPlaceholder refuses passwords that are references or masks, which is what we ask users
// to store: $DB_PASS, ${DB_PASS}, {{ .Pass }}, %DB_PASS%, @db.pass@, ****, xxxx,
// <db-password>, changeme; and the place's name that prose showing a syntax puts there
// (scheme://user:password@host, sshpass -p PASSWORD.); and a time as JSON writes one
// (2024-05-01T10:00:00Z), which a document keeps by a name that may end in one of theirs
// (claims.json's times by task id: "rotate-secret", "reset-password").
func notPlaceholder(pw string) bool {
	if _, err := time.Parse(time.RFC3339Nano, pw); err == nil {
		return false
	}
	switch {
	case strings.HasPrefix(pw, "$"), strings.HasPrefix(pw, "{"), strings.HasPrefix(pw, "%") && strings.HasSuffix(pw, "%"):
		return false
	case len(pw) > 2 && pw[0] == '@' && pw[len(pw)-1] == '@' && identifier(pw[1:len(pw)-1], true):
		return false // Maven's resource filtering: @jdbc.password@
	case strings.Trim(pw, "*") == "", strings.Trim(pw, "xX") == "", strings.Trim(pw, ".") == "":
		return false
	case angleName(pw), strings.EqualFold(pw, "changeme"), strings.EqualFold(pw, "change-me"), strings.EqualFold(pw, "change_me"):
		return false
	}
	return !placeName(strings.TrimRight(pw, ".,;:!?)"))
}

// angleName: a name in angle brackets, as docs write the place of a value (<token>,
// <db-password>); the closing bracket may have been cut off with the syntax around it.
func angleName(pw string) bool {
	if !strings.HasPrefix(pw, "<") {
		return false
	}
	body := strings.TrimSuffix(pw[1:], ">")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; !isAlnum(c) && c != '_' && c != '-' && c != ' ' && c != '.' {
			return false
		}
	}
	return true
}

// placeName: a password's place named where the password goes, "password", "passwd" or a
// short name (pass, pwd, pw: redis://:pw@host in a comment) in lower case, or an upper-case
// name holding one such word (PASSWORD, DB_PASSWORD, TOKEN, DB_PASS, PW).
// Capitalised (Password) or with a digit (password1), it is a password: weak, but one.
func placeName(w string) bool {
	switch w {
	case "password", "passwd", "passphrase", "pass", "pwd", "pw":
		return true
	}
	if w == "" || strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
		return false
	}
	for _, n := range []string{"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN"} {
		if strings.Contains(w, n) {
			return true
		}
	}
	for part := range strings.SplitSeq(w, "_") {
		if part == "PASS" || part == "PWD" || part == "PW" {
			return true
		}
	}
	return false
}

// re is r's regexp, compiled on first use.
func (r *rule) re() *regexp.Regexp { return r.rx.Get() }
