package plugintest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
)

// Where a set of binaries has hook.SelfCheckFile, the launcher execs the hook at once and the
// hook compares its stamp with the plugin's checksums itself: a current one does its work
// with no other exec, a stale one hands back to the launcher, which runs another install that
// fits or the installer, so a stale hook never does any work.
func TestLaunchHooksCheckTheirOwnStamp(t *testing.T) {
	skipOnWindows(t)
	binary := builtBinary(t, "./hooks/stop")
	// put installs the real hook in dir, stamped current or stale, with SelfCheckFile.
	put := func(t *testing.T, root, dir string, current bool) {
		writeFile(t, filepath.Join(dir, hook.SelfCheckFile), "")
		if err := os.WriteFile(filepath.Join(dir, "cairn-stop"), binary, 0o755); err != nil {
			t.Fatal(err)
		}
		if current {
			stamp(t, root, dir)
		} else {
			writeFile(t, filepath.Join(dir, ".checksums"), "0000  cairn_"+pluginVersion(t)+"_linux_amd64.tar.gz\n")
		}
	}
	const worked = "cairn-stop: session=s-1 stop_hook_active=false"
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root, data string)
		want  string // in stdout+stderr
		execs int    // execve calls when strace can count them; 0: not counted
	}{
		{"bin-current", func(t *testing.T, root, data string) { put(t, root, filepath.Join(root, "bin"), true) }, worked, 2},
		{"data-current", func(t *testing.T, root, data string) {
			put(t, root, filepath.Join(data, "bin-"+pluginVersion(t)), true)
		}, worked, 2},
		{"bin-stale", func(t *testing.T, root, data string) { put(t, root, filepath.Join(root, "bin"), false) }, "could not be installed", 0},
		{"data-stale", func(t *testing.T, root, data string) {
			put(t, root, filepath.Join(data, "bin-"+pluginVersion(t)), false)
		}, "could not be installed", 0},
		{"bin-stale-data-current", func(t *testing.T, root, data string) {
			put(t, root, filepath.Join(root, "bin"), false)
			put(t, root, filepath.Join(data, "bin-"+pluginVersion(t)), true)
		}, worked, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			home, project, data := launchSite(t)
			tc.setup(t, root, data)
			env := launchEnv(root, data, home, toolDir(t), "CLAUDE_PROJECT_DIR="+project,
				"CAIRN_MEMORY_DIR="+filepath.Join(home, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
			command := hookCommand(t, "Stop")
			res := runShell(t, command, env, home, `{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`)
			out := res.stdout + res.stderr
			if res.code != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("Stop = %+v, want exit 0 and %q", res, tc.want)
			}
			if tc.want != worked && strings.Contains(out, "cairn-stop: session=") {
				t.Errorf("the stale hook did its work: %+v", res)
			}
			strace, err := exec.LookPath("strace")
			if tc.execs == 0 || err != nil {
				return
			}
			trace := filepath.Join(t.TempDir(), "trace")
			cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=execve", "-o", trace, "/bin/sh", "-c", command)
			cmd.Env = env
			cmd.Dir = home
			cmd.Stdin = strings.NewReader(`{"session_id":"s-1"}`)
			if out, err := cmd.CombinedOutput(); err != nil {
				if strings.Contains(string(out), "ptrace") {
					t.Skipf("strace cannot trace here: %s", out)
				}
				t.Fatalf("strace: %v\n%s", err, out)
			}
			log, _ := os.ReadFile(trace)
			if n := len(regexp.MustCompile(`\bexecve\(`).FindAll(log, -1)); n != tc.execs {
				t.Errorf("%d execs, want %d (the shell, then the hook):\n%s", n, tc.execs, log)
			}
		})
	}
}

// builtBinary is the bytes of pkg (a path from the repository's root) as go build makes it;
// the test is skipped where go is not on PATH.
func builtBinary(t *testing.T, pkg string) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: cannot build %s", pkg)
	}
	built := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", built, pkg)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	binary, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	return binary
}
