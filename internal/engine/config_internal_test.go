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
		{`{"archive_retention": -1}`, "archive_retention is -1, not a whole number of 0 or more (0 keeps every archive)"},
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

// TestReadConfigStrict: config.json is held to the strict JSON every document Cairn reads is.
// A setting written twice was taken from its last copy without a word ("approvals": true
// above, false below: gates off); a byte order mark (Notepad's) was "not JSON (it goes wrong at
// byte 1)", which the person cannot see in the file. Both are said, and no setting is used.
// encoding/json matches a setting's name whatever its case: "Approvals" written after
// "approvals" turned the gates off as silently.
func TestReadConfigStrict(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"approvals": true, "stop_blocking": false, "approvals": false}`, "invalid JSON at byte 44: duplicate key (a 9-byte key already in this object)"},
		{`{"approvals": true, "Approvals": false}`, "invalid JSON at byte 20: duplicate key (a 9-byte key already in this object, in another case or spelling)"},
		{"\ufeff{\"approvals\": false}", "invalid JSON at byte 0: unexpected byte order mark (U+FEFF): remove it"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, configFile), []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		conf, bad := readConfig(dir)
		if bad != tc.want {
			t.Errorf("%s: said %q, want %q", tc.file, bad, tc.want)
		}
		if conf != (fileConfig{}) {
			t.Errorf("%s: used %+v, want no setting", tc.file, conf)
		}
	}
}
