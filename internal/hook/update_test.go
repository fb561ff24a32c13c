package hook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/project"
)

// A marketplace update puts the new version in a directory of its own and marks the old one
// (.orphaned_at); a session running keeps the old directory as CLAUDE_PLUGIN_ROOT, whose
// checksums never change, so nothing told the user that the session ran the old version until
// Claude Code restarted. The next hook now says so, once per session; not where the plugin
// is still installed from that directory, not for the same version, not without the mark.
func TestHooksTellOfAnUpdateOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		marked    bool
		installed string // the version installed_plugins.json names ("" for the running root)
		want      bool
	}{
		{"updated", true, "1.1.0", true},
		{"no mark", false, "1.1.0", false},
		{"still installed here", true, "", false},
		{"the same version elsewhere", true, "1.0.0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv, _ := startedProject(t, "wf")
			config := t.TempDir()
			cache := filepath.Join(config, "plugins", "cache", "mkt", "cairn")
			root := filepath.Join(cache, "1.0.0")
			writeUpdateFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name":"cairn","version":"1.0.0"}`+"\n")
			if tc.marked {
				writeUpdateFile(t, filepath.Join(root, project.OrphanedMark), "1796099015005")
			}
			path := root
			if tc.installed != "" {
				// Not root, even for the same version: the branch that compares versions.
				path = filepath.Join(config, "plugins", "cache", "mkt2", "cairn", tc.installed)
			}
			rec, _ := json.Marshal(map[string]any{"version": 2, "plugins": map[string]any{
				"cairn@mkt": []map[string]string{{"scope": "user", "installPath": path, "version": tc.installed}},
				"other@mkt": []map[string]string{{"scope": "user", "installPath": "/elsewhere", "version": "9.9.9"}},
			}})
			writeUpdateFile(t, filepath.Join(config, "plugins", "installed_plugins.json"), string(rec))
			env := map[string]string{"CLAUDE_CONFIG_DIR": config, "CLAUDE_PLUGIN_ROOT": root, "CLAUDE_CODE_SESSION_ID": "s1"}
			get := func(k string) string {
				if v, ok := env[k]; ok {
					return v
				}
				return getenv(k)
			}
			const said = "Cairn was updated to version 1.1.0; this session still runs 1.0.0: restart Claude Code to use it."
			out, _ := runStop(get, "s1")
			if got := strings.Contains(out, "Cairn was updated"); got != tc.want || got && !strings.Contains(out, said) {
				t.Fatalf("the Stop hook's answer %q tells of the update: %v, want %v", out, got, tc.want)
			}
			if tc.want {
				var ans struct{ SystemMessage string }
				if err := json.Unmarshal([]byte(out), &ans); err != nil || ans.SystemMessage != said {
					t.Errorf("the Stop hook's answer %q (%v): want the systemMessage %q", out, err, said)
				}
			}
			if out, _ := runStop(get, "s1"); strings.Contains(out, "updated") {
				t.Errorf("the next Stop tells of the update again: %q", out)
			}
			env["CLAUDE_CODE_SESSION_ID"] = "s2"
			var stdout, stderr strings.Builder
			hook.SessionStart(strings.NewReader(`{"session_id":"s2","hook_event_name":"SessionStart","source":"clear"}`), &stdout, &stderr, get, nil)
			var ans struct {
				SystemMessage      string
				HookSpecificOutput struct{ AdditionalContext string }
			}
			if err := json.Unmarshal([]byte(stdout.String()), &ans); err != nil {
				t.Fatalf("SessionStart's answer %q: %v", stdout.String(), err)
			}
			if got := strings.Contains(ans.SystemMessage, said); got != tc.want || ans.HookSpecificOutput.AdditionalContext == "" {
				t.Errorf("SessionStart of another session: %+v; want the update told: %v, and the resume report", ans, tc.want)
			}
		})
	}
}

func writeUpdateFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
