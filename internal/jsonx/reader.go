package jsonx

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Reader walks one JSON value in a single pass, for hand-written decoders of a known shape
// (the workflow record), which would otherwise pay for encoding/json's reflection in every
// short-lived hook process. Unlike Check it follows encoding/json's rules, not the strict
// ones, so that such a decoder accepts and refuses what json.Unmarshal does: duplicate keys
// are allowed, invalid UTF-8 in a string decodes to U+FFFD, and nesting is limited to 10,000
// levels. It validates everything it passes over, including values read with Raw.
//
// A decoder pulls values in document order: Object then Member until it reports false, Array
// then Element until it reports false, and one of Null, String, Bool, Int64 or Raw for each
// value. Errors are *Error with the byte offset; a value of the wrong type gives Kind
// WrongType.
type Reader struct {
	data  []byte
	off   int
	depth int
	// first is set by Object and Array and cleared by the following Member or Element call,
	// which then knows that no comma is due. One flag serves every level because a nested
	// value is always read to its end before the enclosing Member or Element runs again.
	first bool
}

// maxReaderDepth is encoding/json's nesting limit, so that the Reader refuses the same
// documents json.Unmarshal does.
const maxReaderDepth = 10000

// NewReader returns a Reader positioned before the one JSON value in data.
func NewReader(data []byte) *Reader { return &Reader{data: data} }

// Offset is the byte offset of the next unread byte.
func (r *Reader) Offset() int { return r.off }

func (r *Reader) syntaxf(format string, a ...any) error {
	return &Error{Kind: Syntax, Offset: r.off, Reason: fmt.Sprintf(format, a...)}
}

// unexpected describes the byte at r.off (or the end of input) where a value or a delimiter
// was due.
func (r *Reader) unexpected(want string) error {
	if r.off >= len(r.data) {
		return r.syntaxf("unexpected end of input, expected %s", want)
	}
	return r.syntaxf("unexpected %s, expected %s", quoteByte(r.data[r.off]), want)
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (r *Reader) ws() {
	for r.off < len(r.data) {
		switch r.data[r.off] {
		case ' ', '\t', '\n', '\r':
			r.off++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end of input.
func (r *Reader) peek() byte {
	r.ws()
	if r.off >= len(r.data) {
		return 0
	}
	return r.data[r.off]
}

// typeName names the JSON type a value starting with c has, "" when c starts none.
func typeName(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return ""
}

// wrongType reports that the next value is not of the type want. The value is checked first,
// so that a malformed one ("nul", "[1,") is reported as the syntax error it is.
func (r *Reader) wrongType(want string) error {
	got := typeName(r.peek())
	start := r.off
	if start >= len(r.data) {
		return r.unexpected(want)
	}
	if err := r.skip(); err != nil {
		return err
	}
	return &Error{Kind: WrongType, Offset: start, Reason: fmt.Sprintf("expected %s, found %s", want, got)}
}

// Null consumes the next value and reports true when it is null; otherwise it consumes
// nothing. encoding/json gives null a meaning of its own for every type (leave the field as
// it is, or set it to nil), so a decoder asks this first.
func (r *Reader) Null() bool {
	if r.peek() == 'n' && r.off+4 <= len(r.data) && string(r.data[r.off:r.off+4]) == "null" {
		r.off += 4
		return true
	}
	return false
}

// Object consumes the '{' that opens the next value, which must be an object.
func (r *Reader) Object() error {
	if r.peek() != '{' {
		return r.wrongType("an object")
	}
	return r.open()
}

// Array consumes the '[' that opens the next value, which must be an array.
func (r *Reader) Array() error {
	if r.peek() != '[' {
		return r.wrongType("an array")
	}
	return r.open()
}

func (r *Reader) open() error {
	if r.depth++; r.depth > maxReaderDepth {
		return r.syntaxf("nested deeper than %d levels", maxReaderDepth)
	}
	r.off++
	r.first = true
	return nil
}

// Member reads the next member's key and the ':' after it, leaving the value to be read; at
// the closing '}' it consumes it and returns ok false. The key is unescaped as encoding/json
// unescapes it.
func (r *Reader) Member() (key string, ok bool, err error) {
	c := r.peek()
	if c == '}' {
		r.off++
		r.depth--
		r.first = false
		return "", false, nil
	}
	if !r.first {
		if c != ',' {
			return "", false, r.unexpected("',' or '}' after an object member")
		}
		r.off++
		c = r.peek()
	}
	r.first = false
	if c != '"' {
		return "", false, r.unexpected("a string key")
	}
	if key, err = r.str(); err != nil {
		return "", false, err
	}
	if r.peek() != ':' {
		return "", false, r.unexpected("':' after an object key")
	}
	r.off++
	return key, true, nil
}

// Element reports whether the array has another element, consuming the ',' before it; at the
// closing ']' it consumes it and returns false.
func (r *Reader) Element() (bool, error) {
	c := r.peek()
	if c == ']' {
		r.off++
		r.depth--
		r.first = false
		return false, nil
	}
	if r.first {
		r.first = false
		return true, nil
	}
	if c != ',' {
		return false, r.unexpected("',' or ']' after an array element")
	}
	r.off++
	return true, nil
}

// String reads the next value, which must be a string, and returns it unescaped.
func (r *Reader) String() (string, error) {
	if r.peek() != '"' {
		return "", r.wrongType("a string")
	}
	return r.str()
}

// Bool reads the next value, which must be true or false.
func (r *Reader) Bool() (bool, error) {
	switch r.peek() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	}
	return false, r.wrongType("a boolean")
}

// Int64 reads the next value, which must be a number, as encoding/json stores one in an
// int64: a fraction, an exponent or a value out of range is an error.
func (r *Reader) Int64() (int64, error) {
	c := r.peek()
	if c != '-' && (c < '0' || c > '9') {
		return 0, r.wrongType("a number")
	}
	start := r.off
	if err := r.number(); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(r.data[start:r.off]), 10, 64)
	if err != nil {
		return 0, &Error{Kind: WrongType, Offset: start, Reason: fmt.Sprintf("number %s is not a whole number in the range of a 64-bit integer", truncate(string(r.data[start:r.off]), 64))}
	}
	return n, nil
}

// Raw reads the next value, whatever its type, checks it, and returns its bytes without the
// white space around it. They are part of the data given to NewReader, not a copy.
func (r *Reader) Raw() ([]byte, error) {
	r.ws()
	start := r.off
	if err := r.skip(); err != nil {
		return nil, err
	}
	return r.data[start:r.off], nil
}

// End checks that nothing but white space follows the value.
func (r *Reader) End() error {
	if r.ws(); r.off < len(r.data) {
		return &Error{Kind: Trailing, Offset: r.off, Reason: "data after the JSON value (exactly one value is allowed)"}
	}
	return nil
}

// skip consumes one value at r.off (white space already skipped), checking it.
func (r *Reader) skip() error {
	if r.off >= len(r.data) {
		return r.unexpected("a value")
	}
	switch c := r.data[r.off]; {
	case c == '{':
		if err := r.open(); err != nil {
			return err
		}
		for {
			_, ok, err := r.Member()
			if err != nil || !ok {
				return err
			}
			r.ws()
			if err := r.skip(); err != nil {
				return err
			}
		}
	case c == '[':
		if err := r.open(); err != nil {
			return err
		}
		for {
			ok, err := r.Element()
			if err != nil || !ok {
				return err
			}
			r.ws()
			if err := r.skip(); err != nil {
				return err
			}
		}
	case c == '"':
		_, err := r.scanString()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	}
	return r.unexpected("a value")
}

func (r *Reader) literal(s string) error {
	if r.off+len(s) > len(r.data) || string(r.data[r.off:r.off+len(s)]) != s {
		return r.syntaxf("invalid literal, expected %s", s)
	}
	r.off += len(s)
	return nil
}

// number consumes a number with JSON's grammar. What follows it is the caller's concern: in
// "01" the number is "0" and the "1" is refused as a missing delimiter.
func (r *Reader) number() error {
	d := r.data
	if d[r.off] == '-' {
		r.off++
	}
	switch {
	case r.off < len(d) && d[r.off] == '0':
		r.off++
	case r.off < len(d) && d[r.off] >= '1' && d[r.off] <= '9':
		r.digits()
	default:
		return r.unexpected("a digit in a number")
	}
	if r.off < len(d) && d[r.off] == '.' {
		r.off++
		if r.off >= len(d) || d[r.off] < '0' || d[r.off] > '9' {
			return r.unexpected("a digit after the decimal point")
		}
		r.digits()
	}
	if r.off < len(d) && (d[r.off] == 'e' || d[r.off] == 'E') {
		r.off++
		if r.off < len(d) && (d[r.off] == '+' || d[r.off] == '-') {
			r.off++
		}
		if r.off >= len(d) || d[r.off] < '0' || d[r.off] > '9' {
			return r.unexpected("a digit in the exponent")
		}
		r.digits()
	}
	return nil
}

func (r *Reader) digits() {
	for r.off < len(r.data) && r.data[r.off] >= '0' && r.data[r.off] <= '9' {
		r.off++
	}
}

// str consumes the string at r.off and returns it unescaped.
func (r *Reader) str() (string, error) {
	start := r.off
	plain, err := r.scanString()
	if err != nil {
		return "", err
	}
	body := r.data[start+1 : r.off-1]
	if plain {
		return string(body), nil
	}
	return unquote(body), nil
}

// scanString consumes the string at r.off, checking its escapes and refusing control
// characters as encoding/json's scanner does. plain reports that the body is valid UTF-8
// without escapes, so it is its own value.
func (r *Reader) scanString() (plain bool, err error) {
	start := r.off
	r.off++ // "
	plain = true
	ascii := true
	for r.off < len(r.data) {
		c := r.data[r.off]
		switch {
		case c == '"':
			r.off++
			if plain && !ascii {
				// Bytes above 0x7f were let through; a malformed sequence must become U+FFFD.
				plain = utf8.Valid(r.data[start+1 : r.off-1])
			}
			return plain, nil
		case c == '\\':
			plain = false
			r.off++
			if r.off >= len(r.data) {
				return false, r.syntaxf("unexpected end of input in a string")
			}
			switch r.data[r.off] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.off++
			case 'u':
				if r.off+4 >= len(r.data) || !isHex4(r.data[r.off+1:r.off+5]) {
					return false, r.syntaxf("invalid \\u escape in a string (four hex digits expected)")
				}
				r.off += 5
			default:
				return false, r.syntaxf("invalid escape %s in a string", quoteByte(r.data[r.off]))
			}
		case c < 0x20:
			return false, r.syntaxf("control character 0x%02x in a string (must be escaped)", c)
		default:
			ascii = ascii && c < utf8.RuneSelf
			r.off++
		}
	}
	return false, &Error{Kind: Syntax, Offset: start, Reason: "unterminated string"}
}

// unquote decodes the body of a string that scanString accepted, as encoding/json does: a
// lone or reversed surrogate escape and each byte of malformed UTF-8 become U+FFFD.
func unquote(s []byte) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch s[i] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[i+1 : i+5])
				i += 5
				if utf16.IsSurrogate(rr) {
					rr1 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						rr1 = hex4(s[i+2 : i+6])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						i += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[i])
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			rr, size := utf8.DecodeRune(s[i:])
			b = utf8.AppendRune(b, rr)
			i += size
		}
	}
	return string(b)
}

// hex4 decodes four hex digits that scanString checked.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r*16 + rune(c)
	}
	return r
}

// MatchField returns the name in names (a struct's JSON field names, in field order) that
// encoding/json decodes a member with this key into, or "" when it matches none: an exact
// match first, else the first that is equal under Unicode case folding ("Revision" and
// "REVISION" fill revision, and so does "ſtate" state).
func MatchField(key string, names []string) string {
	for _, n := range names {
		if n == key {
			return n
		}
	}
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	return ""
}
