package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// launchVersion names the set hooks/launch made and runs (DATA/bin-VERSION), so it reads
// plugin.json as the launcher does, by its shell patterns, not as JSON: for a version holding a
// JSON escape, which the launcher does not decode, JSON's reading named another directory
// (bin-0.1.0-"rc" beside the launcher's bin-0.1.0-\), and doctor, uninstall and a stale set's
// step sent the user to a set that is not there.
func TestLaunchVersionReadsPluginJSONAsTheLauncher(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, text, want string }{
		{"pretty", "{\n  \"name\": \"cairn\",\n  \"version\": \"0.1.0\",\n  \"license\": \"MIT\"\n}\n", "0.1.0"},
		{"one line, no newline", `{"name":"cairn","version":"0.2.0"}`, "0.2.0"},
		{"space before the colon", "{\n  \"version\" : \"0.3.0\"\n}\n", "0.3.0"},
		{"CRLF", "{\r\n  \"version\": \"0.4.0\",\r\n  \"name\": \"cairn\"\r\n}\r\n", "0.4.0"},
		{"escaped quote", "{\n  \"version\": \"0.1.0-\\\"rc\\\"\"\n}\n", `0.1.0-\`},
		{"unicode escape", "{\n  \"version\": \"0\\u002e1.0\"\n}\n", `0\u002e1.0`},
		{"no version", "{\n  \"name\": \"cairn\"\n}\n", "dev"},
		{"empty version", "{\n  \"version\": \"\"\n}\n", "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ".claude-plugin", "plugin.json"), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := launchVersion(root); got != tc.want {
				t.Errorf("launchVersion of %q = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}
