package plugintest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hooktest"
)

// Each hooks.json command, run the way Claude Code runs it (/bin/sh -c with CLAUDE_PLUGIN_ROOT
// set, here to a path with a space in it), reaches the hook built into bin/ (make build, which
// stamps it with the plugin's checksums), which answers the event with output Claude Code
// accepts.
func TestHooksJSONCommandsRun(t *testing.T) {
	skipOnWindows(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build the hooks")
	}
	var hf hooksFile
	readJSON(t, "hooks/hooks.json", &hf)
	root := filepath.Join(t.TempDir(), "plugin root")
	for _, f := range launcherFiles {
		data, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, f), string(data))
	}
	if err := os.Chmod(filepath.Join(root, "hooks", "launch"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, pkg := range map[string]string{"cairn-session-start": "./hooks/sessionstart", "cairn-stop": "./hooks/stop"} {
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", filepath.Join(root, "bin", name), pkg)
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	stamp(t, root, filepath.Join(root, "bin"))

	work, project, data := launchSite(t)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(work, "home"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(work, "home", ".claude"),
		"CLAUDE_PLUGIN_ROOT=" + root,
		"CLAUDE_PLUGIN_DATA=" + data,
		"CLAUDE_PROJECT_DIR=" + project,
		"CAIRN_MEMORY_DIR=" + filepath.Join(work, "memory"),
		"CLAUDE_PID=" + hooktest.ClaudePID,
	}
	events := map[string]string{
		"SessionStart": `{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`,
		"Stop":         `{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`,
	}
	for _, event := range []string{"SessionStart", "Stop"} {
		for _, g := range hf.Hooks[event] {
			for _, h := range g.Hooks {
				cmd := exec.Command("/bin/sh", "-c", h.Command)
				cmd.Env = env
				cmd.Dir = project
				cmd.Stdin = strings.NewReader(events[event])
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: sh -c %q: %v\nstderr: %s", event, h.Command, err, stderr.String())
				}
				if err := hooktest.CheckOutput(stdout.String(), event); err != nil {
					t.Errorf("%s: %v", event, err)
				}
				want := map[string]string{"SessionStart": "cairn-session-start: source=startup session=s-1", "Stop": "cairn-stop: session=s-1"}[event]
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("%s: stderr = %q, want the built hook's summary line (%q)", event, stderr.String(), want)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".claude", "cairn", "sessions", hooktest.ClaudePID+".json")); err != nil {
		t.Errorf("SessionStart through hooks.json did not record the session: %v", err)
	}
}

// A plugin directory removed under a running session (claude plugin uninstall or an update in
// another terminal; Claude Code keeps the hooks it loaded) has no hooks/launch: each hooks.json
// command then exits 0 with the shell's line naming the file. dash exits 2 when . cannot open
// its file, which Claude Code takes as a Stop hook blocking the stop, with that line fed to
// the model as the reason, every turn.
func TestHooksJSONCommandsWithoutTheLauncher(t *testing.T) {
	skipOnWindows(t)
	root := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_PLUGIN_ROOT=" + root, "CLAUDE_PLUGIN_DATA=" + t.TempDir()}
	for _, event := range []string{"SessionStart", "Stop", "PreCompact", "StopFailure"} {
		res := runShell(t, hookCommand(t, event), env, root, `{"session_id":"s"}`)
		if res.code != 0 || !strings.Contains(res.stderr, "hooks/launch") || res.stdout != "" {
			t.Errorf("%s without hooks/launch = %+v, want exit 0 and a line naming the missing file", event, res)
		}
	}
}

// Claude Code writes the plugin root into a hook's command in place of ${CLAUDE_PLUGIN_ROOT}
// (and sets it in the hook's environment): a root holding a double quote ended the quoted word
// early, and /bin/sh's syntax error exits 2, which for Stop blocks the stop every turn; a $(...)
// there ran as a command. The commands take the root from the environment, where no byte of it
// is shell syntax.
func TestHooksJSONCommandsOddRoot(t *testing.T) {
	skipOnWindows(t)
	var hf hooksFile
	readJSON(t, "hooks/hooks.json", &hf)
	work := t.TempDir()
	plugin := copyPlugin(t, launcherFiles...)
	root := filepath.Join(filepath.Dir(plugin), `a "b" $(touch ran) 'c'`+"\nd")
	if err := os.Rename(plugin, root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "bin")
	for name := range binarySources { // fakeBinaries' scripts would run the root's $(...) themselves
		writeFile(t, filepath.Join(dir, name), "#!/bin/sh\necho \"ran $0\"\n")
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stamp(t, root, dir)
	env := launchEnv(root, filepath.Join(work, "data"), work, toolDir(t))
	for event, groups := range hf.Hooks {
		cmd := strings.ReplaceAll(groups[0].Hooks[0].Command, "${CLAUDE_PLUGIN_ROOT}", root)
		res := runShell(t, cmd, env, work, "{}")
		if res.code != 0 || !strings.HasPrefix(res.stdout, "ran "+dir+"/cairn-") {
			t.Errorf("%s with the root %q written in = %+v, want the hook in its bin/ run", event, root, res)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Error("a $(...) in the plugin root ran as a command")
	}
}

// A plugin directory half removed (an update replacing it under a running session: hooks/launch
// still there, hooks/install gone) left the launcher's "." of install failing, and dash exits 2
// there when the file runs as a script: a hook handing back to it (internal/hook, handBack) or
// run again after an exec that failed then blocked the stop, with dash's line as the reason; the
// MCP server and the CLI exited 2 with that line alone. Each now says in one line that the
// plugin's directory is incomplete: the hooks exit 0, the MCP server and the CLI exit 1.
// With plugin.json gone instead, the launcher took the version to be "dev" and said dash's
// "cannot open" line, then that the release lists no cairn_dev archive and to install Go (with
// Go, it built a "dev" set from what was left): it says the same one line, naming plugin.json.
// With release/checksums.txt gone, it said the release lists no archive for the version (with Go,
// it built from what was left): it says the same one line, naming the checksums.
func TestLaunchWithoutInstall(t *testing.T) {
	skipOnWindows(t)
	all := []string{".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/launch", "hooks/install", "release/checksums.txt"}
	for _, gone := range []string{"hooks/install", ".claude-plugin/plugin.json", "release/checksums.txt"} {
		t.Run(filepath.Base(gone), func(t *testing.T) {
			launchWithout(t, copyPlugin(t, slices.DeleteFunc(slices.Clone(all), func(f string) bool { return f == gone })...), gone)
		})
	}
}

func launchWithout(t *testing.T, root, gone string) {
	work := t.TempDir()
	for _, sh := range []string{"/bin/sh", "bash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		env := launchEnv(root, filepath.Join(work, "data"), work, os.Getenv("PATH"), "CAIRN_LAUNCH_VERIFY=1")
		check := func(how string, want int, res launchResult) {
			t.Helper()
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			if res.code != want || res.stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "cairn: ") || !strings.Contains(lines[0], filepath.Join(root, filepath.FromSlash(gone))) {
				t.Errorf("%s %s without %s = %+v, want exit %d and one line from cairn naming the missing file", sh, how, gone, res, want)
			}
		}
		for name := range binarySources {
			// As a hook hands back to it, and as .mcp.json and the CLI run it.
			check(name, launchFailCode(name), runProcess(t, time.Minute, "launch", env, work, "", sh, filepath.Join(root, "hooks", "launch"), name))
		}
		for _, event := range []string{"SessionStart", "Stop"} {
			check(event, 0, runProcess(t, time.Minute, "hook", env, work, "{}", sh, "-c", hookCommand(t, event)))
		}
	}
}

// A plugin directory that has lost plugin.json (an update half done) has no version to name its
// data set by: SessionStart says so and names no set on the agent's PATH. Before, it appended
// DATA/bin-dev to CLAUDE_ENV_FILE, a set no release has, which a checkout's build there would
// have the agent's every Bash command run for the rest of the session.
func TestLaunchWithoutPluginJSONNamesNoSetOnTheAgentsPath(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, "hooks/hooks.json", "hooks/launch", "hooks/install", "release/checksums.txt")
	work := t.TempDir()
	envFile := filepath.Join(work, "sessionstart-hook-0.sh")
	env := launchEnv(root, filepath.Join(work, "data"), work, os.Getenv("PATH"), "CLAUDE_ENV_FILE="+envFile)
	res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
	lines, _ := os.ReadFile(envFile)
	if res.code != 0 || len(lines) != 0 || !strings.Contains(res.stderr, "plugin.json") {
		t.Errorf("SessionStart without plugin.json = %+v and CLAUDE_ENV_FILE holds %q, want exit 0, a line naming plugin.json and no PATH line", res, lines)
	}
}
