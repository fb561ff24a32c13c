package secrets_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// record4K builds a realistic workflow record of about 4 KB. noisy adds text that trips the
// prefilters without being a secret (URLs, "secret", "sk-" inside words, escapes), so the
// walk and the regexps run.
func record4K(noisy bool) []byte {
	var b strings.Builder
	b.WriteString(`{"version":"2.0","workflow_id":"apex-20261122T173000Z-3f9a","type":"apex",` +
		`"context":"Add OAuth login to the web app","scope":"standard","state":"implement",` +
		`"phase_status":"in_progress","status":"active","history":[`)
	for i := 0; b.Len() < 3300; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		note := "moved on after review of the plan and the test matrix"
		if noisy {
			note = `see https://example.com/docs/oauth and the task-list; the secret store is Vault \u00e9`
		}
		fmt.Fprintf(&b, `{"from":"plan","to":"implement","at":"2026-11-22T17:%02d:00Z","session_id":"`+
			`3f2b9c1e-8d7a-4b6c-9e5f-%012d","note":"%s"}`, i%60, i, note)
	}
	b.WriteString(`],"vars":{"PLAN_PATH":"/home/dev/project/docs/plan.md","COMMIT":` +
		`"3f9a0c1d2e4b5a6978877665544332211ffeeddc"},"ttl":"24h","revision":7}`)
	return []byte(b.String())
}

func BenchmarkScanJSON4K(b *testing.B) {
	for _, noisy := range []bool{false, true} {
		doc := record4K(noisy)
		if f := secrets.ScanJSON(doc); f != nil {
			b.Fatalf("false positive: %v", f)
		}
		b.Run(fmt.Sprintf("noisy=%v", noisy), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				secrets.ScanJSON(doc)
			}
		})
	}
}

func BenchmarkScanString4K(b *testing.B) {
	s := string(record4K(true))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		secrets.ScanString(s)
	}
}

// BenchmarkScanJSON1M is a 1 MB checkpoint of small objects whose text holds one named
// rule's keyword (a "password_hint" key), so every member is read: the scan's worst
// ordinary case.
func BenchmarkScanJSON1M(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"password_hint":"see the team vault","items":[`)
	for i := 0; sb.Len() < 1<<20-200; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"path":"/work/project/specs/042_feature/reports/%03d_topic.md","done":%t,"note":"checked \u00e9 and \"quoted\" text"}`, i, i%1000, i%2 == 0)
	}
	sb.WriteString(`]}`)
	doc := []byte(sb.String())
	if f := secrets.ScanJSON(doc); f != nil {
		b.Fatalf("false positive: %v", f)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		secrets.ScanJSON(doc)
	}
}

// BenchmarkScanFlood is 256 KB of one keyword glued by - or _ (a provider's name, "secret"),
// where each keyword starts a name no value follows: a flood's cost per byte, to be set beside
// plain text's (TestFloodsWorkLittle counts the work; this times it).
func BenchmarkScanFlood(b *testing.B) {
	for _, unit := range []string{"-secret", "_SECRET", "asana_", "_datadog", "plain text "} {
		s := strings.Repeat(unit, (256<<10)/len(unit))
		b.Run(strings.TrimSpace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				secrets.ScanString(s)
			}
		})
	}
}
