package secrets_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// Escapes that spell a keyword, or join one with a character normalize drops, are decoded
// and found, wherever the keyword starts.
func TestEscapesThatHideAKeyword(t *testing.T) {
	for _, doc := range []string{
		`{"a":"AKIA\u0049OSFODNN7EXAMPLE"}`,    // the keyword as written, the rest escaped
		`{"a":"\u0041KIAIOSFODNN7EXAMPLE"}`,    // the keyword's first byte escaped
		`{"a":"AK\u200bIAIOSFODNN7EXAMPLE"}`,   // a zero-width space inside it
		`{"a":"AK\bIAIOSFODNN7EXAMPLE"}`,       // a control inside it
		`{"a":"x \"AKIAIOSFODNN7EXAMPLE\" y"}`, // a quote before it
		`{"a":"gh\u0070_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"}`,
		`{"p\u0061ssword":"Hunter2Hunter2"}`,
		`{"a":"postgres:\/\/user:s3cret@host/db"}`,
		`{"a":"curl example.com -u \"bob:Zq8Wm3Rt6Yp1\""}`,               // the keyword as written, quotes escaped
		"{\"a\":\"cu\u200brl example.com -u \\\"bob:Zq8Wm3Rt6Yp1\\\"\"}", // and split by a zero-width space as written
		`{"a":["\u00e9t\u00e9", "curl\u0020https://example.com -u bob:Zq8Wm3Rt6Yp1"]}`,
		`{"a":"%6\u0037hp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"}`,            // a percent escape's digit escaped
		`{"a":"\u0026#103;hp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"}`,         // a character reference's &
		`{"a":"&\u0023103;hp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"}`,         // and its #
		`{"a":"&#92;u0067hp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY","b":"\""}`, // a reference to a backslash
		`{"a":"%5Cu0067hp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY","b":"\""}`,   // a percent escape of one
	} {
		spans, err := strictjson.Default.AppendSpans(nil, []byte(doc), nil)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		f := secrets.ScanChecked([]byte(doc), spans)
		if f == nil {
			t.Errorf("ScanChecked(%s) finds nothing", doc)
			continue
		}
		if all := secrets.ScanDecodingAll([]byte(doc), spans); *f != *all {
			t.Errorf("ScanChecked(%s) = %+v, decoding every string: %+v", doc, *f, *all)
		}
	}
	clean := `{"note":"checked \u00e9 and \"quoted\" text\n\ud83d\ude00"}`
	spans, _ := strictjson.Default.AppendSpans(nil, []byte(clean), nil)
	if f := secrets.ScanChecked([]byte(clean), spans); f != nil {
		t.Errorf("ScanChecked(%s) = %v", clean, f)
	}
}

// Passing over escaped strings changes no answer: on random documents of keywords, secrets
// and names written with every kind of escape, ScanChecked and CheckDocument (two cores, for
// large documents) find what the scan that decodes every escaped string finds.
func TestSkippingEscapedStringsChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 34))
	kws, _ := secrets.Keywords()
	pieces := append(kws, awsID, awsSecret, ghClassic, pgURL, pemRSA, pemSSH, slackBot, jwtToken, antKey, httpURL,
		"password", "api_key", "token", "Authorization: Bearer ", "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc",
		"Hunter2Hunter2", " = ", ": ", "curl example.com -u \"bob:Zq8Wm3Rt6Yp1\"", "checked", "é", "😀", "\u200b", "\u00ad", "\b", "\"", "\\", "/", "\n", "path/to/x.md")
	body := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) == 0 {
				p = strings.ToLower(p)
			}
			writeBody(&b, p, rng)
		}
		return b.String()
	}
	member := func() string {
		v := `"` + body() + `"`
		switch rng.IntN(5) {
		case 0:
			v = fmt.Sprint(rng.IntN(1e9))
		case 1:
			v = `["` + body() + `", "` + body() + `"]`
		}
		return `"` + body() + `":` + v
	}
	doc := func(members int) []byte {
		ms := make([]string, members)
		for i := range ms {
			ms[i] = member()
		}
		return []byte("{" + strings.Join(ms, ",") + "}")
	}
	describe := func(f *secrets.Finding) string {
		if f == nil {
			return "nothing"
		}
		return fmt.Sprintf("%+v", *f)
	}
	found, docs := 0, secrets.Corpus(20000)
	for range docs {
		d := doc(1 + rng.IntN(3))
		spans, err := strictjson.Default.AppendSpans(nil, d, nil)
		if err != nil {
			continue // a duplicate key
		}
		want := secrets.ScanDecodingAll(d, spans)
		if got := secrets.ScanChecked(d, spans); describe(got) != describe(want) {
			t.Fatalf("ScanChecked(%s) = %s, decoding every string: %s", d, describe(got), describe(want))
		}
		if want != nil {
			found++
		}
	}
	// Large documents take CheckDocument's two-core path; clean members make most of them
	// clean, so that a secret hidden in one member decides the answer.
	for range 40 {
		d := doc(1 + rng.IntN(3))
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < 70<<10; i++ {
			fmt.Fprintf(&b, `"n%d":"checked \u00e9 and \"quoted\" text",`, i)
		}
		big := append([]byte(b.String()), d[1:]...)
		spans, err := strictjson.Default.AppendSpans(nil, big, nil)
		if err != nil {
			continue
		}
		want := secrets.ScanDecodingAll(big, spans)
		got, _ := store.CheckDocument(big).(*secrets.Finding)
		if describe(got) != describe(want) {
			t.Fatalf("CheckDocument(…%s) = %s, decoding every string: %s", d, describe(got), describe(want))
		}
	}
	if found < docs/20 {
		t.Fatalf("only %d of %d documents hold a secret: the generator no longer tests much", found, docs)
	}
}

// writeBody writes s into a JSON string body, each character as it stands (when JSON allows)
// or as an escape, at random.
func writeBody(b *strings.Builder, s string, rng *rand.Rand) {
	for _, r := range s {
		short := shortEscapes[r]
		switch k := rng.IntN(4); {
		case k == 0 && short != "":
			b.WriteString(short)
		case k == 1 || r < 0x20 || r == '"' || r == '\\':
			if r >= 0x10000 {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(b, `\u%04x\u%04X`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
}

// shortEscapes are JSON's two-character escapes.
var shortEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + r>>10, 0xdc00 + r&0x3ff
}

// JSON escaped once more and pasted as text (a request body quoted in a log line, a .env
// file written as one string with \n escapes) is read as it decodes: ScanString finds the
// secret, and ScanJSON finds it in a document whose string holds that text.
func TestTextEscapedOnceMore(t *testing.T) {
	for _, s := range []string{
		`{\"password\":\"hunter2!x\"}`,
		`{\"api_key\":\"Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc\"}`,
		`postgres:\/\/user:s3cretPw9@db.example.com/app`,
		`DB_HOST=x\nDB_PASSWORD=hunter2!x\nPORT=1`,
	} {
		if f := secrets.ScanString(s); f == nil {
			t.Errorf("ScanString(%s) finds nothing", s)
		}
		doc, _ := json.Marshal(map[string]string{"note": s})
		if f := secrets.ScanJSON(doc); f == nil || f.Path != "$.note" {
			t.Errorf("ScanJSON(%s) = %v, want a finding at $.note", doc, f)
		}
	}
}

// Text escaped more than once (a log line quoting a request body that quoted JSON, a
// kubectl patch holding a manifest that holds a .env) is read as it decodes, up to three
// levels: ScanString finds the secret, and ScanJSON in a document whose string holds it.
func TestTextEscapedTwiceMore(t *testing.T) {
	escape := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	for _, s := range []string{
		`{"password":"hunter2!x"}`,
		`{"api_key":"Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc"}`,
		`DB_HOST=x` + "\n" + `DB_PASSWORD=hunter2!x` + "\nPORT=1",
	} {
		for levels, e := 1, escape(escape(s)); levels <= 2; levels, e = levels+1, escape(e) {
			if f := secrets.ScanString(e); f == nil {
				t.Errorf("ScanString(%s) finds nothing", e)
			}
			doc, _ := json.Marshal(map[string]string{"note": e})
			if f := secrets.ScanJSON(doc); f == nil || f.Path != "$.note" {
				t.Errorf("ScanJSON(%s) = %v, want a finding at $.note", doc, f)
			}
		}
	}
}
