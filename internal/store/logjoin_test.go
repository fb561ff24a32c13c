package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// A private key appended a line at a time (a script reading a key file into a log) is clean
// entry by entry, but the log file holds the key and cairn log show prints it, each entry
// scanned alone. An entry that, on the line after the log's last one, makes a secret's shape
// is refused as one holding it would be, the entry before it where the log last ended with a
// newline or not, and the log is left as it was.
func TestAppendLogRefusesASecretSplitOverTwoEntries(t *testing.T) {
	begin := `"-----BEGIN RSA ` + `PRIVATE KEY-----"`
	body := `"` + strings.Repeat("MIIEowIBAAKCAQEAx9", 4)[:64] + `"`
	for _, tc := range []struct{ name, before string }{
		{"the last line ended", begin + "\n"},
		{"the last line without its newline", begin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if secrets.ScanString(begin) != nil || secrets.ScanString(body) != nil || secrets.ScanString(begin+"\n"+body+"\n") == nil {
				t.Fatal("the key's lines are secrets alone, or not joined: the test needs lines that are only joined")
			}
			s, dir := newStore(t)
			file := filepath.Join(dir, "logs", "keys.jsonl")
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(`{"n":1}`+"\n"+tc.before), 0o600); err != nil {
				t.Fatal(err)
			}
			err := s.AppendLog("keys", []byte(body))
			if f, ok := errors.AsType[*secrets.Finding](err); !ok || strings.Contains(err.Error(), "MIIE") || strings.Contains(err.Error(), "BEGIN") {
				t.Fatalf("appending the key's body after its first line: err = %v (%v), want a refusal naming the rule, not the text", err, f)
			}
			if got, _ := os.ReadFile(file); string(got) != `{"n":1}`+"\n"+tc.before {
				t.Errorf("the log was changed: %q", got)
			}
			// What follows something else is appended.
			if err := s.AppendLog("other", []byte(body)); err != nil {
				t.Errorf("the key's body alone: %v", err)
			}
		})
	}
}
