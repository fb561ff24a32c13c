package strictjson_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

func TestCheck(t *testing.T) {
	deep := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	tooDeep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	huge := `"` + strings.Repeat("a", strictjson.MaxSize) + `"`
	cases := []struct {
		name string
		in   string
		kind strictjson.Kind // "" = valid
		off  int
	}{
		{"object", `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, "", 0},
		{"scalar", `42`, "", 0},
		{"whitespace-around", " \n{\"a\":-1.5e+3}\t\r\n", "", 0},
		{"unicode-keys", `{"é":1,"e\u0301":2}`, "", 0},
		{"depth-64", deep, "", 0},
		{"depth-65", tooDeep, strictjson.TooDeep, 64},
		{"brackets-in-strings-do-not-count", `["` + strings.Repeat("[", 100) + `"]`, "", 0},
		{"too-large", huge, strictjson.TooLarge, strictjson.MaxSize},
		{"invalid-utf8", "{\"a\":\"\xff\"}", strictjson.InvalidUTF8, 6},
		{"duplicate-top", `{"a":1,"a":2}`, strictjson.DuplicateKey, 7},
		{"duplicate-nested", `{"x":[{"k":1,"k":1}]}`, strictjson.DuplicateKey, 13},
		{"duplicate-escaped", `{"a":1,"\u0061":2}`, strictjson.DuplicateKey, 7},
		{"same-key-different-objects", `[{"a":1},{"a":2}]`, "", 0},
		{"case-differs-is-not-duplicate", `{"a":1,"A":2}`, "", 0},
		{"two-values", `{} {}`, strictjson.Trailing, 3},
		{"trailing-garbage", `1x`, strictjson.Trailing, 1},
		{"empty", ``, strictjson.Empty, 0},
		{"only-space", `   `, strictjson.Empty, 0},
		{"trailing-comma", `[1,]`, strictjson.Syntax, 3},
		{"single-quotes", `{'a':1}`, strictjson.Syntax, 1},
		{"leading-zero", `01`, strictjson.Trailing, 1},
		{"bare-minus", `-`, strictjson.Syntax, 1},
		{"control-char", "\"a\x01\"", strictjson.Syntax, 2},
		{"bad-escape", `"\x"`, strictjson.Syntax, 2},
		{"short-unicode-escape", `"\u12"`, strictjson.Syntax, 2},
		{"unterminated", `{"a":"b`, strictjson.Syntax, 5},
		{"nan", `NaN`, strictjson.Syntax, 0},
		{"truncated-object", `{"a":1`, strictjson.Syntax, 6},
		// encoding/json cannot decode a number beyond float64 into any: refused where it starts.
		{"number-overflows", `{"a":1e400}`, strictjson.NumberRange, 5},
		{"number-overflows-negative", `[0,-1.8e308]`, strictjson.NumberRange, 3},
		{"number-overflows-digits", `[` + "1" + strings.Repeat("0", 309) + `]`, strictjson.NumberRange, 1},
		{"number-largest", `[1.7976931348623157e308,-1.7976931348623157E+308]`, "", 0},
		{"number-underflows-to-zero", `[1e-400,0e999999,0.0e400]`, "", 0},
		{"number-many-digits", `[` + "1" + strings.Repeat("0", 308) + `]`, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := strictjson.Check([]byte(c.in))
			if c.kind == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				if !json.Valid([]byte(c.in)) {
					t.Fatal("accepted what encoding/json rejects")
				}
				return
			}
			var je *strictjson.Error
			if !errors.As(err, &je) {
				t.Fatalf("got %v, want *strictjson.Error %s", err, c.kind)
			}
			if je.Kind != c.kind || je.Offset != c.off {
				t.Fatalf("got %s at %d (%v), want %s at %d", je.Kind, je.Offset, je, c.kind, c.off)
			}
			if c.kind == strictjson.NumberRange && strings.Contains(err.Error(), "e4") {
				t.Errorf("message %q repeats the number", err)
			}
			if !strings.Contains(err.Error(), "byte") || je.Reason == "" {
				t.Errorf("message %q lacks the offset or a reason", err)
			}
		})
	}
}

func TestDuplicateKeyMessageDoesNotDumpHugeKeys(t *testing.T) {
	k := strings.Repeat("k", 5000)
	err := strictjson.Check([]byte(`{"` + k + `":1,"` + k + `":2}`))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("message of %d bytes: %.100v", len(err.Error()), err)
	}
}

// An unexpected character is named as the document holds it, not as its first byte: a byte
// order mark (which editors on Windows write) was "unexpected 'ï'", a character no one wrote.
func TestUnexpectedCharacterNamed(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"\ufeff{}", "invalid JSON at byte 0: unexpected byte order mark (U+FEFF): remove it"},
		{`{"a":é}`, "invalid JSON at byte 5: unexpected 'é'"},
		{"[\xff]", "invalid JSON at byte 1: not valid UTF-8"},
		{`{"a":x}`, "invalid JSON at byte 5: unexpected 'x'"},
	} {
		if err := strictjson.Check([]byte(c.doc)); err == nil || err.Error() != c.want {
			t.Errorf("Check(%q) = %v, want %s", c.doc, err, c.want)
		}
	}
}

// No refusal repeats a word of the document: a repeated key may be a secret (a token used as
// a map key), and the refusal reaches a terminal, a log and the model. The key is named by its
// offset and length instead. At most one character (an unexpected one) is quoted.
func TestRefusalsQuoteNoText(t *testing.T) {
	const w = "Zq9xWvK3tR"
	for _, doc := range []string{
		`{"` + w + `":1,"` + w + `":2}`,
		`{"a":[{"` + w + `":1,"\u005a` + w[1:] + `":2}]}`,
		`{"` + strings.Repeat(w, 20) + `":1,"` + strings.Repeat(w, 20) + `":2}`,
		`{"k":` + w + `}`,
		`{"k":"` + w + `\q"}`,
		`{"k":"` + w + `"` + w + `}`,
		`{"k":"` + w + "\x01" + `"}`,
		`{"k":"` + w,
		`{"k":1}` + w,
		`[1e999` + w + `]`,
	} {
		err := strictjson.Check([]byte(doc))
		if err == nil {
			t.Fatalf("Check accepted %s", doc)
		}
		if strings.Contains(err.Error(), w[:2]) {
			t.Errorf("Check(%.30s): %q repeats the document", doc, err)
		}
		if _, err := strictjson.Compact([]byte(doc)); err == nil || strings.Contains(err.Error(), w[:2]) {
			t.Errorf("Compact(%.30s): %v", doc, err)
		}
		if _, err := strictjson.Object([]byte(doc)); err == nil || strings.Contains(err.Error(), w[:2]) {
			t.Errorf("Object(%.30s): %v", doc, err)
		}
	}
	err := strictjson.Check([]byte(`{"ab":1,"c":2,"ab":3}`))
	if want := "invalid JSON at byte 14: duplicate key (a 2-byte key already in this object)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCompactAndObject(t *testing.T) {
	got, err := strictjson.Compact([]byte("{ \"a\" : [1, 2],\n \"b\": \"x y\" }"))
	if err != nil || string(got) != `{"a":[1,2],"b":"x y"}` {
		t.Fatalf("got %s, %v", got, err)
	}
	m, err := strictjson.Object([]byte(`{"revision":3,"Revision":4}`))
	if err != nil || string(m["revision"]) != "3" {
		t.Fatalf("got %v, %v", m, err)
	}
	if _, err := strictjson.Object([]byte(`[1]`)); err == nil {
		t.Fatal("Object accepted an array")
	}
	if _, err := strictjson.Compact([]byte(`{"a":1,"a":1}`)); err == nil {
		t.Fatal("Compact accepted a duplicate key")
	}
}

// Members gives what Object's map holds for the names asked, and fails as Object fails, on
// records, hostile ones included: keys differing only in case or folding, escaped keys, the
// names nested deeper, values of every kind, damage.
func TestMembersAsObject(t *testing.T) {
	names := []string{"version", "workflow_id", "revision"}
	docs := []string{
		`{"version":"2.1","workflow_id":"apex-1","revision":3,"phases":[{"revision":9}]}`,
		` { "revision" : 3 , "version":"2.0" } `,
		`{"revision":3,"Revision":4,"REVISION":5,"revi\u017fion":6}`,
		`{"\u0072evision":7,"version":null}`,
		`{"x":{"revision":1,"version":"2.0"},"workflow_id":["a"]}`,
		`{"revision":{"a":[1,{"b":2}]},"version":"\"q\"","workflow_id":true}`,
		`{"revision":-1.5e3,"workflow_id":false}`,
		`{}`, `[{"revision":1}]`, `"revision"`, `null`, `3`, ``, `  `,
		`{"revision":1,"revision":2}`, `{"revision":1`, `{"revision":1}x`, "{\"version\":\"\xff\"}",
		`{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
	}
	for _, doc := range docs {
		got, gerr := strictjson.Members([]byte(doc), names...)
		m, oerr := strictjson.Object([]byte(doc))
		if fmt.Sprint(gerr) != fmt.Sprint(oerr) {
			t.Errorf("%s: Members fails with %v, Object with %v", doc, gerr, oerr)
			continue
		}
		if gerr != nil {
			continue
		}
		for i, n := range names {
			if string(got[i]) != string(m[n]) || (got[i] == nil) != (m[n] == nil) {
				t.Errorf("%s: Members[%s] = %q, Object's %q", doc, n, got[i], m[n])
			}
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `[1,2,{"b":null}]`, `{"a":1,"a":2}`, `"\u0061"`, `{"\ud800":1}`,
		strings.Repeat("[", 70), "\xff", `1 2`, `{"a":"\u00e9","b":-0.5e-7}`, ``, `{"x":{"y":{"z":[]}}}`, `[1e400]`, `-1.8e308`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := strictjson.Check(data)
		if err == nil {
			if !json.Valid(data) {
				t.Fatalf("Check accepted invalid JSON %q", data)
			}
			if !utf8.Valid(data) {
				t.Fatalf("Check accepted invalid UTF-8 %q", data)
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("accepted but does not decode: %v", err)
			}
			return
		}
		var je *strictjson.Error
		if !errors.As(err, &je) {
			t.Fatalf("error %T is not a *strictjson.Error", err)
		}
		if je.Offset < 0 || je.Offset > len(data) && je.Kind != strictjson.TooLarge {
			t.Fatalf("offset %d outside the %d-byte input", je.Offset, len(data))
		}
		// Everything encoding/json accepts we accept too, unless one of our extra rules fired.
		var v any
		if je.Kind == strictjson.NumberRange && json.Unmarshal(data, &v) == nil {
			t.Fatalf("refused a number encoding/json decodes: %q: %v", data, err)
		}
		if json.Valid(data) && (je.Kind == strictjson.Syntax || je.Kind == strictjson.Trailing || je.Kind == strictjson.Empty) {
			t.Fatalf("rejected valid JSON %q: %v", data, err)
		}
	})
}

// escapedText is the decoded text of the strings AppendSpans gathers, each followed by a newline.
func escapedText(data []byte) ([]byte, error) {
	spans, err := strictjson.Default.AppendSpans(nil, data, nil)
	var text []byte
	for i := 0; i+1 < len(spans); i += 2 {
		text = append(strictjson.AppendUnescaped(text, data[spans[i]:spans[i+1]]), '\n')
	}
	return text, err
}

// checkWalk holds Walk and AppendSpans to encoding/json: what Walk reports is every key and
// string value json.Unmarshal decodes and every number and literal as written, in document
// order, and the spans are exactly the strings written with escapes.
func checkWalk(t *testing.T, data []byte) {
	t.Helper()
	var got []string
	err := strictjson.Default.Walk(data, func(s string, _ strictjson.Part, _ []strictjson.Step) bool {
		got = append(got, s)
		return false
	})
	escaped, eerr := escapedText(data)
	if (err == nil) != (strictjson.Check(data) == nil) || (eerr == nil) != (err == nil) {
		t.Fatalf("Walk %v, AppendSpans %v and Check %v disagree on %q", err, eerr, strictjson.Check(data), data)
	}
	if err != nil {
		return
	}
	var want, wantStrings []string
	var wantEsc []byte
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case string:
			want, wantStrings = append(want, v), append(wantStrings, v)
		case json.Number:
			want = append(want, string(v))
		case bool:
			want = append(want, strconv.FormatBool(v))
		case nil:
			want = append(want, "null")
		}
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("Walk(%q) saw %q, encoding/json %q", data, got, want)
	}
	// Every string with a backslash in the source is in escaped, decoded, once.
	for _, s := range wantStrings {
		if !strings.Contains(string(data), `"`+s+`"`) {
			wantEsc = append(append(wantEsc, s...), '\n')
		}
	}
	if len(escaped) < len(wantEsc) {
		t.Fatalf("AppendSpans(%q) gave %q, missing decoded strings %q", data, escaped, wantEsc)
	}
}

func TestWalkMatchesEncodingJSON(t *testing.T) {
	for _, s := range walkSeeds {
		checkWalk(t, []byte(s))
	}
	// Paths name each key and index on the way to a value.
	var paths []string
	_ = strictjson.Default.Walk([]byte(`{"a":[{"b":"x"}],"c":"y"}`), func(s string, part strictjson.Part, path []strictjson.Step) bool {
		p := ""
		for _, st := range path {
			if st.Index >= 0 {
				p += fmt.Sprintf("[%d]", st.Index)
			} else {
				p += "." + st.Key
			}
		}
		paths = append(paths, fmt.Sprintf("%s%s=%s", p, map[bool]string{true: "#key"}[part == strictjson.Key], s))
		return s == "x"
	})
	if got := strings.Join(paths, " "); got != "#key=a .a[0]#key=b .a[0].b=x" {
		t.Fatalf("paths: %s", got)
	}
}

var walkSeeds = []string{`{"a":"b"}`, `{"n":[-0.5e+3,0,12,true,false,null],"m":{"x":1E-2}}`, `["\u0041\ud83d\ude00","\ud800x","\n\"\\\/"]`, `{"\u0061":{"k":["v",1,null]}}`, `"x"`, `{"a":1,"a":2}`, `[`}

func FuzzWalk(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkWalk)
}

// A string's plain text is read eight bytes at a time: a quote, backslash or control byte at
// every offset within and across those reads is seen where it is, and the bytes around it
// (0x20, 0x7f, beyond ASCII) are plain.
func TestStringBytesAtEveryOffset(t *testing.T) {
	for pad := range 20 {
		for _, tail := range []string{"", "ab", "abcdefghijklmnopqrstu"} {
			lead := strings.Repeat("a", pad)
			for _, c := range []string{"\x00", "\x01", "\x1f"} {
				doc := `"` + lead + c + tail + `"`
				var je *strictjson.Error
				if err := strictjson.Check([]byte(doc)); !errors.As(err, &je) || je.Kind != strictjson.Syntax || je.Offset != 1+pad {
					t.Errorf("Check(%q) = %v, want a control character at %d", doc, err, 1+pad)
				}
			}
			for _, c := range []string{" ", "\x7f", "é", `\"`, `\\`, `\n`, `\u0041`, `\ud83d\ude80`} {
				doc := `"` + lead + c + tail + `"`
				if err := strictjson.Check([]byte(doc)); err != nil {
					t.Errorf("Check(%q) = %v", doc, err)
				}
				var want string
				if err := json.Unmarshal([]byte(doc), &want); err != nil {
					t.Fatal(err)
				}
				esc, err := escapedText([]byte(doc))
				if strings.Contains(c, `\`) && (err != nil || string(esc) != want+"\n") {
					t.Errorf("AppendSpans(%q) gave %q, %v, want %q", doc, esc, err, want+"\n")
				}
			}
			// The quote ends the string where it is: what follows is trailing data.
			doc := `"` + lead + `"` + tail + `"`
			var je *strictjson.Error
			if err := strictjson.Check([]byte(doc)); tail != "" && (!errors.As(err, &je) || je.Offset != 2+pad) {
				t.Errorf("Check(%q) = %v, want an error at %d", doc, err, 2+pad)
			}
		}
	}
}

// AppendSpans hands its spans over in runs as it goes: together, in order, they are exactly
// the spans it returns.
func TestAppendSpansRuns(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[`)
	for i := range 1000 {
		fmt.Fprintf(&b, `{"k%d":"plain","e\u00e9%d":"say \"hi\""},`, i, i)
	}
	b.WriteString(`0]`)
	data := []byte(b.String())
	var runs [][]int
	spans, err := strictjson.Default.AppendSpans(nil, data, func(run []int) { runs = append(runs, run) })
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2*2000 || len(runs) < 2 {
		t.Fatalf("%d spans in %d runs, want 4000 in several", len(spans), len(runs))
	}
	if joined := slices.Concat(runs...); !slices.Equal(joined, spans) {
		t.Fatalf("the runs hold %d spans, not the %d returned", len(joined), len(spans))
	}
	for i := 0; i < len(spans); i += 2 {
		if got := string(strictjson.AppendUnescaped(nil, data[spans[i]:spans[i+1]])); got != "say \"hi\"" && !strings.HasPrefix(got, "eé") {
			t.Fatalf("span %d is %q", i/2, got)
		}
	}
}

func TestKindOf(t *testing.T) {
	for raw, want := range map[string]string{
		`{"a":1}`: "an object", ` [1]`: "an array", `"x"`: "a string", "true": "a boolean",
		"false": "a boolean", "null": "null", "-1.5e3": "a number", " \n": "nothing", "": "nothing",
	} {
		if got := strictjson.KindOf([]byte(raw)); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestLoneSurrogate: LoneSurrogate finds exactly the escapes encoding/json reads as a U+FFFD
// that was not sent: half of a surrogate pair without its other half.
func TestLoneSurrogate(t *testing.T) {
	for body, want := range map[string]int{
		`plain`:               -1,
		`\ud83d\ude00`:        -1, // a whole pair
		`\ufffd`:              -1, // U+FFFD sent as itself
		`\\ud800`:             -1, // a backslash, then text
		`\u00e9\n`:            -1,
		`a\ud800`:             1,
		`a\ud800b`:            1,
		`\udc00\ud800`:        0, // a low half first
		`\ud800\ud800`:        0,
		`\ud83d\ude00x\udbff`: 13,
		`\\\ud800`:            2,
		`\ud800\u0041`:        0,
	} {
		if got := strictjson.LoneSurrogate([]byte(body)); got != want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", body, got, want)
		}
		var s string
		_ = json.Unmarshal([]byte(`"`+body+`"`), &s)
		if replaced := strings.Count(s, "\ufffd") > strings.Count(body, `\ufffd`); replaced != (want >= 0) {
			t.Errorf("%s: encoding/json replaced a character: %v, LoneSurrogate says %d", body, replaced, want)
		}
	}
}

func TestEachAndFoldedTwice(t *testing.T) {
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	for _, tc := range []struct {
		name, in string
		members  string // name=value, in order
		twice    string // the name as first written; "" for none
		at       int    // the offset of the second
	}{
		{"not an object", `[1,{"a":1}]`, "", "", 0},
		{"empty", ` { } `, "", "", 0},
		{"members", ` { "a" : 1 , "b":{"c":"}\"]"}, "d":[1,"x"] } `, `a=1 b={"c":"}\"]"} d=[1,"x"]`, "", 0},
		{"escaped name", `{"\u0069d":1,"Id":2}`, "id=1 Id=2", "id", 13},
		{"case", `{"name":1,"x":2,"Name":3}`, "name=1 x=2 Name=3", "name", 16},
		{"exact", `{"a":1,"a":2}`, "a=1 a=2", "a", 7},
		{"kelvin sign folds as encoding/json", "{\"k\":1,\"\u212a\":2}", "k=1 \u212a=2", "k", 7},
		{"nested twice is not top-level", `{"a":{"b":1,"B":2},"A2":{}}`, `a={"b":1,"B":2} A2={}`, "", 0},
		{"beyond the gate", `{"n":1e999,"d":` + deep + `}`, "n=1e999 d=" + deep, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			strictjson.Each([]byte(tc.in), func(name, value []byte) bool {
				got = append(got, string(name)+"="+string(value))
				return true
			})
			if s := strings.Join(got, " "); s != tc.members {
				t.Errorf("members %q, want %q", s, tc.members)
			}
			name, err := strictjson.FoldedTwice([]byte(tc.in))
			if string(name) != tc.twice {
				t.Errorf("twice %q, want %q", name, tc.twice)
			}
			var e *strictjson.Error
			if tc.twice == "" && err != nil || tc.twice != "" && (!errors.As(err, &e) || e.Kind != strictjson.DuplicateKey || e.Offset != tc.at) {
				t.Errorf("err %v, want a duplicate key at %d", err, tc.at)
			}
		})
	}
	var n int
	strictjson.Each([]byte(`{"a":1,"b":2,"c":3}`), func(_, _ []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Each went on after false: %d calls", n)
	}
}
