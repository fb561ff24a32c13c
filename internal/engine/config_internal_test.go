package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadConfigMistyped: a setting of the wrong type is said in JSON's words
// (strictjson.Explain), as every other document Cairn reads is; a whole number too large to
// keep was said to be "a number 99999999999999999999, not a whole number", repeating it.
func TestReadConfigMistyped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{`{"archive_retention": 99999999999999999999}`, "archive_retention must be a whole number, not a fraction or a number out of range"},
		{`{"archive_retention": 1.5}`, "archive_retention must be a whole number, not a fraction or a number out of range"},
		{`{"approvals": "no"}`, "approvals must be a boolean, not a string"},
		{`{"stop_blocking": 1}`, "stop_blocking must be a boolean, not a number"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, configFile), []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, bad := readConfig(dir); bad != tc.want {
			t.Errorf("%s: said %q, want %q", tc.file, bad, tc.want)
		}
	}
}
