package plugintest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hooktest"
)

// cairn doctor's fix for a data set missing a binary (or holding an empty one) was
// "rm -rf SET && CLAUDE_PLUGIN_DATA=… sh …/hooks/launch cairn version": a removal in text the
// model may run. The launcher installs the whole set whenever the binary it is asked to run is
// missing, so the fix runs that binary and removes nothing: run as printed, it puts the set
// back, and the set's other files are replaced by renames, never missing.
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
	set := filepath.Join(pdata, "bin-"+pluginVersion(t))
	for i, name := range []string{"cairn-stop", "cairn-mcp", "cairn"} {
		if err := os.Remove(filepath.Join(set, name)); err != nil {
			t.Fatal(err)
		}
		fix := engine.RefreshCommand(root, set, name)
		cmd, _, ok := strings.Cut(fix, " (")
		if !ok || strings.Contains(fix, "rm ") {
			t.Fatalf("fix for a missing %s = %q, want a command with no removal", name, fix)
		}
		res := runShell(t, cmd, env, project, "")
		fi, err := os.Stat(filepath.Join(set, name))
		if res.code != 0 || err != nil || fi.Size() == 0 || rs.Hits(archive) != i+2 {
			t.Errorf("%s missing: running %q = %+v, %v after %d downloads; want the set whole again", name, cmd, res, err, rs.Hits(archive))
		}
	}
}
