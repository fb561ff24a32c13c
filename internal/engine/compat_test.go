package engine

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/compattest"
)

// TestCompatSmallDocuments is the on-disk contract for the session record, the L2 ledger, the
// configuration and the Stop hook's state: each testdata/compat/*.json (as written, and with
// members of the wrong type, unknown or cut short) reads to the values an earlier Cairn read
// (the .values files), and what it reads encodes to the bytes that Cairn wrote (.out).
func TestCompatSmallDocuments(t *testing.T) {
	t.Parallel()
	compattest.Each(t, "*.json", func(t *testing.T, f string, data []byte) {
		name := filepath.Base(f)
		var v any
		var out []byte
		switch {
		case strings.HasPrefix(name, "l2-state"):
			s := decodeLenient[l2State](data)
			v, out = s, mustMarshal(t, s)
		case strings.HasPrefix(name, "config"):
			v = decodeLenient[fileConfig](data)
		case strings.HasPrefix(name, "stop-state"):
			s := decodeLenient[stopState](data)
			v, out = s, mustMarshal(t, s)
		case strings.HasPrefix(name, "session"):
			var s Session
			ok := json.Unmarshal(data, &s) == nil
			if s.Heartbeat.IsZero() {
				s.Heartbeat = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
			}
			v = struct {
				OK bool
				S  Session
			}{ok, s}
			out = mustMarshal(t, s)
		default:
			t.Fatalf("no reader for %s", name)
		}
		base := strings.TrimSuffix(f, ".json")
		compattest.Golden(t, base+".values", []byte(compattest.Dump(v)))
		if out != nil {
			compattest.Golden(t, base+".out", out)
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
