package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/vars"
)

// A cairn run by its path, not through the launcher (the agent's PATH names the plugin's bin/,
// or the data dir's set through CLAUDE_ENV_FILE; a person's shell the same), that was built
// from other sources than the plugin it belongs to (after a git pull, until make build or the
// launcher's reinstall) does not run: it says so and how to install the plugin's, as the
// launcher would never run it. Only a set that names its plugin is checked: bin/ beside it,
// or a set Go built (.built-from). doctor, version, help (cairn CMD --help too) and uninstall
// still run from it, and so does completion: a shell's rc file sources its script at every
// start, and the script only calls `cairn __complete`, whichever cairn that is then.
func TestStaleSetDoesNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		dataSet  bool   // the launcher's Go build in a data dir, else the plugin's bin/
		stamp    string // the set's .checksums ("" for none)
		builtBy  bool   // the set names the plugin in .built-from
		args     []string
		refused  bool
		stepPart string
	}{
		{"bin after git pull", false, "old\n", false, []string{"list"}, true, "make -C "},
		{"bin current", false, "sums\n", false, []string{"list"}, false, ""},
		{"bin unstamped (go build by hand)", false, "", false, []string{"list"}, false, ""},
		{"data set Go built, after git pull", true, "old\n", true, []string{"list"}, true, "hooks/launch"},
		{"data set Go built, current", true, "sums\n", true, []string{"list"}, false, ""},
		// A pull that changed the version: the launcher installs bin-1.0.0, and this set stays.
		{"data set of the version before", true, "old\n", true, []string{"list"}, true, "bin-1.0.0"},
		{"release set: no plugin named", true, "old\n", false, []string{"list"}, false, ""},
		// A release's set names no plugin (checkouts share it), and the agent's Bash has no
		// CLAUDE_PLUGIN_ROOT: SessionStart's CLAUDE_ENV_FILE line names the session's plugin.
		{"release set, session's plugin after git pull", true, "old\n", false, []string{"list"}, true, "hooks/launch"},
		{"release set, session's plugin current", true, "sums\n", false, []string{"list"}, false, ""},
		{"release set of the version before, session's plugin", true, "old\n", false, []string{"list"}, true, "bin-1.0.0"},
		{"doctor from a stale set", false, "old\n", false, []string{"doctor"}, false, ""},
		{"version from a stale set", true, "old\n", true, []string{"version"}, false, ""},
		// A command's own help is help: cairn help list says the same.
		{"help of a command from a stale set", false, "old\n", false, []string{"list", "--help"}, false, ""},
		{"-h of a command from a stale set", true, "old\n", true, []string{"transition", "-h"}, false, ""},
		{"completion script from a stale set", false, "old\n", false, []string{"completion", "bash"}, false, ""},
		{"completion script from a stale data set", true, "old\n", true, []string{"completion", "zsh"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			root := filepath.Join(work, "plugin")
			writeTestFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name":"cairn","version":"1.0.0"}`)
			writeTestFile(t, filepath.Join(root, "release", "checksums.txt"), "sums\n")
			writeTestFile(t, filepath.Join(root, "Makefile"), "build:\n")
			dir := filepath.Join(root, "bin")
			if tc.dataSet {
				dir = filepath.Join(work, "data", "bin-1.0.0")
				if strings.Contains(tc.name, "version before") {
					dir = filepath.Join(work, "data", "bin-0.9.0")
				}
			}
			writeTestFile(t, filepath.Join(dir, "cairn"), "")
			if tc.stamp != "" {
				writeTestFile(t, filepath.Join(dir, ".checksums"), tc.stamp)
			}
			if tc.builtBy {
				writeTestFile(t, filepath.Join(dir, ".built-from"), root+"\n")
			}
			project := filepath.Join(work, "project")
			if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"CLAUDE_PROJECT_DIR": project, "HOME": work}
			if strings.Contains(tc.name, "session's plugin") {
				env["CAIRN_PLUGIN_ROOT"] = root
			}
			var stdout, stderr bytes.Buffer
			a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
				executable: func() (string, error) { return filepath.Join(dir, "cairn"), nil }}
			a.ctx = t.Context()
			code := a.main(tc.args)
			said := strings.Contains(stderr.String(), "built from other sources than the plugin")
			if tc.refused != said || tc.refused && (code != ExitRefused || stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.stepPart) ||
				!strings.Contains(stderr.String(), root)) {
				t.Errorf("cairn %s from %s: exit %d, stdout %q, stderr %q; want refused=%v with a step holding %q", strings.Join(tc.args, " "), dir, code, stdout.String(), stderr.String(), tc.refused, tc.stepPart)
			}
		})
	}
}

// The status line Claude Code shows runs cairn statusline by its path, and shows its stdout
// only: from a stale set it says so there, in the line, and exits 0 as it always does.
func TestStaleSetStatusline(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	root := filepath.Join(work, "plugin")
	writeTestFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name":"cairn","version":"1.0.0"}`)
	writeTestFile(t, filepath.Join(root, "release", "checksums.txt"), "sums\n")
	writeTestFile(t, filepath.Join(root, "Makefile"), "build:\n")
	writeTestFile(t, filepath.Join(root, "bin", ".checksums"), "old\n")
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader("{}"), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
		executable: func() (string, error) { return filepath.Join(root, "bin", "cairn"), nil }}
	a.ctx = t.Context()
	if code := a.main([]string{"statusline", "--json"}); code != ExitRefused || stdout.Len() != 0 {
		t.Errorf("cairn statusline --json from a stale bin/: exit %d, stdout %q; want the refusal", code, stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := a.main([]string{"statusline"}); code != ExitOK || stdout.String() != "cairn: this cairn was built from other sources than the plugin · run cairn doctor\n" ||
		!strings.Contains(stderr.String(), "make -C ") {
		t.Errorf("cairn statusline from a stale bin/: exit %d, stdout %q, stderr %q; want exit 0, the line saying so, and the step on stderr", code, stdout.String(), stderr.String())
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A stale bin/ in a plugin with no Makefile (not a checkout) said to start a new session "then
// run it again": the launcher passes over that bin/ for good, so this cairn refused again. The
// step names the cairn to run: the data set Claude Code's records lead to, else the one a
// session's PATH names. With ~/.claude a symbolic link (a dotfiles checkout), the records name
// the plugin through it and this cairn's path is read through it: the set was not found.
func TestStaleBinWithoutMakefileNamesDataSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		recorded, linked bool
	}{{"recorded", true, false}, {"not recorded", false, false}, {"recorded through a linked ~/.claude", true, true}} {
		recorded := tc.recorded
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			root := filepath.Join(work, ".claude", "plugins", "cache", "mkt.one", "cairn", "1.0.0")
			if tc.linked {
				moved := filepath.Join(work, "dotfiles", "claude")
				if err := os.MkdirAll(moved, 0o755); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, moved, filepath.Join(work, ".claude"))
			}
			writeTestFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name":"cairn","version":"1.0.0"}`)
			writeTestFile(t, filepath.Join(root, "release", "checksums.txt"), "sums\n")
			writeTestFile(t, filepath.Join(root, "bin", "cairn"), "")
			writeTestFile(t, filepath.Join(root, "bin", ".checksums"), "old\n")
			plugins := filepath.Join(work, ".claude", "plugins")
			want := "then run the cairn there (a session's PATH names it), not this one"
			if recorded {
				writeTestFile(t, filepath.Join(plugins, "installed_plugins.json"),
					`{"version": 2, "plugins": {"cairn@mkt.one": [{"scope": "user", "installPath": "`+root+`"}]}}`)
				want = "then run " + vars.Quote(filepath.Join(plugins, "data", "cairn-mkt-one", "bin-1.0.0", "cairn"))
			}
			env := map[string]string{"HOME": work}
			var stdout, stderr bytes.Buffer
			a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
				executable: func() (string, error) { return filepath.Join(root, "bin", "cairn"), nil }}
			a.ctx = t.Context()
			if code := a.main([]string{"list"}); code != ExitRefused || !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "run it again") {
				t.Errorf("cairn list from a stale bin/ without a Makefile: exit %d, stderr %q; want refused, with %q", code, stderr.String(), want)
			}
		})
	}
}
