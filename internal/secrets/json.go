package secrets

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the walk's recursion; a deeper document is scanned as plain text instead.
const maxDepth = 512

// ScanJSON reports the first secret in a JSON document, in a value or in an object key, with
// its JSON path; nil when it finds none. Escapes are decoded first, so "\u0041KIA..." is seen
// as "AKIA...". A document that is not valid JSON (or nests deeper than 512) is scanned as
// text and a finding gets the path "$".
func ScanJSON(doc []byte) *Finding {
	s := string(doc)
	// Fast path: every string of the document, decoded, is a substring of flat, so when flat
	// holds no secret neither does any string. ("secret" may still name a key whose value is
	// an AWS secret key, which only the walk sees.) Without escapes flat is the document.
	flat := s
	if strings.IndexByte(s, '\\') >= 0 {
		flat = flatten(s)
	}
	some := match(flat) != nil
	if !some && indexFold(flat, "secret") < 0 {
		return nil
	}
	w := walker{s: s, values: some}
	w.skipSpace()
	f, err := w.value("", 0)
	if f != nil {
		return f // found before the end: whatever follows cannot make it less of a secret
	}
	if err == nil {
		w.skipSpace()
		if w.i != len(s) {
			err = errSyntax
		}
	}
	if err != nil {
		r := match(flat)
		if r == nil {
			r = match(s)
		}
		if r != nil {
			return &Finding{Rule: r.name, Path: "$"}
		}
		return nil
	}
	return f
}

type syntaxError struct{}

func (syntaxError) Error() string { return "not valid JSON" }

var errSyntax error = syntaxError{}

// walker is a minimal JSON reader: it checks just enough syntax to know what is a key and what
// a value, and keeps the path to the current value.
type walker struct {
	s    string
	i    int
	path []segment
	// values: run the rules on every key and value. When the fast path found nothing, only
	// the key-context check (AWS secret keys) can still find something.
	values bool
}

type segment struct {
	key   string
	index int // -1 for an object member
}

// value scans the value at w.i. key is the member name it belongs to ("" in arrays).
func (w *walker) value(key string, depth int) (*Finding, error) {
	if depth > maxDepth {
		return nil, errSyntax
	}
	if w.i >= len(w.s) {
		return nil, errSyntax
	}
	switch c := w.s[w.i]; {
	case c == '{':
		return w.object(depth)
	case c == '[':
		return w.array(depth)
	case c == '"':
		v, err := w.str()
		if err != nil {
			return nil, err
		}
		if w.values {
			if r := match(v); r != nil {
				return &Finding{Rule: r.name, Path: w.render()}, nil
			}
		}
		if key != "" && awsSecretKeyName(key) && awsSecretValue().MatchString(v) && mixedCase(v) {
			return &Finding{Rule: "aws-secret-access-key", Path: w.render()}, nil
		}
		return nil, nil
	default:
		return nil, w.scalar()
	}
}

func (w *walker) object(depth int) (*Finding, error) {
	w.i++ // {
	w.skipSpace()
	if w.peek() == '}' {
		w.i++
		return nil, nil
	}
	for {
		if w.peek() != '"' {
			return nil, errSyntax
		}
		k, err := w.str()
		if err != nil {
			return nil, err
		}
		if w.values {
			if r := match(k); r != nil {
				return &Finding{Rule: r.name, Path: w.render(), InKey: true}, nil
			}
		}
		w.skipSpace()
		if w.peek() != ':' {
			return nil, errSyntax
		}
		w.i++
		w.skipSpace()
		w.path = append(w.path, segment{key: k, index: -1})
		f, err := w.value(k, depth+1)
		w.path = w.path[:len(w.path)-1]
		if f != nil || err != nil {
			return f, err
		}
		w.skipSpace()
		switch w.peek() {
		case ',':
			w.i++
			w.skipSpace()
		case '}':
			w.i++
			return nil, nil
		default:
			return nil, errSyntax
		}
	}
}

func (w *walker) array(depth int) (*Finding, error) {
	w.i++ // [
	w.skipSpace()
	if w.peek() == ']' {
		w.i++
		return nil, nil
	}
	for n := 0; ; n++ {
		w.path = append(w.path, segment{index: n})
		f, err := w.value("", depth+1)
		w.path = w.path[:len(w.path)-1]
		if f != nil || err != nil {
			return f, err
		}
		w.skipSpace()
		switch w.peek() {
		case ',':
			w.i++
			w.skipSpace()
		case ']':
			w.i++
			return nil, nil
		default:
			return nil, errSyntax
		}
	}
}

// str reads a string at w.i and returns it decoded. Strings without escapes are returned as
// substrings of the document, without copying.
func (w *walker) str() (string, error) {
	start := w.i
	w.i++ // opening quote
	escaped := false
	for w.i < len(w.s) {
		switch c := w.s[w.i]; {
		case c == '"':
			w.i++
			raw := w.s[start:w.i]
			if !escaped {
				return raw[1 : len(raw)-1], nil
			}
			var b strings.Builder
			b.Grow(len(raw))
			unescape(&b, raw[1:len(raw)-1])
			return b.String(), nil
		case c == '\\':
			escaped = true
			w.i += 2
		case c < 0x20:
			return "", errSyntax
		default:
			w.i++
		}
	}
	return "", errSyntax
}

// flatten returns the document with every string replaced by its decoded text between line
// breaks. It checks no syntax: it only has to put every string's decoded text, and any text
// outside strings, somewhere in its result.
func flatten(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+q])
		b.WriteByte('\n')
		i += q + 1
		start, esc := i, false
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				esc = true
				i++
			}
			i++
		}
		raw := s[start:min(i, len(s))]
		i++
		if esc {
			unescape(&b, raw)
		} else {
			b.WriteString(raw)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// unescape writes the JSON string body raw with its escapes decoded; a malformed escape is
// written as it stands.
func unescape(b *strings.Builder, raw string) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			b.WriteByte(raw[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, n := hex4(raw[i+1:])
			if n == 0 {
				b.WriteString(`\u`)
				continue
			}
			i += n
			if utf16.IsSurrogate(r) {
				if len(raw) >= i+7 && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if r2, n2 := hex4(raw[i+3:]); n2 == 4 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			b.WriteByte('\\')
			b.WriteByte(raw[i])
		}
	}
}

// hex4 decodes four hex digits at the start of s; n is 4, or 0 when they are not there.
func hex4(s string) (r rune, n int) {
	if len(s) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

// scalar skips a number, true, false or null.
func (w *walker) scalar() error {
	start := w.i
	for w.i < len(w.s) {
		c := w.s[w.i]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		w.i++
	}
	tok := w.s[start:w.i]
	switch tok {
	case "true", "false", "null":
		return nil
	}
	if tok == "" || !json.Valid([]byte(tok)) {
		return errSyntax
	}
	return nil
}

func (w *walker) skipSpace() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *walker) peek() byte {
	if w.i < len(w.s) {
		return w.s[w.i]
	}
	return 0
}

// Paths stay short in error messages: keys are cut at maxKeyRunes and a path longer than
// maxPathBytes keeps its start and its end.
const (
	maxKeyRunes  = 40
	maxPathBytes = 200
)

// render writes the current path: $.a.b[2], $["odd key"], keys quoted with Go escapes so
// control, bidi and other invisible characters show as escapes.
func (w *walker) render() string {
	segs := make([]string, len(w.path))
	for i, p := range w.path {
		segs[i] = p.String()
	}
	out := "$" + strings.Join(segs, "")
	if len(out) <= maxPathBytes {
		return out
	}
	// Keep "$" and the first segment, then as many trailing segments as fit.
	head := "$" + segs[0] + "…"
	tail := ""
	for i := len(segs) - 1; i > 0; i-- {
		if len(head)+len(segs[i])+len(tail) > maxPathBytes {
			break
		}
		tail = segs[i] + tail
	}
	return head + tail
}

func (p segment) String() string {
	if p.index >= 0 {
		return "[" + strconv.Itoa(p.index) + "]"
	}
	if isIdent(p.key) {
		return "." + p.key
	}
	k := p.key
	if utf8.RuneCountInString(k) > maxKeyRunes {
		k = string([]rune(k)[:maxKeyRunes]) + "…"
	}
	return "[" + strconv.QuoteToGraphic(k) + "]"
}

func isIdent(k string) bool {
	if k == "" || len(k) > maxKeyRunes {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
