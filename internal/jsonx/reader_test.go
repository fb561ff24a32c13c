package jsonx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// readWith reads data as one value with read and checks that nothing follows it.
func readWith[T any](data []byte, read func(d *jsonx.Reader) (T, error)) (T, error) {
	d := jsonx.NewReader(data)
	v, err := read(d)
	if err == nil {
		err = d.End()
	}
	return v, err
}

// readMembers reads an object's members the way a map[string]json.RawMessage decodes it.
func readMembers(d *jsonx.Reader) (map[string]json.RawMessage, error) {
	if d.Null() {
		return nil, nil
	}
	if err := d.Object(); err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	for {
		key, ok, err := d.Member()
		if err != nil || !ok {
			return m, err
		}
		raw, err := d.Raw()
		if err != nil {
			return nil, err
		}
		m[key] = append(json.RawMessage(nil), raw...)
	}
}

// readElements reads an array of strings the way a []string decodes it into a nil slice.
func readElements(d *jsonx.Reader) ([]string, error) {
	if d.Null() {
		return nil, nil
	}
	if err := d.Array(); err != nil {
		return nil, err
	}
	out := []string{}
	for {
		ok, err := d.Element()
		if err != nil || !ok {
			return out, err
		}
		var s string
		if !d.Null() {
			if s, err = d.String(); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
}

// nullOr gives encoding/json's meaning to null for a scalar: no error, value unchanged.
func nullOr[T any](read func(d *jsonx.Reader) (T, error)) func(d *jsonx.Reader) (T, error) {
	return func(d *jsonx.Reader) (T, error) {
		var zero T
		if d.Null() {
			return zero, nil
		}
		return read(d)
	}
}

// checkReader holds each way of reading data to what encoding/json makes of it.
func checkReader(t *testing.T, data []byte) {
	t.Helper()
	raw, err := readWith(data, (*jsonx.Reader).Raw)
	if valid := json.Valid(data); valid != (err == nil) {
		t.Errorf("Raw: error %v, but json.Valid says %v for %q", err, valid, data)
	} else if valid && !bytes.Equal(raw, bytes.Trim(data, " \t\r\n")) {
		t.Errorf("Raw returned %q for %q", raw, data)
	}
	compare(t, "String", data, nullOr((*jsonx.Reader).String))
	compare(t, "Int64", data, nullOr((*jsonx.Reader).Int64))
	compare(t, "Bool", data, nullOr((*jsonx.Reader).Bool))
	compare(t, "Object", data, readMembers)
	compare(t, "Array", data, readElements)
	// jsonx.Object reads with a Reader too, after Check: the same map as encoding/json's.
	if jsonx.Check(data) == nil {
		got, gerr := jsonx.Object(data)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(data, &want)
		if werr == nil && bytes.TrimLeft(data, " \t\r\n")[0] != '{' {
			werr = errors.New("not an object") // null, which encoding/json takes as an empty map
		}
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("jsonx.Object: %v %v, encoding/json's %v %v, for %q", got, gerr, want, werr, data)
		}
		// Members gives the same values for the keys asked for, nil for the others.
		keys := []string{"a", "missing"}
		for k := range want {
			keys = append(keys, k)
		}
		vals, merr := jsonx.Members(data, keys...)
		if (merr == nil) != (gerr == nil) {
			t.Errorf("jsonx.Members: error %v, jsonx.Object's %v, for %q", merr, gerr, data)
		}
		for i, k := range keys {
			if merr != nil {
				break
			}
			if v, ok := want[k]; !bytes.Equal(vals[i], v) || (vals[i] == nil) == ok {
				t.Errorf("jsonx.Members: %q is %q, encoding/json's %q (present %v), for %q", k, vals[i], v, ok, data)
			}
		}
	}
}

func compare[T any](t *testing.T, what string, data []byte, read func(d *jsonx.Reader) (T, error)) {
	t.Helper()
	got, gerr := readWith(data, read)
	var want T
	werr := json.Unmarshal(data, &want)
	switch {
	case (gerr == nil) != (werr == nil):
		t.Errorf("%s: error %v, encoding/json's %v, for %q", what, gerr, werr, data)
	case gerr == nil && !reflect.DeepEqual(got, want):
		t.Errorf("%s: got %#v, encoding/json %#v, for %q", what, got, want, data)
	case gerr != nil:
		var je *jsonx.Error
		if !errors.As(gerr, &je) || je.Offset < 0 || je.Offset > len(data) {
			t.Errorf("%s: error %v is not a *jsonx.Error with an offset in the input", what, gerr)
		}
	}
}

var readerSeeds = []string{
	`null`, `true`, `false`, `0`, `-0`, `12`, `-12.5e+3`, `9223372036854775807`, `9223372036854775808`,
	`-9223372036854775808`, `1e2`, `1.0`, `01`, `-`, `1.`, `.5`, `1e`, `+1`, `tru`, `nul`, `nullx`,
	`""`, `"abc"`, `"\u00e9\ud83d\ude00\ud800x\udc00\"\\\/\b\f\n\r\t\u0000"`, `"\ud800\ud800\udc00"`,
	`"\uDBFF\uDFFF"`, `"\ud800\\u0041"`, "\"a\xffb\xed\xa0\x80c\xc3\"", `"\x"`, `"\u12"`, "\"a\tb\"", `"abc`,
	`{}`, `[]`, `{"a":1,"a":[2, {"b" : null}],"\u0062":"c","\ud800":1}`, `{"a":1,}`, `{"a" 1}`, `{,}`,
	`{"a":1 "b":2}`, `{"a":{"b":1]}`, `[1,]`, `[,]`, `[1 2]`, `["a",null,"b"]`, `["a",1]`, `[[]]`,
	` {"a" : [ 1 , 2 ] } `, `{"\u0062":"c","é":{"x":[1,{"y":null}]},"d":-1.5e3}`, `{} {}`, `1 2`, ``, ` `, "\xef\xbb\xbf1", `{'a':1}`, `[`, `{"a"`, `{"a":`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func TestReaderMatchesEncodingJSON(t *testing.T) {
	for _, s := range readerSeeds {
		checkReader(t, []byte(s))
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReader)
}

func TestReaderErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		read func(d *jsonx.Reader) error
		kind jsonx.Kind
		off  int
		msg  string
	}{
		{`"x"`, func(d *jsonx.Reader) error { _, err := d.Int64(); return err }, jsonx.WrongType, 0, "wrong JSON type at byte 0: expected a number, found a string"},
		{` [1`, func(d *jsonx.Reader) error { _, err := d.String(); return err }, jsonx.Syntax, 3, "invalid JSON at byte 3: unexpected end of input, expected ',' or ']' after an array element"},
		{` 1.5`, func(d *jsonx.Reader) error { _, err := d.Int64(); return err }, jsonx.WrongType, 1, "number 1.5 is not a whole number"},
		{`{"a":1}`, func(d *jsonx.Reader) error { return d.Array() }, jsonx.WrongType, 0, "expected an array, found an object"},
		{`{"a" 1}`, func(d *jsonx.Reader) error { _, err := readMembers(d); return err }, jsonx.Syntax, 5, "unexpected '1', expected ':' after an object key"},
		{"\"a\x01\"", func(d *jsonx.Reader) error { _, err := d.String(); return err }, jsonx.Syntax, 2, "control character 0x01"},
		{`"\q"`, func(d *jsonx.Reader) error { _, err := d.Raw(); return err }, jsonx.Syntax, 2, `invalid escape 'q'`},
		{`nul`, func(d *jsonx.Reader) error { _, err := d.Bool(); return err }, jsonx.Syntax, 0, "invalid literal, expected null"},
		{`1 2`, func(d *jsonx.Reader) error {
			if _, err := d.Int64(); err != nil {
				return err
			}
			return d.End()
		}, jsonx.Trailing, 2, "data after the JSON value"},
	} {
		err := c.read(jsonx.NewReader([]byte(c.in)))
		var je *jsonx.Error
		if !errors.As(err, &je) || je.Kind != c.kind || je.Offset != c.off || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: got %v (%+v), want kind %s at %d containing %q", c.in, err, je, c.kind, c.off, c.msg)
		}
	}
}
