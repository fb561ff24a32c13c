package hook

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/vars"
)

// A hook started by the launcher's fast path runs only while its stamp equals the plugin's
// checksums, compared as the launcher's own check compares them.
func TestStaleLaunch(t *testing.T) {
	const sums = "aaaa  cairn_0.1.0_linux_amd64.tar.gz\nbbbb  cairn_0.1.0_darwin_arm64.tar.gz\n"
	for _, tc := range []struct {
		name      string
		plugin    *string // release/checksums.txt; nil: missing
		stamp     *string // DIR/.checksums; nil: missing
		unsetBin  bool
		unsetRoot bool
		stale     bool
	}{
		{name: "not launched", plugin: ptr(sums), stamp: ptr("other\n"), unsetBin: true},
		{name: "same", plugin: ptr(sums), stamp: ptr(sums)},
		{name: "differs", plugin: ptr(sums), stamp: ptr("cccc  cairn_0.1.0_linux_amd64.tar.gz\nbbbb  cairn_0.1.0_darwin_arm64.tar.gz\n"), stale: true},
		{name: "one line less", plugin: ptr(sums), stamp: ptr("aaaa  cairn_0.1.0_linux_amd64.tar.gz\n"), stale: true},
		{name: "last newline missing", plugin: ptr(sums), stamp: ptr(sums[:len(sums)-1])},
		{name: "stamp missing", plugin: ptr(sums), stale: true},
		{name: "plugin's missing", stamp: ptr(sums), stale: true},
		{name: "both missing"},
		{name: "no root", plugin: ptr(sums), stamp: ptr(sums), unsetRoot: true, stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			if tc.plugin != nil {
				if err := os.MkdirAll(filepath.Join(root, "release"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "release", "checksums.txt"), []byte(*tc.plugin), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.stamp != nil {
				if err := os.WriteFile(filepath.Join(dir, ".checksums"), []byte(*tc.stamp), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{EnvLaunchRoot: root, EnvLaunchBin: dir}
			if tc.unsetBin {
				delete(env, EnvLaunchBin)
			}
			if tc.unsetRoot {
				delete(env, EnvLaunchRoot)
			}
			gotRoot, stale := staleLaunch(func(k string) string { return env[k] })
			if stale != tc.stale {
				t.Errorf("stale = %t, want %t", stale, tc.stale)
			}
			if stale && gotRoot != env[EnvLaunchRoot] {
				t.Errorf("root = %q, want %q", gotRoot, env[EnvLaunchRoot])
			}
		})
	}
}

func ptr(s string) *string { return &s }

// A stale hook that cannot hand back says so, on stderr and in one systemMessage, and exits
// 0 without reading stdin or doing any work.
func TestStaleLaunchWithoutLauncher(t *testing.T) {
	stdout, stderr := staleWithoutLauncher(t, t.TempDir(), Stop)
	if !strings.Contains(stdout, `"systemMessage":"Cairn: this plugin's binaries are out of date`) {
		t.Errorf("stdout = %q, want the systemMessage", stdout)
	}
	if !strings.Contains(stderr, "cairn-stop: these binaries were not made from the plugin's sources") || strings.Contains(stderr, "session=") {
		t.Errorf("stderr = %q, want the hand-back failure and no work", stderr)
	}
}

// cairn-event serves PreCompact, whose stdout Claude Code adds as it is to the compaction
// request: stale and unable to hand back, it says so in a line of text, not a JSON object,
// still without reading stdin. The step is the one that works for the install: make build
// in a checkout (it has a Makefile); else a new session, whose launcher installs the
// binaries. It said "run make build in the plugin, or reinstall it" to both, and a
// marketplace install has no Makefile.
func TestStaleLaunchWithoutLauncherEventSaysText(t *testing.T) {
	const said = "Cairn: this plugin's binaries are out of date and the launcher could not be run to replace them; "
	for _, tc := range []struct {
		name     string
		makefile bool
		step     string
	}{
		{"marketplace install", false, "start a new session: its launcher installs this plugin's binaries."},
		{"checkout", true, "run make -C ROOT build."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.makefile {
				if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte("build:\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stdout, _ := staleWithoutLauncher(t, root, Events)
			want := said + strings.ReplaceAll(tc.step, "ROOT", vars.Quote(root)) + "\n"
			if stdout != want {
				t.Errorf("stdout = %q, want the line as text: %q", stdout, want)
			}
		})
	}
}

// staleWithoutLauncher runs hook with binaries from other sources and a plugin at root that
// has no launcher to hand back to, checks it read nothing of stdin, and returns what it printed.
func staleWithoutLauncher(t *testing.T, root string, hook func(io.Reader, io.Writer, io.Writer, func(string) string, engine.YAML)) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir() // root: no release/checksums.txt, no hooks/launch
	if err := os.WriteFile(filepath.Join(dir, ".checksums"), []byte("0000  x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvLaunchRoot: root, EnvLaunchBin: dir}
	var out, errs strings.Builder
	stdin := &countingReader{}
	hook(stdin, &out, &errs, func(k string) string { return env[k] }, nil)
	if stdin.reads != 0 {
		t.Errorf("%d reads of stdin, want none", stdin.reads)
	}
	return out.String(), errs.String()
}

type countingReader struct{ reads int }

func (r *countingReader) Read(p []byte) (int, error) { r.reads++; return 0, io.EOF }
