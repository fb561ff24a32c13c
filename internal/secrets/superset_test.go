package secrets_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// A JSON document is never found cleaner than its text, its strings or its members:
// whatever ScanString sees in the raw bytes of a valid document, in one of its keys or
// string values, or in one of its members written as "key": value (for a rule that needs a
// name and a value), ScanJSON and store.CheckDocument report too; and so they do for the
// same document with every letter and digit of its strings written as a \u escape.
func FuzzJSONSupersetOfText(f *testing.F) {
	for _, s := range []string{
		`{"a":"` + ghClassic + `"}`, `["x\n` + awsID + `"]`, `{"u":"` + pgURL + `"}`, `"\u0041"`,
		`{"aws_secret_access_key": "` + awsSecret + `"}`,
		`{"password":"Hunter2Hunter2"}`, `{"api_key":"Ab1Cd2Ef3Gh4Ij5Kl6Mn7"}`,
		`{"a":[{"b":{"pass\u0077ord":"Hunter2Hunter2"}}]}`, `{"password":1234567.5}`,
		`["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]`, `{"password_hint":"see vault","api_key_name":"prod"}`,
		`{"Authorization":"Token Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc"}`, `{"a":{"b":{"c":{"password":null}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		if secrets.ScanString(doc) != nil && secrets.ScanJSON([]byte(doc)) == nil {
			t.Fatalf("ScanString finds %v in %q but ScanJSON finds nothing", secrets.ScanString(doc), doc)
		}
		if strictjson.Check([]byte(doc)) != nil {
			return // not strict JSON: ScanJSON reads it as text, CheckDocument refuses it
		}
		why := inside(doc)
		if why == "" {
			return
		}
		for _, d := range []string{doc, escapeStrings(doc)} {
			if secrets.ScanJSON([]byte(d)) == nil {
				t.Fatalf("%s, but ScanJSON(%q) finds nothing", why, d)
			}
			if _, ok := store.CheckDocument([]byte(d)).(*secrets.Finding); !ok {
				t.Fatalf("%s, but CheckDocument(%q) = %v", why, d, store.CheckDocument([]byte(d)))
			}
		}
	})
}

// inside says what ScanString finds in a key, a string value or a member's text of doc, a
// strict JSON document ("" for nothing). A member counts for the rules that need a name and
// a value: any other rule that matches only across the "key": value joint needs context
// no member check promises (an escape may hide it from the text the gate reads).
func inside(doc string) string {
	var why string
	_ = strictjson.Default.Walk([]byte(doc), func(s string, part strictjson.Part, path []strictjson.Step) bool {
		if part != strictjson.Literal {
			if f := secrets.ScanString(s); f != nil {
				why = "ScanString finds " + f.Rule + " in the string " + s
				return true
			}
		}
		if n := len(path); part != strictjson.Key && n > 0 && path[n-1].Index < 0 {
			text := `"` + path[n-1].Key + `": ` + s
			if part == strictjson.String {
				text = `"` + path[n-1].Key + `": "` + s + `"`
			}
			if f := secrets.ScanString(text); f != nil && secrets.Named(f.Rule) {
				why = "ScanString finds " + f.Rule + " in the member " + text
				return true
			}
		}
		return false
	})
	return why
}

// escapeStrings rewrites every ASCII letter and digit inside doc's strings as a \u escape.
func escapeStrings(doc string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case !in:
			in = c == '"'
			b.WriteByte(c)
		case c == '\\':
			b.WriteByte(c)
			i++
			b.WriteByte(doc[i]) // the escape's letter; \uXXXX's digits follow as they are
			if doc[i] == 'u' {
				b.WriteString(doc[i+1 : i+5])
				i += 4
			}
		case c == '"':
			in = false
			b.WriteByte(c)
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
