package jsonx

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The writer is Reader's counterpart: hand-written encoders of small fixed shapes (the hooks'
// output, the session record, the L2 ledger) that give the bytes encoding/json gives, without
// its reflection, which every short-lived hook process would pay for cold.

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string, escaped exactly as encoding/json escapes
// it: with escapeHTML as json.Marshal does (<, > and & as \u003c, \u003e and \u0026), without
// as an Encoder after SetEscapeHTML(false). Either way '"' and '\' are escaped, \b \f \n \r
// and \t take their short forms, other control characters are \u00XX, U+2028 and U+2029 are
// escaped (JavaScript ends a line at them), and each byte of invalid UTF-8 becomes \ufffd.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ObjectWriter writes one JSON object as encoding/json writes a struct: members in the order
// they are written, no white space, strings escaped as AppendString does. Leaving out empty
// values (omitempty) is the caller's part.
type ObjectWriter struct {
	buf        []byte
	escapeHTML bool
	members    int
}

// NewObjectWriter starts an object at the end of dst. escapeHTML is json.Marshal's default;
// false is an Encoder after SetEscapeHTML(false).
func NewObjectWriter(dst []byte, escapeHTML bool) *ObjectWriter {
	return &ObjectWriter{buf: append(dst, '{'), escapeHTML: escapeHTML}
}

func (w *ObjectWriter) key(k string) {
	if w.members > 0 {
		w.buf = append(w.buf, ',')
	}
	w.members++
	w.buf = AppendString(w.buf, k, w.escapeHTML)
	w.buf = append(w.buf, ':')
}

// String writes a string member.
func (w *ObjectWriter) String(key, v string) {
	w.key(key)
	w.buf = AppendString(w.buf, v, w.escapeHTML)
}

// Int writes a number member.
func (w *ObjectWriter) Int(key string, v int64) {
	w.key(key)
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

// Bool writes a true or false member.
func (w *ObjectWriter) Bool(key string, v bool) {
	w.key(key)
	w.buf = strconv.AppendBool(w.buf, v)
}

// Strings writes an array of strings; nil is null, as encoding/json writes a nil slice.
func (w *ObjectWriter) Strings(key string, v []string) {
	w.key(key)
	if v == nil {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = append(w.buf, '[')
	for i, s := range v {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = AppendString(w.buf, s, w.escapeHTML)
	}
	w.buf = append(w.buf, ']')
}

// Time writes a time as encoding/json does, through its MarshalJSON (RFC 3339 with the
// nanoseconds it has). A year outside 0-9999 has no such form: the error is
// MarshalJSON's, and the object is left without the member.
func (w *ObjectWriter) Time(key string, t time.Time) error {
	b, err := t.MarshalJSON()
	if err != nil {
		return err
	}
	w.key(key)
	w.buf = append(w.buf, b...)
	return nil
}

// Raw writes a member whose value is already JSON, such as a nested object from another
// ObjectWriter. It is written as it is: it must be one compact, valid value.
func (w *ObjectWriter) Raw(key string, v []byte) {
	w.key(key)
	w.buf = append(w.buf, v...)
}

// Close ends the object and returns the buffer holding it (dst, extended). The writer must
// not be used afterwards.
func (w *ObjectWriter) Close() []byte {
	return append(w.buf, '}')
}
