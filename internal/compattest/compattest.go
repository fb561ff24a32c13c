// Package compattest is test support for the on-disk compatibility contract: files written by
// an earlier Cairn (committed under each package's testdata/compat) must read back to the same
// values. Dump prints a value the same way whatever codec produced it, and Golden compares it
// with the committed text (CAIRN_UPDATE_COMPAT=1 rewrites it, only when a change is meant).
//
// Only _test.go files import it.
package compattest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// update rewrites the golden files instead of comparing: CAIRN_UPDATE_COMPAT=1 go test ...
var update = os.Getenv("CAIRN_UPDATE_COMPAT") == "1"

// Golden compares got with the file at path, or writes it there under -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with CAIRN_UPDATE_COMPAT=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, got, want)
	}
}

// Each runs check, as a subtest named for the file, on every file matching pattern (a glob
// under the package's testdata/compat), and fails when there is none.
func Each(t *testing.T, pattern string, check func(t *testing.T, file string, data []byte)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata/compat", pattern))
	if len(files) == 0 {
		t.Fatalf("no fixtures match testdata/compat/%s", pattern)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			check(t, f, data)
		})
	}
}

// Dump prints v one field a line, pointers followed, map keys sorted, times as RFC 3339 with
// their zone, and JSON raw values as text: a printout of values, not of any encoding. Zero
// values are left out, so a field added to a type (zero in every old file) changes no
// printout.
func Dump(v any) string {
	var b strings.Builder
	dump(&b, "", reflect.ValueOf(v))
	return b.String()
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func dump(b *strings.Builder, path string, v reflect.Value) {
	line := func(s string) { fmt.Fprintf(b, "%s = %s\n", path, s) }
	if !v.IsValid() {
		line("<invalid>")
		return
	}
	if v.IsZero() && path != "" {
		return
	}
	switch {
	case v.Type() == timeType:
		t := v.Interface().(time.Time)
		line(t.Format(time.RFC3339Nano) + " " + t.Location().String())
		return
	case v.Type() == rawType:
		if v.IsNil() {
			line("raw(nil)")
		} else {
			line("raw(" + string(v.Bytes()) + ")")
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			line("nil")
			return
		}
		if v.Elem().IsZero() {
			line("&zero") // set, to the zero value: not the same as nil
			return
		}
		dump(b, path+"*", v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() {
				dump(b, path+"."+f.Name, v.Field(i))
			}
		}
	case reflect.Map:
		if v.IsNil() {
			line("map(nil)")
			return
		}
		line(fmt.Sprintf("map(%d)", v.Len()))
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			dump(b, fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)), v.MapIndex(k))
		}
	case reflect.Slice:
		if v.IsNil() {
			line("slice(nil)")
			return
		}
		line(fmt.Sprintf("slice(%d)", v.Len()))
		for i := 0; i < v.Len(); i++ {
			dump(b, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.String:
		line(fmt.Sprintf("%q", v.String()))
	default:
		line(fmt.Sprint(v.Interface()))
	}
}
