package secrets_test

import (
	"encoding/json"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// A JSON document is never found cleaner than its own text: whatever ScanString sees in the
// raw bytes of a valid document, ScanJSON reports too (with a path).
func FuzzJSONSupersetOfText(f *testing.F) {
	for _, s := range []string{`{"a":"` + ghClassic + `"}`, `["x\n` + awsID + `"]`, `{"u":"` + pgURL + `"}`, `"\u0041"`, `{"aws_secret_access_key": "` + awsSecret + `"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		if secrets.ScanString(doc) != nil && secrets.ScanJSON([]byte(doc)) == nil {
			t.Fatalf("ScanString finds %v in %q but ScanJSON finds nothing", secrets.ScanString(doc), doc)
		}
	})
}
