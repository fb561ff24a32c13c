package secrets_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestScanReaderFindsASecretAnywhere: a text over the 1 MiB a piece holds is scanned whole,
// a secret at its head, its end, or across the edge of a piece found, and clean text passed.
func TestScanReaderFindsASecretAnywhere(t *testing.T) {
	sh := secrettest.Shapes()[3]
	const piece = 1 << 20
	for name, tc := range map[string]struct {
		text string
		want bool
	}{
		"clean":      {strings.Repeat("plain words ", 300_000), false},
		"head":       {sh.Text + " " + strings.Repeat("x", 3*piece), true},
		"end":        {strings.Repeat("x", 3*piece) + " " + sh.Text, true},
		"piece-edge": {strings.Repeat("x ", piece/2-len(sh.Text)/4) + sh.Text + strings.Repeat(" x", piece), true},
		"next-edge":  {strings.Repeat("x ", piece-(128<<10)/2-len(sh.Text)/4) + sh.Text + strings.Repeat(" x", piece), true},
	} {
		f, err := secrets.ScanReader(strings.NewReader(tc.text))
		if err != nil || (f != nil) != tc.want || f != nil && f.Rule != sh.Rule {
			t.Errorf("%s: found %v (%v), want a finding %t", name, f, err, tc.want)
		}
	}
}

// TestScanReaderReadsStringsAcrossPieces: a piece that starts inside a JSON string reads its
// strings as strings, as a scan of the whole text does. The value holds a token written with
// \u escapes and JSON-escaped twice more (ScanString finds it, and so does ScanJSON in the
// document); it lies across the first piece's end, so only the second piece holds it whole,
// and that piece starts inside the string "a" (or at its escaped quote), or between strings.
func TestScanReaderReadsStringsAcrossPieces(t *testing.T) {
	const piece = 1 << 20
	sh := secrettest.Shapes()[3]
	value := strings.Trim(encode(strings.Trim(encode(strings.Trim(encode(sh.Text, true), `"`), false), `"`), false), `"`)
	member := `"n":` + encode(value, false)
	if secrets.ScanString(value) == nil || secrets.ScanJSON([]byte("{"+member+"}")) == nil {
		t.Fatal("the value no longer holds a secret ScanString and ScanJSON find")
	}
	head := piece - (128 << 10) - len(`{"a":"`) // the second piece starts at pad[head]
	pad := strings.Repeat("x", piece-len(member)/2)
	for name, pad := range map[string]string{
		"starts-in-a-string":     pad,
		"starts-at-an-escape":    pad[:head-1] + `\"` + pad[head+1:],
		"starts-between-strings": `"` + pad[2:] + `"`,
	} {
		text := `{"a":"` + pad + `",` + member + `,"b":"` + strings.Repeat("y", piece) + `"}`
		if f, err := secrets.ScanReader(strings.NewReader(text)); f == nil || f.Rule != sh.Rule {
			t.Errorf("%s: found %v (%v), want %s", name, f, err, sh.Rule)
		}
	}
}
