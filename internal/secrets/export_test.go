package secrets

import (
	"io"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// Rules lists the rule names a Finding can carry, in the order they are tried.
func Rules() []string {
	names := make([]string, len(rules()))
	for i, r := range rules() {
		names[i] = r.name
	}
	return names
}

// MatchSpan exposes where the first finding in s lies, so tests can check that no message
// or path ever carries it.
func MatchSpan(s string) (rule, span string) {
	r, span := matchAt(s)
	if r == nil {
		return "", ""
	}
	return r.name, span
}

// Unescape exposes the JSON string decoder the text fallback uses (strictjson's).
func Unescape(body string) string { return string(strictjson.AppendUnescaped(nil, []byte(body))) }

// ScanBoth runs the scan as it runs (the gate, then the two-byte lists) and as it would run
// with every position looked up in the lists, which the gate must never change: it returns
// the rule and span each finds.
func ScanBoth(s string) (fast, slow string, fastAt, slowAt [2]int) {
	if r, a, b, _ := scan(s, nil); r != nil {
		fast, fastAt = r.name, [2]int{a, b}
	}
	if r, a, b := scanEveryPosition(s); r != nil {
		slow, slowAt = r.name, [2]int{a, b}
	}
	return
}

// scanEveryPosition is scan without the gate: the reference it is tested against.
func scanEveryPosition(s string) (r *rule, start, end int) {
	ix, rs := index(), rules()
	best := len(rs)
	var l look
	for i := 0; i+1 < len(s) && best > 0; i++ {
		if found, stop, idx, _, _ := ix.ruleAt(rs, s, i, best, &l); found != nil {
			r, start, end, best = found, i, stop, idx
		}
	}
	return r, start, end
}

// Keywords lists every rule's keywords and whether they match in any case; a keyword that
// some bytes must follow (rule.then) is listed with one pair of them.
func Keywords() (kws []string, fold []bool) {
	for _, r := range rules() {
		for k, kw := range r.keywords {
			if r.then[0] != "" {
				kw += string(r.then[0][k%len(r.then[0])]) + string(r.then[1][k%len(r.then[1])])
			}
			kws, fold = append(kws, kw), append(fold, r.fold)
		}
	}
	return kws, fold
}

// GateKeywords is Keywords with every pair of bytes that may follow a keyword.
func GateKeywords() (kws []string, fold []bool) {
	for _, r := range rules() {
		for _, kw := range r.keywords {
			if r.then[0] == "" {
				kws, fold = append(kws, kw), append(fold, r.fold)
				continue
			}
			for _, c := range []byte(r.then[0]) {
				for _, d := range []byte(r.then[1]) {
					kws, fold = append(kws, kw+string(c)+string(d)), append(fold, r.fold)
				}
			}
		}
	}
	return kws, fold
}

// FirstDropped exposes where normalize starts dropping characters.
func FirstDropped(s string) int { return firstDropped(s) }

// Candidates returns the positions of s where scan looks at the keyword lists.
func Candidates(s string) []int {
	var out []int
	for i := index().next(s, 0); i < len(s); i = index().next(s, i+1) {
		out = append(out, i)
	}
	return out
}

// Named reports whether the rule called name needs a name and a value together, so that the
// JSON scan reads each object member for it.
func Named(name string) bool {
	for _, r := range rules() {
		if r.name == name {
			return r.named
		}
	}
	return false
}

// ScanDecodingAll is ScanChecked with every escaped string decoded and scanned, as it was
// before ProbeEscaped learnt to pass over strings whose escapes cannot make a keyword: the
// reference that skipping is held to.
func ScanDecodingAll(doc []byte, spans []int) *Finding {
	p := ProbeText(doc)
	return p.Or(ProbeEscaped(doc, spans, nil)).Finish(doc)
}

// WalksMembers reports whether a scan of doc's text would read its members one by one (a
// named rule's keyword occurs in it as a name may hold it).
func WalksMembers(doc string) bool { return ProbeText([]byte(doc)).named }

// RegexpReads scans s as ScanString does and returns how many bytes its regexps read: each
// run is repeated on a reader that counts what the engine takes from it (Go's engines read
// no further than a match may still reach).
func RegexpReads(s string) int {
	reads := 0
	read := readCounter()
	regexpRan = func(_ *rule, re *regexp.Regexp, w string) { reads += read(re, w) }
	defer func() { regexpRan = nil }()
	ScanString(s)
	return reads
}

// readCounter returns a function that says how many bytes re's engine reads of w. A run
// reads the same bytes of the same text each time, so each pair is run once: a flood hands
// a rule the same window at every keyword, and the engine that reads from a reader is slow
// (much slower under -race).
func readCounter() func(re *regexp.Regexp, w string) int {
	type run struct {
		re *regexp.Regexp
		w  string
	}
	seen := map[run]int{}
	return func(re *regexp.Regexp, w string) int {
		n, ok := seen[run{re, w}]
		if !ok {
			c := &countingReader{s: w}
			re.FindReaderIndex(c)
			n = c.n
			seen[run{re, w}] = n
		}
		return n
	}
}

// RegexpWork is RegexpReads with each byte weighed by the size of the program that reads it
// (its instructions): the most steps Go's engines may take on it, so a long expression
// costs what it may, where counting bytes alone would not tell it from a short one.
func RegexpWork(s string) int {
	work := 0
	size := map[string]int{}
	read := readCounter()
	regexpRan = func(_ *rule, re *regexp.Regexp, w string) {
		expr := re.String()
		if size[expr] == 0 {
			size[expr] = programSize(expr)
		}
		work += read(re, w) * size[expr]
	}
	defer func() { regexpRan = nil }()
	ScanString(s)
	return work
}

// programSize is the number of instructions Go compiles expr to, as regexp.Compile does.
func programSize(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	p, err := syntax.Compile(re.Simplify())
	if err != nil {
		panic(err)
	}
	return len(p.Inst)
}

// ReadAround scans s as ScanString does and returns how many bytes the checks before its
// keywords read around them (see readAround).
func ReadAround(s string) int {
	n := 0
	readAround = func(k int) { n += k }
	defer func() { readAround = nil }()
	ScanString(s)
	return n
}

type countingReader struct {
	s string
	n int
}

func (c *countingReader) ReadRune() (rune, int, error) {
	if c.n == len(c.s) {
		return 0, 0, io.EOF
	}
	r, size := utf8.DecodeRuneInString(c.s[c.n:])
	c.n += size
	return r, size, nil
}

// Spans returns, for each rule without a window of its own, the window its regexp is given
// and the longest match it can make in ASCII text, or -1 when that has no bound.
func Spans() (names []string, span, longest []int) {
	for _, r := range rules() {
		if r.window != nil {
			continue
		}
		re, err := syntax.Parse(r.re().String(), syntax.Perl)
		if err != nil {
			panic(err)
		}
		names = append(names, r.name)
		span = append(span, r.windowLen())
		longest = append(longest, maxLen(re.Simplify()))
	}
	return names, span, longest
}

// maxLen is the length of the longest ASCII text re matches; -1: no bound.
func maxLen(re *syntax.Regexp) int {
	return bound(re, func(re *syntax.Regexp) int {
		switch re.Op {
		case syntax.OpLiteral:
			return len(re.Rune)
		case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			return 1
		}
		return 0 // empty-width operators
	})
}

// Windows scans s as ScanString does and returns the longest window each rule's regexp was
// given.
func Windows(s string) map[string]int {
	out := map[string]int{}
	regexpRan = func(r *rule, re *regexp.Regexp, w string) {
		if re == r.re() {
			out[r.name] = max(out[r.name], len(w))
		}
	}
	defer func() { regexpRan = nil }()
	ScanString(s)
	return out
}

// Longest returns, for each rule, the most bytes its regexp's match can take in any text;
// -1: no bound.
func Longest() map[string]int {
	out := map[string]int{}
	for _, r := range rules() {
		re, err := syntax.Parse(r.re().String(), syntax.Perl)
		if err != nil {
			panic(err)
		}
		out[r.name] = longest(re)
	}
	return out
}

// Corpus is how many cases a test runs of a corpus it generates at random: n, or a tenth
// under the race detector, which makes each case ten to fifty times slower and finds nothing
// in loops that start no goroutine. The full size runs without -race (make unit does).
func Corpus(n int) int {
	if raceDetector {
		return n / 10
	}
	return n
}
