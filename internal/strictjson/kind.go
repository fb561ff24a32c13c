package strictjson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"reflect"
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
func Explain(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return &mistypedError{te}
	}
	return err
}

type mistypedError struct{ te *json.UnmarshalTypeError }

func (e *mistypedError) Error() string {
	where, want, got := Mistyped(e.te)
	where = cmp.Or(where, "the value")
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
