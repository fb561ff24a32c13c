// Package jsonx is Cairn's strict JSON gate: every document, checkpoint, log line and journal
// record passes Check before it is written or trusted. It is stricter than encoding/json, which
// accepts duplicate keys (last wins), invalid UTF-8 and 10,000 levels of nesting. It validates
// and extracts top-level fields by exact name; decoding is encoding/json's.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
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
)

// Error is what Check returns: the rule broken, a reason a person can act on, and the byte
// offset where it was found.
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
func (l Limits) Check(data []byte) error {
	if len(data) > l.MaxSize {
		return &Error{Kind: TooLarge, Offset: l.MaxSize, Reason: fmt.Sprintf("document is %d bytes, the limit is %d", len(data), l.MaxSize)}
	}
	// The depth pre-scan runs before any recursion, so a hostile document cannot exhaust the
	// stack or the time budget.
	if off, ok := depthOK(data, l.MaxDepth); !ok {
		return &Error{Kind: TooDeep, Offset: off, Reason: fmt.Sprintf("nested deeper than %d levels", l.MaxDepth)}
	}
	if !utf8.Valid(data) {
		return &Error{Kind: InvalidUTF8, Offset: firstInvalidUTF8(data), Reason: "not valid UTF-8"}
	}
	p := parser{data: data}
	p.ws()
	if p.i == len(data) {
		return &Error{Kind: Empty, Offset: 0, Reason: "no JSON value"}
	}
	if err := p.value(); err != nil {
		return err
	}
	p.ws()
	if p.i != len(data) {
		return &Error{Kind: Trailing, Offset: p.i, Reason: "data after the JSON value (exactly one value is allowed)"}
	}
	return nil
}

// depthOK scans bytes, skipping strings, and reports the offset where nesting first exceeds max.
func depthOK(data []byte, max int) (int, bool) {
	depth := 0
	inStr, esc := false, false
	for i, c := range data {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > max {
				return i, false
			}
		case ']', '}':
			depth--
		}
	}
	return 0, true
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

type parser struct {
	data []byte
	i    int
}

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

func (p *parser) value() error {
	if p.i >= len(p.data) {
		return p.errf(Syntax, "unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		_, err := p.str()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	default:
		return p.errf(Syntax, "unexpected %q", c)
	}
}

func (p *parser) lit(s string) error {
	if !bytes.HasPrefix(p.data[p.i:], []byte(s)) {
		return p.errf(Syntax, "invalid literal (want %s)", s)
	}
	p.i += len(s)
	return nil
}

func (p *parser) object() error {
	p.i++ // {
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return nil
	}
	var seen map[string]struct{}
	for {
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.errf(Syntax, "expected a string key")
		}
		start := p.i
		key, err := p.str()
		if err != nil {
			return err
		}
		if seen == nil {
			seen = make(map[string]struct{}, 8)
		}
		if _, dup := seen[key]; dup {
			return &Error{Kind: DuplicateKey, Offset: start, Reason: fmt.Sprintf("duplicate key %q", truncate(key, 64))}
		}
		seen[key] = struct{}{}
		p.ws()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.errf(Syntax, "expected ':' after key")
		}
		p.i++
		p.ws()
		if err := p.value(); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.data) {
			return p.errf(Syntax, "unexpected end of input in object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.errf(Syntax, "expected ',' or '}' in object")
		}
	}
}

func (p *parser) array() error {
	p.i++ // [
	p.ws()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if err := p.value(); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.data) {
			return p.errf(Syntax, "unexpected end of input in array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.errf(Syntax, "expected ',' or ']' in array")
		}
	}
}

// str parses a string at p.i and returns its decoded value (raw bytes when it has no escapes).
func (p *parser) str() (string, error) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			if !escaped {
				return string(p.data[start+1 : p.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.i], &s); err != nil {
				return "", &Error{Kind: Syntax, Offset: start, Reason: "invalid string"}
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.i++
			if p.i >= len(p.data) {
				return "", p.errf(Syntax, "unexpected end of input in string")
			}
			switch p.data[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+4 >= len(p.data) || !isHex4(p.data[p.i+1:p.i+5]) {
					return "", p.errf(Syntax, "invalid \\u escape")
				}
				p.i += 5
			default:
				return "", p.errf(Syntax, "invalid escape \\%c", p.data[p.i])
			}
		case c < 0x20:
			return "", p.errf(Syntax, "control character 0x%02x in string (must be escaped)", c)
		default:
			p.i++
		}
	}
	return "", &Error{Kind: Syntax, Offset: start, Reason: "unterminated string"}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *parser) number() error {
	d := p.data
	if d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case p.i < len(d) && d[p.i] >= '1' && d[p.i] <= '9':
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	default:
		return p.errf(Syntax, "invalid number")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return p.errf(Syntax, "invalid number: digit expected after '.'")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return p.errf(Syntax, "invalid number: digit expected in exponent")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
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
	return object(data)
}

// Object is the package Object under l.
func (l Limits) Object(data []byte) (map[string]json.RawMessage, error) {
	if err := l.Check(data); err != nil {
		return nil, err
	}
	return object(data)
}

// object reads the members of data, which Check accepted (so no key repeats). Anything but an
// object is an error.
func object(data []byte) (map[string]json.RawMessage, error) {
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
