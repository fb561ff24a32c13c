package plugintest

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hooktest"
)

// cairn doctor's fix for a data set missing a binary (or holding an empty one) was
// "rm -rf SET && CLAUDE_PLUGIN_DATA=… sh …/hooks/launch cairn version": a removal in text the
// model may run. Then it ran the missing binary through the launcher, which installs the whole
// set when the binary it runs is missing: for a hook, the hook itself, by hand, with no event,
// in the project: SessionStart recorded a session for the shell, a Stop settled the turn. The
// fix runs cairn version, which the launcher runs only from a whole set: run as printed, it
// puts the set back (the set's other files replaced by renames, never missing), removes
// nothing, and changes nothing in the project's state.
func TestDoctorFixPutsBackAMissingBinary(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, project, pdata := launchSite(t)
	env := launchEnv(root, pdata, filepath.Join(work, "home"), toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL,
		"CLAUDE_PROJECT_DIR="+project, "CLAUDE_CONFIG_DIR="+filepath.Join(work, "home", ".claude"),
		"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
	if res := runShell(t, `exec "$CLAUDE_PLUGIN_ROOT/hooks/launch" cairn version`, env, project, ""); res.code != 0 {
		t.Fatalf("first install: %+v", res)
	}
	// The model runs the fix in its Bash, which has the session's id.
	env = append(env, "CLAUDE_CODE_SESSION_ID=s-1")
	if res := runShell(t, `exec "$CLAUDE_PLUGIN_ROOT/hooks/launch" cairn start apex 'add retries'`, env, project, ""); res.code != 0 {
		t.Fatalf("start: %+v", res)
	}
	set := filepath.Join(pdata, "bin-"+pluginVersion(t))
	for i, name := range []string{"cairn-stop", "cairn-session-start", "cairn-mcp", "cairn"} {
		state := treeOf(t, filepath.Join(project, ".claude", "cairn"))
		if err := os.Remove(filepath.Join(set, name)); err != nil {
			t.Fatal(err)
		}
		fix := engine.RefreshCommand(root, set, "")
		cmd, _, ok := strings.Cut(fix, " (")
		if !ok || strings.Contains(fix, "rm ") {
			t.Fatalf("fix for a missing %s = %q, want a command with no removal", name, fix)
		}
		res := runShell(t, cmd, env, project, "")
		fi, err := os.Stat(filepath.Join(set, name))
		if res.code != 0 || err != nil || fi.Size() == 0 || rs.Hits(archive) != i+2 {
			t.Errorf("%s missing: running %q = %+v, %v after %d downloads; want the set whole again", name, cmd, res, err, rs.Hits(archive))
		}
		if now := treeOf(t, filepath.Join(project, ".claude", "cairn")); !maps.Equal(now, state) || strings.Contains(res.stderr, name+":") {
			t.Errorf("%s missing: running %q ran it (stderr %q): the state went from %v to %v", name, cmd, res.stderr, state, now)
		}
	}
}

// treeOf is each file under dir (its path there) and its text.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		files[strings.TrimPrefix(p, dir)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A directory where a set's binary goes (cairn-stop), or a link to one (cairn-event, leading
// out of the data directory): doctor says the binary is not a file, and its fix ran the
// launcher, which took the directory for the binary (test -x and -s pass for one) and ran cairn
// from the set as it was, installing nothing; an install moved the new binary into the
// directory, into the one the link leads to (outside the plugin's data) for the link. The
// hooks kept failing. The fix puts the binaries in their place, and writes nothing elsewhere.
func TestDoctorFixReplacesADirectoryAtABinary(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, project, pdata := launchSite(t)
	env := launchEnv(root, pdata, filepath.Join(work, "home"), toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	if res := runShell(t, `exec "$CLAUDE_PLUGIN_ROOT/hooks/launch" cairn version`, env, project, ""); res.code != 0 {
		t.Fatalf("first install: %+v", res)
	}
	set := filepath.Join(pdata, "bin-"+pluginVersion(t))
	elsewhere := filepath.Join(work, "elsewhere")
	writeFile(t, filepath.Join(elsewhere, "notes"), "the user's\n")
	for _, p := range []string{"cairn-stop", "cairn-event"} {
		if err := os.Remove(filepath.Join(set, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(set, "cairn-stop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(set, "cairn-event")); err != nil {
		t.Fatal(err)
	}
	fix := engine.RefreshCommand(root, set, "")
	cmd, _, _ := strings.Cut(fix, " (")
	res := runShell(t, cmd, env, project, "")
	for _, name := range []string{"cairn-stop", "cairn-event"} {
		if fi, err := os.Lstat(filepath.Join(set, name)); res.code != 0 || err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
			t.Errorf("running %q = %+v after %d downloads: %s is %v (%v), want the binary", cmd, res, rs.Hits(archive), name, fi, err)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 1 || ents[0].Name() != "notes" {
		t.Errorf("the install wrote into %s, where the link led: %v", elsewhere, ents)
	}
}
