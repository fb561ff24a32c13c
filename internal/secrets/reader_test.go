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
