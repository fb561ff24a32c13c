//go:build unix

package cli_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/vars"
)

// TestDoctorFindsPluginAboveBin: a cairn installed in a plugin's bin/ finds the plugin
// without CLAUDE_PLUGIN_ROOT, and its checks pass on a complete install.
func TestDoctorFindsPluginAboveBin(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	plugin := filepath.Join(t.TempDir(), "cairn-plugin")
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"cairn"}`,
		"hooks/hooks.json":           `{"hooks":{}}`,
		".mcp.json":                  `{"mcpServers":{}}`,
		"skills/cairn/SKILL.md":      "---\nname: cairn\ndescription: Use when a task has phases.\n---\n",
		"hooks/launch":               "#!/bin/sh\n",
		"hooks/install":              "",
		"release/checksums.txt":      "",
		"bin/cairn-mcp":              "#!/bin/sh\n",
		"bin/cairn-session-start":    "#!/bin/sh\n",
		"bin/cairn-stop":             "#!/bin/sh\n",
		"bin/cairn-event":            "#!/bin/sh\n",
	}
	for name, data := range files {
		p := filepath.Join(plugin, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := exec.LookPath("cairn")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(plugin, "bin", "cairn")
	if err := os.Link(src, bin); err != nil {
		copyFile(t, src, bin) // another file system
	}

	// A first write creates the state directory (doctor itself only reads).
	save := exec.Command(bin, "checkpoint", "save", "probe", "{}")
	save.Dir, save.Env = dir, env
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("cairn checkpoint save: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "doctor", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cairn doctor: %v\n%s", err, out)
	}
	var rep struct {
		OK         bool   `json:"ok"`
		PluginRoot string `json:"plugin_root"`
		Checks     []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	want, _ := filepath.EvalSymlinks(plugin)
	if rep.PluginRoot != want || !rep.OK {
		t.Fatalf("plugin root %q ok=%v, want %q and ok\n%s", rep.PluginRoot, rep.OK, want, out)
	}
	names := map[string]bool{}
	for _, c := range rep.Checks {
		names[c.Name] = true
	}
	for _, n := range []string{"binary cairn-mcp", "plugin file skills/cairn/SKILL.md", "state directory permissions", "locks"} {
		if !names[n] {
			t.Errorf("no %q check in %s", n, out)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorOutsideProject: run where no git repository and no Cairn state are (a shell in
// $HOME, say), doctor says it is not in a project, as the commands that write would, instead
// of passing checks of a directory no write may make; a session's CLAUDE_PROJECT_DIR makes it
// one.
func TestDoctorOutsideProject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := outsideProject(t)
	type report struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
			Fix  string `json:"fix"`
		} `json:"checks"`
	}
	root := func(env []string) (ok bool, fix string) {
		t.Helper()
		out, _ := cairnCmd(t, dir, env, "doctor", "--json").Output()
		var rep report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		for _, c := range rep.Checks {
			if c.Name == "project root" {
				return c.OK, c.Fix
			}
		}
		t.Fatalf("no project root check in %s", out)
		return false, ""
	}
	if ok, fix := root(outside); ok || !strings.Contains(fix, "CLAUDE_PROJECT_DIR") {
		t.Fatalf("outside a project: project root ok=%v, fix %q", ok, fix)
	}
	if ok, _ := root(append(outside, "CLAUDE_PROJECT_DIR="+dir)); !ok {
		t.Fatal("with CLAUDE_PROJECT_DIR: the project root check failed")
	}
}

// TestDoctorColourKeepsColumns: on a terminal the marks are coloured, and the table lines up
// as it does without colour; a failed check's fix line included (the escape codes take bytes
// but no columns).
func TestDoctorColourKeepsColumns(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	doctor := func(colour string) string {
		cmd := cairnCmd(t, dir, append(env, colour), "doctor")
		out, _ := cmd.Output() // exit 1: no plugin is installed, a check fails
		return string(out)
	}
	plain := doctor("NO_COLOR=1")
	if !strings.Contains(plain, "fix: ") {
		t.Fatalf("no failed check with a fix to line up:\n%s", plain)
	}
	coloured := doctor("CLICOLOR_FORCE=1")
	if !strings.Contains(coloured, "\x1b[") {
		t.Fatalf("CLICOLOR_FORCE=1 gave no colour:\n%s", coloured)
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(coloured, ""); got != plain {
		t.Errorf("with colour (escape codes taken out):\n%s\nwithout:\n%s", got, plain)
	}
}

// TestDoctorCairnOffPathSaysWhatIsFine: with no cairn on PATH the check passes (the plugin
// runs its binaries by their paths), so its ok line says that, not "not on PATH" alone; with
// or without another cairn on PATH, it names the one command that links this cairn, run by
// this cairn's path. Before, a bare "cairn doctor --link" was offered: not found where no
// cairn is on PATH (and beside an ln -s, two steps), and where another cairn is, that one ran
// and linked itself.
func TestDoctorCairnOffPathSaysWhatIsFine(t *testing.T) {
	t.Parallel()
	exe := thisCairn(t)
	type check struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "cairn"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := ": " + vars.Quote(exe) + " doctor --link"
	// Without HOME, doctor --link has no ~/.local/bin to link from: the step is the link itself.
	noHomeLink := ": ln -s " + vars.Quote(exe) + " DIR/cairn, DIR a directory on your PATH"
	for _, tc := range []struct {
		path, prefix, suffix string
		noHome               bool
	}{
		{t.TempDir(), "not needed: the plugin runs its binaries by their paths; ", link, false},
		{other, filepath.Join(other, "cairn") + " is another cairn than this one", link, false},
		{t.TempDir(), "not needed: the plugin runs its binaries by their paths; ", noHomeLink, true},
		{other, filepath.Join(other, "cairn") + " is another cairn than this one", noHomeLink, true},
	} {
		dir, env := project(t)
		var offPath []string
		for _, kv := range env {
			if !strings.HasPrefix(kv, "PATH=") && !(tc.noHome && strings.HasPrefix(kv, "HOME=")) {
				offPath = append(offPath, kv)
			}
		}
		if tc.noHome {
			offPath = append(offPath, "HOME=")
		}
		offPath = append(offPath, "PATH="+tc.path)
		out, _ := cairnCmd(t, dir, offPath, "doctor", "--json").Output()
		var rep struct {
			Checks []check `json:"checks"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		i := slices.IndexFunc(rep.Checks, func(c check) bool { return c.Name == "cairn on PATH" })
		if i < 0 {
			t.Fatalf("no cairn on PATH check in %s", out)
		}
		c := rep.Checks[i]
		if !c.OK || !strings.HasPrefix(c.Detail, tc.prefix) || !strings.HasSuffix(c.Detail, tc.suffix) ||
			(tc.suffix == link) == strings.Contains(c.Detail, "ln -s") {
			t.Errorf("PATH=%s, HOME unset %v: cairn on PATH: ok=%v %q, want ok, %q, and the one command that links this cairn (%q)", tc.path, tc.noHome, c.OK, c.Detail, tc.prefix, tc.suffix)
		}
	}
}

// TestDoctorDanglingLink: the ~/.local/bin/cairn that doctor --link made from the launcher's
// set (DATA/bin-VERSION) dangles once an update's launcher removes that set a day later.
// doctor passed it as "not needed", as if no link were there: it now says the link names a
// cairn that is gone, and the one command that links this one.
func TestDoctorDanglingLink(t *testing.T) {
	t.Parallel()
	exe := thisCairn(t)
	dir, env := project(t)
	var home string
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	link := filepath.Join(home, ".local", "bin", "cairn")
	gone := filepath.Join(home, ".claude", "plugins", "data", "cairn-cairn", "bin-0.0.9", "cairn")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gone, link); err != nil {
		t.Fatal(err)
	}
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	env = append(env, "PATH="+filepath.Dir(link))
	out, _ := cairnCmd(t, dir, env, "doctor").Output()
	want := "FAIL  cairn on PATH"
	detail := link + " links to " + gone + ", which is not there"
	fix := "fix: " + vars.Quote(exe) + " doctor --link"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), detail) || !strings.Contains(string(out), fix) {
		t.Fatalf("doctor with a dangling ~/.local/bin/cairn says:\n%s\nwant %q, %q and %q", out, want, detail, fix)
	}
}

// thisCairn is the path of the cairn the tests run, through any link to it.
func thisCairn(t *testing.T) string {
	t.Helper()
	exe, err := exec.LookPath("cairn")
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestDoctorSaysAnUpdateNeedsARestart: after a marketplace update, a session started before it
// runs the old version's directory (Claude Code marks it .orphaned_at and installs the new
// version beside it), and doctor there passed every check: nothing said the session ran the
// old version. It now fails a check whose fix is the restart.
func TestDoctorSaysAnUpdateNeedsARestart(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	config := t.TempDir()
	cache := filepath.Join(config, "plugins", "cache", "mkt", "cairn")
	plugin := filepath.Join(cache, "1.0.0")
	for name, data := range map[string]string{
		".claude-plugin/plugin.json": `{"name":"cairn","version":"1.0.0"}`,
		".orphaned_at":               "1796099015005",
	} {
		p := filepath.Join(plugin, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := `{"version":2,"plugins":{"cairn@mkt":[{"scope":"user","installPath":"` + filepath.Join(cache, "1.1.0") + `","version":"1.1.0"}]}}`
	if err := os.WriteFile(filepath.Join(config, "plugins", "installed_plugins.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "CLAUDE_CONFIG_DIR="+config, "CLAUDE_PLUGIN_ROOT="+plugin)
	out, _ := cairnCmd(t, dir, env, "doctor", "--json").Output()
	var rep struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		} `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	i := slices.IndexFunc(rep.Checks, func(c struct {
		Name, Detail, Fix string
		OK                bool
	}) bool {
		return c.Name == "plugin version"
	})
	if rep.OK || i < 0 || rep.Checks[i].OK || rep.Checks[i].Fix != "restart Claude Code to use version 1.1.0" || !strings.Contains(rep.Checks[i].Detail, "version 1.0.0") {
		t.Fatalf("doctor --json after an update: %s\nwant a failed \"plugin version\" check whose fix is the restart", out)
	}
}
