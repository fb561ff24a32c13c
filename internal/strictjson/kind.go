package strictjson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// KindOf names the kind of the JSON value raw holds, with its article ("an object", "a
// string", "null", ...), for error messages; "nothing" for no value. raw is not checked.
func KindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Mistyped says, in JSON's words, what te (encoding/json's refusal of a value of the wrong
// type) refused: the member's JSON path without Go's struct names ("" at the top), the kind it
// takes and the kind it got ("" when the number was one Go could not store: a fraction, or out
// of range). No Go type name is in any of them.
func Mistyped(te *json.UnmarshalTypeError) (where, want, got string) {
	var path []string
	for seg := range strings.SplitSeq(te.Field, ".") {
		// An embedded Go struct's name is in the path, and no JSON member Cairn reads starts
		// upper case.
		if seg != "" && !unicode.IsUpper(rune(seg[0])) {
			path = append(path, seg)
		}
	}
	t := te.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number"
	case reflect.Slice, reflect.Array:
		want = "an array"
	default:
		want = "an object"
	}
	if !strings.HasPrefix(te.Value, "number ") {
		got = map[string]string{"string": "a string", "number": "a number", "bool": "a boolean",
			"array": "an array", "object": "an object"}[te.Value]
		got = cmp.Or(got, "that")
	}
	return strings.Join(path, "."), want, got
}

// Explain is err, as encoding/json returned it, with its refusal of a value of the wrong type
// said in JSON's words ("context must be a string, not a number": Mistyped) for a person or the
// model to read, where encoding/json's names Go's struct and types; errors.As still finds the
// refusal. Any other error is returned as it is.
func Explain(err error) error { return ExplainIn(nil, err) }

// ExplainIn is Explain for err returned by decoding data, whose refusal then names the member
// by its whole path, map keys and array indices too ("vars.WF_N", "phases.plan.completed",
// "tasks[1].id"): encoding/json's path has only the struct members, and "vars must be a
// string" said of a map of strings sends the reader to the wrong place.
func ExplainIn(data []byte, err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return &mistypedError{te, pathOf(data, te)}
	}
	return err
}

type mistypedError struct {
	te   *json.UnmarshalTypeError
	path string // "" when not found in the data: Mistyped's
}

func (e *mistypedError) Error() string {
	where, want, got := Mistyped(e.te)
	where = cmp.Or(e.path, where, "the value")
	if got == "" && want == "a number" {
		// encoding/json quotes a number it cannot store (1e999, megabytes of digits) in full.
		return where + " " + BeyondFloat
	}
	return where + " must be " + want + ", not " + cmp.Or(got, "a fraction or a number out of range")
}

// BeyondFloat says what is wrong with a member that holds a number encoding/json cannot read
// (the number is not repeated).
const BeyondFloat = "holds a number beyond the range of a 64-bit float (about ±1.8e308), which cannot be read"

func (e *mistypedError) Unwrap() error { return e.te }

// pathOf is the whole JSON path in data of the value te refused, or "" when it cannot be told.
// It is the first value, in the order of data, of the kind te names whose path without map
// keys and array indices holds te's struct members in order, and that ends where te says: te's
// offset counts from the start of data or, when a type's own UnmarshalJSON decoded it, from
// the start of a value that holds it.
func pathOf(data []byte, te *json.UnmarshalTypeError) string {
	if len(data) == 0 {
		return ""
	}
	kind, _, _ := strings.Cut(te.Value, " ") // "number 1e999" is a number
	var members []string
	for seg := range strings.SplitSeq(te.Field, ".") {
		if seg != "" && !unicode.IsUpper(rune(seg[0])) { // as Mistyped
			members = append(members, seg)
		}
	}
	var stack []pathFrame // the objects and arrays the decoder is in, outermost first
	// advance moves the innermost array or object past the value just read.
	advance := func() {
		if n := len(stack); n > 0 {
			stack[n-1].index++
			stack[n-1].hasKey = false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if n := len(stack); n > 0 && !stack[n-1].array && !stack[n-1].hasKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].hasKey = key, true
				continue
			}
		}
		end := dec.InputOffset() // where encoding/json's offset points: past a literal, inside a { or [
		var got string
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '}' || tok == ']' {
				stack = stack[:len(stack)-1]
				advance()
				continue
			}
			got = map[json.Delim]string{'{': "object", '[': "array"}[tok]
		case string:
			got = "string"
		case json.Number:
			got = "number"
		case bool:
			got = "bool"
		}
		if got == kind && holdsInOrder(stack, members) && endsAt(stack, end, te.Offset) {
			return pathText(stack) // "" for a key not said back
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, pathFrame{start: end - 1, array: d == '['})
			continue
		}
		advance()
	}
}

// pathFrame is an array or object pathOf is in.
type pathFrame struct {
	start  int64 // the offset of its { or [
	array  bool
	index  int    // in an array, of the value read next
	key    string // in an object, the name of the member being read
	hasKey bool
}

// holdsInOrder says whether the member names on the path hold members in order.
func holdsInOrder(stack []pathFrame, members []string) bool {
	for _, f := range stack {
		if len(members) > 0 && !f.array && f.key == members[0] {
			members = members[1:]
		}
	}
	return len(members) == 0
}

// endsAt says whether a value read up to end is at offset from the start of the data or of
// a value that holds it.
func endsAt(stack []pathFrame, end, offset int64) bool {
	if end == offset {
		return true
	}
	return slices.ContainsFunc(stack, func(f pathFrame) bool { return end-f.start == offset })
}

// pathText writes a path as the tools' errors do: members by name, elements by index; "" when
// a name is not a short word (a hand-edited file's key may be anything, a secret too).
func pathText(stack []pathFrame) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case !f.array && (len(f.key) == 0 || len(f.key) > 64 || strings.ContainsFunc(f.key, func(r rune) bool {
			return !(r == '_' || r == '-' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
		})):
			return ""
		case f.array:
			fmt.Fprintf(&b, "[%d]", f.index)
		case b.Len() > 0:
			b.WriteString("." + f.key)
		default:
			b.WriteString(f.key)
		}
	}
	return b.String()
}
