package jsonx_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// encodingJSONString is the oracle: s as encoding/json writes it, json.Marshal's escaping
// with escapeHTML, an Encoder's after SetEscapeHTML(false) without.
func encodingJSONString(t *testing.T, s string, escapeHTML bool) []byte {
	t.Helper()
	if escapeHTML {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	for _, html := range []bool{true, false} {
		want := encodingJSONString(t, s, html)
		got := jsonx.AppendString([]byte("x"), s, html)
		if !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Errorf("AppendString(%q, escapeHTML %v) = %q, encoding/json gives %q", s, html, got, want)
		}
	}
}

var stringSeeds = []string{
	"", "plain", `"quoted" \back\slash/`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<b> & </b>", "\u2028\u2029\u2027\u202a",
	"é 𝔸 😀 \ufffd", "\xff", "a\xffb", "\xc3", "\xc3(", "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80",
	"\xf0\x9f\x98", "\xe2\x80", "\xe2\x80\xa8\xe2\x80", "trailing\\", "\"", "\u0085\u00a0\u200b\u202e",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringSeeds {
		checkAppendString(t, s)
	}
	var every strings.Builder
	for c := range 256 {
		every.WriteByte(byte(c))
		checkAppendString(t, string([]byte{byte(c)}))
		checkAppendString(t, "a"+string([]byte{byte(c)})+"z")
	}
	checkAppendString(t, every.String())
	checkAppendString(t, strings.Repeat("ab<\n\xff\u2028é", 1<<16)) // 1 MiB
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

// The oracle for ObjectWriter: a struct with a field of each kind it writes.
type writerOracle struct {
	S    string          `json:"s"`
	Key  string          `json:"<k>&"`
	N    int64           `json:"n"`
	B    bool            `json:"b"`
	L    []string        `json:"l"`
	At   time.Time       `json:"at"`
	Raw  json.RawMessage `json:"raw"`
	Last string          `json:"last,omitempty"`
}

// writeLikeOracle writes o with an ObjectWriter, member by member as encoding/json would.
func writeLikeOracle(o writerOracle, escapeHTML bool) ([]byte, error) {
	w := jsonx.NewObjectWriter([]byte("prefix"), escapeHTML)
	w.String("s", o.S)
	w.String("<k>&", o.Key)
	w.Int("n", o.N)
	w.Bool("b", o.B)
	w.Strings("l", o.L)
	if err := w.Time("at", o.At); err != nil {
		return nil, err
	}
	w.Raw("raw", o.Raw)
	if o.Last != "" {
		w.String("last", o.Last)
	}
	return bytes.TrimPrefix(w.Close(), []byte("prefix")), nil
}

func checkObjectWriter(t *testing.T, o writerOracle) {
	t.Helper()
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		werr := enc.Encode(o)
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		got, gerr := writeLikeOracle(o, html)
		switch {
		case (gerr == nil) != (werr == nil):
			t.Errorf("escapeHTML %v: error %v, encoding/json's %v, for %+v", html, gerr, werr, o)
		case gerr == nil && !bytes.Equal(got, want):
			t.Errorf("escapeHTML %v:\n got %s\nwant %s", html, got, want)
		}
	}
}

func TestObjectWriterMatchesEncodingJSON(t *testing.T) {
	plusOne := time.FixedZone("", 3600)
	for _, o := range []writerOracle{
		{Raw: json.RawMessage(`null`)},
		{S: "a<b>\n", Key: "\xff", N: -9223372036854775808, B: true, L: []string{}, At: time.Date(2026, 11, 22, 19, 44, 41, 593046543, time.UTC), Raw: json.RawMessage(`{"x":[1,2]}`), Last: "&"},
		{N: 9223372036854775807, L: []string{"", "\u2029", "x\ty"}, At: time.Date(2026, 1, 2, 3, 4, 5, 0, plusOne), Raw: json.RawMessage(`"s"`)},
		{At: time.Date(2026, 1, 2, 3, 4, 5, 100, time.FixedZone("", -(9*3600+30*60))), Raw: json.RawMessage(`1`)},
		{At: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), Raw: json.RawMessage(`true`)},
		{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Raw: json.RawMessage(`1`)}, // refused by both
		{At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), Raw: json.RawMessage(`1`)},    // refused by both
	} {
		checkObjectWriter(t, o)
	}
}

func FuzzObjectWriter(f *testing.F) {
	f.Add("s", "k", int64(3), true, "a", "b", int64(1795379392), int64(593046543), 0, "")
	f.Add("<&>", "\xff", int64(-1), false, "", "\u2028", int64(-62135596800), int64(0), -34200, "x")
	f.Fuzz(func(t *testing.T, s, key string, n int64, b bool, l0, l1 string, sec, nsec int64, offset int, last string) {
		zone := time.FixedZone("", offset%(48*3600))
		o := writerOracle{S: s, Key: key, N: n, B: b, At: time.Unix(sec, nsec).In(zone), Raw: json.RawMessage(`[]`), Last: last}
		switch {
		case l0 == "" && l1 == "":
		case l1 == "":
			o.L = []string{l0}
		default:
			o.L = []string{l0, l1}
		}
		checkObjectWriter(t, o)
	})
}
