package secrets_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// floods1M: 1 MiB texts a tool argument may hold where the checks before the keywords read
// ahead of them: long runs of one class of bytes, a keyword repeated, and a record.
func floods1M() map[string]string {
	const n = 1 << 20
	b64 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("plain words of a report, nothing more. ", n/30)))
	var rec strings.Builder
	rec.WriteString(`{"version":"2.0","workflow_id":"apex-1","vars":{"client_secret_hint":"in the vault"},"history":[`)
	for i := 0; rec.Len() < n-200; i++ {
		if i > 0 {
			rec.WriteByte(',')
		}
		fmt.Fprintf(&rec, `{"from":"plan","to":"implement","at":"2026-11-22T17:%02d:00Z","commit":"3f9a0c1d2e4b5a69788776655443322%09d","note":"token=see the vault; path /srv/app/%d.go"}`, i%60, i, i)
	}
	rec.WriteString(`]}`)
	return map[string]string{
		"digits":        strings.Repeat("1234567890", n/10),
		"equals":        strings.Repeat("=", n),
		"base64":        b64[:n],
		"session_token": strings.Repeat("session_token=", n/len("session_token=")),
		"secret=1":      strings.Repeat("a-secret=1", n/10),
		"record":        rec.String(),
	}
}

func BenchmarkScanFlood1M(b *testing.B) {
	floods := floods1M()
	for _, name := range []string{"digits", "equals", "base64", "session_token", "secret=1", "record"} {
		s := floods[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				secrets.ScanString(s)
			}
		})
	}
}
