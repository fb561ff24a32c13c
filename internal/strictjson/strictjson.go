// Package strictjson is Cairn's strict JSON gate: every document, checkpoint, log line and journal
// record passes Check before it is written or trusted. It is stricter than encoding/json, which
// accepts duplicate keys (last wins), invalid UTF-8 and 10,000 levels of nesting. Its parser is
// Cairn's one JSON tokenizer: the secret scan reads a document through it (AppendSpans, Walk) in
// the same pass as the check, and an MCP message's members through it (Each, FoldedTwice). It
// extracts top-level fields by exact name; decoding is encoding/json's.
package strictjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

const (
	// MaxSize is the largest document Check accepts: 1 MiB.
	MaxSize = 1 << 20
	// MaxDepth is the deepest nesting of arrays and objects Check accepts.
	MaxDepth = 64
)

// Kind says which rule a document broke.
type Kind string

const (
	TooLarge     Kind = "too-large"
	TooDeep      Kind = "too-deep"
	InvalidUTF8  Kind = "invalid-utf8"
	DuplicateKey Kind = "duplicate-key"
	Syntax       Kind = "syntax"
	Trailing     Kind = "trailing-data"
	Empty        Kind = "empty"
	NumberRange  Kind = "number-range"
)

// Error is what Check returns: the rule broken, a reason a person can act on, and the byte
// offset where it was found. The reason quotes at most one byte of the document (an
// unexpected character), so a refusal never repeats a secret the document holds.
type Error struct {
	Kind   Kind
	Reason string
	Offset int
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Reason)
}

// Limits bounds a document's size and depth.
type Limits struct {
	MaxSize  int
	MaxDepth int
}

// Default is the limit for documents, checkpoints and log lines.
var Default = Limits{MaxSize: MaxSize, MaxDepth: MaxDepth}

// Check validates data as exactly one strict JSON value under the default limits: at most
// 1 MiB, nesting at most 64, valid UTF-8, no duplicate object keys at any level (compared
// after unescaping, so "a" and "\u0061" collide), no trailing data. It returns a *Error.
func Check(data []byte) error { return Default.Check(data) }

// Check validates data under l; see the package function Check.
func (l Limits) Check(data []byte) error { return l.run(&parser{data: data}) }

// AppendSpans checks data as Check does and, in the same pass, appends to spans the start and
// end offsets in data of the body of every string (key or value) written with escapes. With
// data itself, which holds every other string as it reads, their decoded text (AppendUnescaped)
// is all the text of the document: what a scan for secrets needs, without a second tokenizer.
// When batch is not nil, it is handed each new run of spans as the check goes (and the last
// run when it ends well), so that another core can decode and scan them meanwhile; a run is
// never changed afterwards.
func (l Limits) AppendSpans(spans []int, data []byte, batch func(run []int)) ([]int, error) {
	p := &parser{data: data, collect: true, spans: spans, mark: len(spans), batch: batch}
	err := l.run(p)
	if err == nil && batch != nil && len(p.spans) > p.mark {
		batch(p.spans[p.mark:len(p.spans):len(p.spans)])
	}
	return p.spans, err
}

// batchLen is the length of the runs AppendSpans hands over: 128 strings, a few kilobytes of
// text, small enough to share out between cores and large enough to cost little to hand over.
const batchLen = 256

// Step is one step of a path into a document: an object member (Index -1) or an array element.
type Step struct {
	Key   string
	Index int
}

// Part says what Walk hands its visitor.
type Part uint8

const (
	// Key is an object key, decoded; the path leads to the object.
	Key Part = iota
	// String is a string value, decoded; the path leads to the value.
	String
	// Literal is a number, true, false or null as written; the path leads to the value. The
	// secret scan reads it as the value of its key (a numeric password).
	Literal
)

// Walk checks data as Check does and calls visit, in document order, for every object key,
// string value and literal (see Part). path is only valid during the call. When visit
// returns true the walk stops there and Walk returns nil, whatever follows.
func (l Limits) Walk(data []byte, visit func(s string, part Part, path []Step) (stop bool)) error {
	err := l.run(&parser{data: data, visit: visit})
	if err == errStopped {
		return nil
	}
	return err
}

var errStopped = &Error{Kind: "stopped"}

func (l Limits) run(p *parser) error {
	data := p.data
	if len(data) > l.MaxSize {
		return &Error{Kind: TooLarge, Offset: l.MaxSize, Reason: fmt.Sprintf("document is %d bytes, the limit is %d", len(data), l.MaxSize)}
	}
	if !utf8.Valid(data) {
		return &Error{Kind: InvalidUTF8, Offset: firstInvalidUTF8(data), Reason: "not valid UTF-8"}
	}
	p.maxDepth = l.MaxDepth
	p.ws()
	if p.i == len(data) {
		return &Error{Kind: Empty, Offset: 0, Reason: "no JSON value"}
	}
	if err := p.value(0); err != nil {
		return err
	}
	p.ws()
	if p.i != len(data) {
		return &Error{Kind: Trailing, Offset: p.i, Reason: "data after the JSON value (exactly one value is allowed)"}
	}
	return nil
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// parser is the one JSON tokenizer in Cairn: the strict gate, and through AppendSpans and Walk
// the secret scan's view of a document. Nesting is bounded by maxDepth before each level is
// entered, so a hostile document cannot exhaust the stack.
type parser struct {
	data     []byte
	i        int
	maxDepth int
	keys     [][]byte    // the keys of the objects being read, innermost last
	collect  bool        // gather escaped strings' spans
	spans    []int       // start, end of each
	mark     int         // spans before it were handed to batch
	batch    func([]int) // see AppendSpans
	visit    func(s string, part Part, path []Step) bool
	path     []Step
	names    []string                              // see Members
	members  []json.RawMessage                     // the values of names' members
	each     func(at int, name, value []byte) bool // see Each: data is only known to be JSON
}

// smallObject is how many keys an object may have before its duplicate check uses a map.
const smallObject = 16

func (p *parser) errf(kind Kind, format string, a ...any) *Error {
	return &Error{Kind: kind, Offset: p.i, Reason: fmt.Sprintf(format, a...)}
}

func (p *parser) ws() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) error {
	if p.i >= len(p.data) {
		return p.errf(Syntax, "unexpected end of input")
	}
	at := p.i
	switch c := p.data[p.i]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			return p.errf(TooDeep, "nested deeper than %d levels", p.maxDepth)
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"':
		start, end, esc, err := p.str()
		if err != nil {
			return err
		}
		if !esc && p.visit == nil {
			return nil // most strings: nothing to collect or visit
		}
		return p.text(start, end, esc, String)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.literal(at, p.number())
	case c == 't':
		return p.literal(at, p.lit("true"))
	case c == 'f':
		return p.literal(at, p.lit("false"))
	case c == 'n':
		return p.literal(at, p.lit("null"))
	default:
		// The character, not its first byte: a byte order mark's is "ï".
		switch r, _ := utf8.DecodeRune(p.data[p.i:]); r {
		case '\ufeff':
			return p.errf(Syntax, "unexpected byte order mark (U+FEFF): remove it")
		default:
			return p.errf(Syntax, "unexpected %q", r)
		}
	}
}

// literal hands the number or literal read from start (err is its reading's) to the visitor.
func (p *parser) literal(start int, err error) error {
	if err != nil || p.visit == nil {
		return err
	}
	if p.visit(string(p.data[start:p.i]), Literal, p.path) {
		return errStopped
	}
	return nil
}

// text hands the string whose body is data[start:end] to the collector and the visitor.
func (p *parser) text(start, end int, esc bool, part Part) error {
	if esc && p.collect {
		p.spans = append(p.spans, start, end)
		if p.batch != nil && len(p.spans)-p.mark >= batchLen {
			// Full slice: appending to the run cannot write into spans, and spans growing
			// into a new array leaves the run where it was.
			p.batch(p.spans[p.mark:len(p.spans):len(p.spans)])
			p.mark = len(p.spans)
		}
	}
	if p.visit == nil {
		return nil
	}
	var s string
	if esc {
		s = string(AppendUnescaped(nil, p.data[start:end]))
	} else {
		s = string(p.data[start:end])
	}
	if p.visit(s, part, p.path) {
		return errStopped
	}
	return nil
}

func (p *parser) lit(s string) error {
	if !bytes.HasPrefix(p.data[p.i:], []byte(s)) {
		return p.errf(Syntax, "invalid literal (want %s)", s)
	}
	p.i += len(s)
	return nil
}

func (p *parser) object(depth int) error {
	p.i++ // {
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return nil
	}
	base := len(p.keys)
	defer func() { p.keys = p.keys[:base] }()
	var seen map[string]struct{} // for a large object
	for {
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.errf(Syntax, "expected a string key")
		}
		at := p.i
		start, end, esc, err := p.str()
		if err != nil {
			return err
		}
		key := p.data[start:end]
		if esc {
			key = AppendUnescaped(nil, key)
		}
		var dup bool
		switch {
		case p.each != nil: // duplicates are the caller's
		case seen != nil:
			_, dup = seen[string(key)]
			seen[string(key)] = struct{}{}
		default:
			dup = slices.ContainsFunc(p.keys[base:], func(k []byte) bool { return bytes.Equal(k, key) })
			p.keys = append(p.keys, key)
			if len(p.keys)-base > smallObject {
				seen = make(map[string]struct{}, 2*smallObject)
				for _, k := range p.keys[base:] {
					seen[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			// The key is named by its offset and length, never quoted: it may be a secret.
			return &Error{Kind: DuplicateKey, Offset: at, Reason: fmt.Sprintf("duplicate key (a %d-byte key already in this object)", len(key))}
		}
		if esc || p.visit != nil {
			if err := p.text(start, end, esc, Key); err != nil {
				return err
			}
		}
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.errf(Syntax, "expected ':' after key")
		}
		p.i++
		p.ws()
		if p.visit != nil {
			p.path = append(p.path, Step{Key: string(key), Index: -1})
		}
		vstart := p.i
		if err := p.value(depth); err != nil {
			return err
		}
		if depth == 1 && p.each != nil && !p.each(at, key, p.data[vstart:p.i]) {
			return errStopped
		}
		if depth == 1 && p.names != nil {
			if j := slices.Index(p.names, string(key)); j >= 0 {
				p.members[j] = p.data[vstart:p.i]
			}
		}
		if p.visit != nil {
			p.path = p.path[:len(p.path)-1]
		}
		if more, err := p.next('}', "object"); !more {
			return err
		}
	}
}

func (p *parser) array(depth int) error {
	p.i++ // [
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return nil
	}
	for n := 0; ; n++ {
		p.ws()
		if p.visit != nil {
			p.path = append(p.path, Step{Index: n})
		}
		if err := p.value(depth); err != nil {
			return err
		}
		if p.visit != nil {
			p.path = p.path[:len(p.path)-1]
		}
		if more, err := p.next(']', "array"); !more {
			return err
		}
	}
}

// next reads what follows a member or an element: ',' (more to come) or the closing byte.
func (p *parser) next(closing byte, in string) (more bool, err error) {
	p.ws()
	switch {
	case p.i >= len(p.data):
		return false, p.errf(Syntax, "unexpected end of input in %s", in)
	case p.data[p.i] == ',':
		p.i++
		return true, nil
	case p.data[p.i] == closing:
		p.i++
		return false, nil
	}
	return false, p.errf(Syntax, "expected ',' or '%c' in %s", closing, in)
}

// str scans the string at p.i and returns the bounds of its body and whether it has escapes.
func (p *parser) str() (start, end int, escaped bool, err error) {
	at := p.i
	p.i++ // "
	start = p.i
	for p.i < len(p.data) {
		p.i += plain(p.data[p.i:])
		if p.i == len(p.data) {
			break
		}
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			return start, p.i - 1, escaped, nil
		case c < 0x20:
			return 0, 0, false, p.errf(Syntax, "control character 0x%02x in string (must be escaped)", c)
		}
		escaped = true
		p.i++ // \
		if p.i >= len(p.data) {
			return 0, 0, false, p.errf(Syntax, "unexpected end of input in string")
		}
		switch p.data[p.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			if _, ok := hex4(p.data[p.i+1:]); !ok {
				return 0, 0, false, p.errf(Syntax, "invalid \\u escape")
			}
			p.i += 5
		default:
			return 0, 0, false, p.errf(Syntax, "invalid escape \\%c", p.data[p.i])
		}
	}
	return 0, 0, false, &Error{Kind: Syntax, Offset: at, Reason: "unterminated string"}
}

// plain returns the length of the run at the start of b that a string holds as it stands: up
// to the first quote, backslash or control character, or all of b. It tests eight bytes at a
// time (the strict check of a 1 MB checkpoint spends most of its time here): a byte is flagged
// when it equals '"' or '\\', or is below 0x20, and a borrow can only flag bytes after a byte
// that is flagged itself, so the lowest flag is exact.
func plain(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		if t := ((q-ones)&^q | (bs-ones)&^bs | (w-ones*0x20)&^w) & highs; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// AppendUnescaped appends the text of a JSON string body (without its quotes) to dst with its
// escapes decoded as encoding/json decodes them (a lone surrogate becomes U+FFFD). A malformed
// escape, which only a body that did not pass Check can hold, is appended as it stands.
func AppendUnescaped(dst, body []byte) []byte {
	for i := 0; i < len(body); i++ {
		// The text up to the next backslash goes over in one copy.
		if n := bytes.IndexByte(body[i:], '\\'); n != 0 {
			if n < 0 {
				n = len(body) - i
			}
			dst = append(dst, body[i:i+n]...)
			i += n - 1
			continue
		}
		if i+1 >= len(body) {
			dst = append(dst, '\\')
			continue
		}
		i++
		switch body[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case '"', '\\', '/':
			dst = append(dst, body[i])
		case 'u':
			r, ok := hex4(body[i+1:])
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if d, ok := pair(r, body[i+1:]); ok {
					dst = utf8.AppendRune(dst, d)
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, '\\', body[i])
		}
	}
	return dst
}

// pair is the character the surrogate r makes with the \u escape at the start of rest; ok is
// false when r is half of a pair whose other half is not there.
func pair(r rune, rest []byte) (rune, bool) {
	var r2 rune // 0, not a low surrogate, when no \u escape follows
	if bytes.HasPrefix(rest, []byte(`\u`)) {
		r2, _ = hex4(rest[2:])
	}
	d := utf16.DecodeRune(r, r2)
	return d, d != utf8.RuneError
}

// LoneSurrogate is the byte offset in the JSON string body (without its quotes) of the first
// \u escape of half a UTF-16 surrogate pair whose other half does not follow, or -1. Such an
// escape is valid JSON but no character: encoding/json, and AppendUnescaped, read it as U+FFFD.
func LoneSurrogate(body []byte) int {
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		at := i
		if i++; i >= len(body) || body[i] != 'u' {
			continue
		}
		r, ok := hex4(body[i+1:])
		if !ok {
			continue
		}
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if _, ok := pair(r, body[i+1:]); !ok {
			return at
		}
		i += 6
	}
	return -1
}

// hex4 reads the four hex digits at the start of b; ok is false when b does not begin with
// four.
func hex4(b []byte) (r rune, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) number() error {
	d := p.data
	start := p.i
	if d[p.i] == '-' {
		p.i++
	}
	big := false // an exponent or more than 308 digits: beyond float64, maybe
	if p.i < len(d) && d[p.i] == '0' {
		p.i++
	} else if n := p.digits(); n == 0 {
		return p.errf(Syntax, "invalid number")
	} else {
		big = n > 308
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return p.errf(Syntax, "invalid number: digit expected after '.'")
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return p.errf(Syntax, "invalid number: digit expected in exponent")
		}
		big = true
	}
	// encoding/json decodes a number into any as a float64 and fails beyond its range: such
	// a document would pass the gate and then not load. The number is not repeated.
	if big && p.each == nil {
		if _, err := strconv.ParseFloat(unsafe.String(&d[start], p.i-start), 64); err != nil {
			return &Error{Kind: NumberRange, Offset: start, Reason: "number out of range: its magnitude is beyond a 64-bit" +
				" float's (about 1.8e308); write it as a string"}
		}
	}
	return nil
}

// digits skips a run of decimal digits and returns its length.
func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// Compact checks data and returns it on one line with insignificant whitespace removed.
func Compact(data []byte) ([]byte, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data))
	if err := json.Compact(&b, data); err != nil {
		return nil, &Error{Kind: Syntax, Reason: err.Error()}
	}
	return b.Bytes(), nil
}

// Object checks data and returns its top-level members by exact key. It fails for anything
// but an object. Matching is exact, unlike encoding/json's case-insensitive field match, so
// "Revision" never stands in for "revision".
func Object(data []byte) (map[string]json.RawMessage, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	// Check accepted data, so no key repeats and it holds a value.
	i := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	if data[i] != '{' {
		return nil, &Error{Kind: Syntax, Offset: i, Reason: "expected a JSON object"}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &Error{Kind: Syntax, Offset: i, Reason: err.Error()}
	}
	return m, nil
}

// Members checks data as Object does and returns the values of its top-level members named
// names, by exact key, in names' order (nil for one that is absent): what Object's map holds
// for them, read in Check's pass without building the map.
func Members(data []byte, names ...string) ([]json.RawMessage, error) {
	p := &parser{data: data, names: names, members: make([]json.RawMessage, len(names))}
	if err := Default.run(p); err != nil {
		return nil, err
	}
	i := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	if data[i] != '{' {
		return nil, &Error{Kind: Syntax, Offset: i, Reason: "expected a JSON object"}
	}
	return p.members, nil
}

// Each calls f with the name (unescaped) and the value of each top-level member of the object
// data, in order, until f returns false. data must be valid JSON (json.Valid): it may be
// larger, deeper or hold more than Check accepts, and is read in place, without checks, as a
// message may be megabytes. Nothing is called when data is not an object.
func Each(data []byte, f func(name, value []byte) bool) {
	each(data, func(_ int, name, value []byte) bool { return f(name, value) })
}

func each(data []byte, f func(at int, name, value []byte) bool) {
	p := &parser{data: data, maxDepth: math.MaxInt, each: f}
	if p.ws(); p.i < len(data) && data[p.i] == '{' {
		_ = p.value(0)
	}
}

// FoldedTwice returns the first name of a top-level member of the object data that another
// member has before it as encoding/json matches a name to a struct field: unescaped, whatever
// its case ("id", "ID" and "\u0069d" are one), the name as first written, and a DuplicateKey
// *Error at the second one; nil, nil when there is none. data must be valid JSON, as for
// Each. It keeps a hash of each name, not the name: a message of megabytes may hold hundreds
// of thousands of members.
func FoldedTwice(data []byte) (name []byte, err error) {
	n := 0
	Each(data, func(_, _ []byte) bool { n++; return true })
	seed := maphash.MakeSeed()
	hashes := make([]uint64, 0, n) // counted first: grown by append, it costs several times more
	Each(data, func(key, _ []byte) bool { hashes = append(hashes, foldHash(seed, key)); return true })
	slices.Sort(hashes)
	twice := map[uint64]bool{}
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			twice[hashes[i]] = true
		}
	}
	if len(twice) == 0 {
		return nil, nil
	}
	// Read again for the names whose hashes met: they may differ all the same.
	first := map[string][]byte{} // name as encoding/json folds it -> as first written
	each(data, func(at int, key, _ []byte) bool {
		if !twice[foldHash(seed, key)] {
			return true
		}
		k := string(bytes.Map(foldRune, key))
		if _, seen := first[k]; !seen {
			first[k] = key
			return true
		}
		name, err = first[k], &Error{Kind: DuplicateKey, Offset: at, Reason: fmt.Sprintf("duplicate key (a %d-byte key already in this object, in another case or spelling)", len(key))}
		return false
	})
	return name, err
}

// foldRune folds a rune as encoding/json does to match a member to a field, so that two names
// are one when bytes.EqualFold says so.
func foldRune(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }

// foldHash is a hash of key folded (foldRune).
func foldHash(seed maphash.Seed, key []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var buf [utf8.UTFMax]byte
	for len(key) > 0 {
		r, n := utf8.DecodeRune(key)
		h.Write(utf8.AppendRune(buf[:0], foldRune(r)))
		key = key[n:]
	}
	return h.Sum64()
}
