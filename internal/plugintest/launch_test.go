package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// launchEnv is a minimal environment for hooks/launch: the plugin root and data dir, an
// isolated HOME, PATH, and a release URL where nothing listens (extra may name another: the
// last value wins).
func launchEnv(root, data, home, path string, extra ...string) []string {
	env := []string{
		"CLAUDE_PLUGIN_ROOT=" + root,
		"CLAUDE_PLUGIN_DATA=" + data,
		"HOME=" + home,
		"PATH=" + path,
		"CAIRN_DOWNLOAD_URL=http://127.0.0.1:1/releases",
	}
	return append(env, extra...)
}

// realGo is the go on PATH and the settings a launch's build needs to use this machine's
// caches, with no download and no other toolchain; without a go the test is skipped, saying
// why.
func realGo(t *testing.T, why string) (goBin string, settings []string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip(why)
	}
	for _, key := range []string{"GOCACHE", "GOMODCACHE", "GOENV"} {
		out, err := exec.Command(goBin, "env", key).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", key, err)
		}
		settings = append(settings, key+"="+strings.TrimSpace(string(out)))
	}
	return goBin, append(settings, "GOPROXY=off", "GOTOOLCHAIN=local")
}

// launcherFiles are the plugin's files the launcher reads.
var launcherFiles = []string{".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/launch", "hooks/install", "release/checksums.txt"}

type launchResult struct {
	stdout, stderr string
	code           int
}

func runLaunch(t *testing.T, root string, env []string, stdin string, args ...string) launchResult {
	t.Helper()
	return runProcess(t, 4*time.Minute, fmt.Sprintf("running hooks/launch %v", args), env, t.TempDir(), stdin, filepath.Join(root, "hooks", "launch"), args...)
}

// launchAs starts the launcher called name: cairn-session-start as the SessionStart hook
// command (from dir), any other (the MCP server) through hooks/launch, sent an initialize line.
func launchAs(t *testing.T, root string, env []string, dir, name string) launchResult {
	t.Helper()
	if name == "cairn-session-start" {
		return runShell(t, hookCommand(t, "SessionStart"), env, dir, `{"session_id":"s"}`)
	}
	return runLaunch(t, root, env, initializeLine, name)
}

// initializeLine is an MCP client's first line, which the server answers with its serverInfo.
const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"launch-test","version":"0"}}}` + "\n"

// atOnce runs launch(0) to launch(n-1) concurrently and returns their results in that order.
func atOnce(n int, launch func(i int) launchResult) []launchResult {
	results := make([]launchResult, n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = launch(i) })
	}
	wg.Wait()
	return results
}

// runProcess runs name with args, env, dir and stdin, and returns what it printed and its
// exit code; a failure to run it at all fails t, naming it as what.
func runProcess(t testing.TB, timeout time.Duration, what string, env []string, dir, stdin, name string, args ...string) launchResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, name, args...)
	c.Env, c.Dir = env, dir
	c.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return launchResult{out.String(), errb.String(), code}
}

// toolDir makes a directory of symlinks to the host tools hooks/launch and hooks/install use,
// and nothing else: a PATH without go.
func toolDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"sh", "sed", "dirname", "mkdir", "find", "rm", "rmdir", "mv", "sleep", "cat", "uname", "curl", "sha256sum", "tar", "gzip", "tr", "date", "sync", "od", "touch", "ln", "readlink"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("host tool %s is missing: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// wrapTool replaces tool in tools (a toolDir) with the shell script body makes of the host
// tool it linked to.
func wrapTool(t testing.TB, tools, tool string, body func(real string) string) {
	t.Helper()
	real, err := os.Readlink(filepath.Join(tools, tool))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tools, tool)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tools, tool), "#!/bin/sh\n"+body(real))
	if err := os.Chmod(filepath.Join(tools, tool), 0o755); err != nil {
		t.Fatal(err)
	}
}

// copyPlugin copies the working tree (without .git and bin/) to a fresh directory, as a
// marketplace install or a fresh clone would have it: no prebuilt binaries.
func copyPlugin(t testing.TB, only ...string) string {
	t.Helper()
	src := repoRoot(t)
	dst := filepath.Join(t.TempDir(), "cairn")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (rel == ".git" || rel == "bin" || rel == "dist") {
			return filepath.SkipDir
		}
		if len(only) > 0 && !d.IsDir() && !contains(only, filepath.ToSlash(rel)) {
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil // symlinks, sockets: a plugin has none worth copying
	})
	if err != nil {
		t.Fatalf("copying the plugin: %v", err)
	}
	return dst
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// launchFailCode is the exit of the launcher called name when it cannot install the binaries:
// 0 for the hooks (the session goes on; any other exit shows "hook failed"), 1 for the MCP
// server and the CLI, which ran nothing: the server exits 1 for another machine's binaries too.
func launchFailCode(name string) int {
	switch name {
	case "cairn-session-start", "cairn-stop", "cairn-event":
		return 0
	}
	return 1
}

func skipOnWindows(t testing.TB) {
	if runtime.GOOS == "windows" {
		t.Skip("hooks/launch is a POSIX sh script; on Windows Claude Code runs hooks through Git Bash, not tested here")
	}
}

// Without Go and without binaries, every binary gets one line saying what to install, the
// hooks also a systemMessage, and the session goes on (exit 0). The MCP server and the CLI,
// which ran nothing, exit 1: a shell's "cairn status && ..." went on as if it had worked.
func TestLaunchWithoutGo(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	env := launchEnv(root, data, home, toolDir(t))
	for _, name := range []string{"cairn-session-start", "cairn-stop", "cairn-event", "cairn-mcp", "cairn"} {
		t.Run(name, func(t *testing.T) {
			res := runLaunch(t, root, env, `{"session_id":"s","source":"startup"}`, name)
			if want := launchFailCode(name); res.code != want {
				t.Fatalf("exit %d, want %d\nstderr: %s", res.code, want, res.stderr)
			}
			if lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "install Go") || !strings.Contains(lines[0], "downloading") {
				t.Errorf("stderr = %q, want one line saying the download failed and to install Go", res.stderr)
			}
			if name == "cairn-event" {
				// It serves PreCompact, whose stdout Claude Code adds as it is to the
				// compaction request: the line as text, not a JSON object.
				if strings.Count(res.stdout, "\n") != 1 || !strings.HasPrefix(res.stdout, "Cairn: ") || strings.Contains(res.stdout, "{") || !strings.Contains(res.stdout, "install Go") {
					t.Errorf("stdout = %q, want one line of text saying to install Go", res.stdout)
				}
				return
			}
			hookBin := name == "cairn-session-start" || name == "cairn-stop"
			if !hookBin {
				if res.stdout != "" {
					t.Errorf("stdout = %q, want nothing (stdout is protocol)", res.stdout)
				}
				return
			}
			var out map[string]any
			if strings.Count(res.stdout, "\n") != 1 || json.Unmarshal([]byte(res.stdout), &out) != nil {
				t.Fatalf("stdout = %q, want one JSON line", res.stdout)
			}
			msg, _ := out["systemMessage"].(string)
			if len(out) != 1 || !strings.Contains(msg, "install Go") || !strings.Contains(msg, "https://go.dev/dl/") {
				t.Errorf("stdout = %s, want only a systemMessage saying to install Go and where", res.stdout)
			}
		})
	}
	// The line names the URL it tried: a quote or backslash there still makes valid JSON.
	t.Run("odd-url", func(t *testing.T) {
		env := append(slices.Clone(env), `CAIRN_DOWNLOAD_URL=http://127.0.0.1:1/a"b\c`, "CLAUDE_PLUGIN_DATA="+t.TempDir())
		res := runLaunch(t, root, env, `{"session_id":"s"}`, "cairn-session-start")
		var out map[string]string
		if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || !strings.Contains(out["systemMessage"], `1/a"b\c/v`) {
			t.Errorf("stdout = %q (%v), want a systemMessage naming the URL", res.stdout, err)
		}
	})
	// A newline or tab there (a path or URL may hold any byte) is escaped too: a JSON string
	// holds no raw control character, and the answer stays one line.
	t.Run("control-characters", func(t *testing.T) {
		url := "http://127.0.0.1:1/a\tb\nc\x01d"
		env := append(slices.Clone(env), "CAIRN_DOWNLOAD_URL="+url, "CLAUDE_PLUGIN_DATA="+t.TempDir())
		res := runShell(t, hookCommand(t, "SessionStart"), env, home, `{"session_id":"s"}`)
		var out map[string]string
		if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || strings.Count(res.stdout, "\n") != 1 || !strings.Contains(out["systemMessage"], "1/a\tb\nc d/v") {
			t.Errorf("stdout = %q (%v), want one JSON line whose systemMessage names the URL", res.stdout, err)
		}
	})
	t.Run("unknown-binary", func(t *testing.T) {
		res := runLaunch(t, root, env, "", "rm")
		if res.code == 0 || !strings.Contains(res.stderr, "unknown binary") || res.stdout != "" {
			t.Fatalf("launch rm = %+v, want a refusal", res)
		}
	})
	if _, err := os.Stat(data); err == nil {
		entries, _ := os.ReadDir(data)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".install-lock") {
				t.Errorf("a build lock %s was left behind without Go", e.Name())
			}
		}
	}
}

// With Go, a fresh copy of the plugin and no release to download: a hook's first start only
// kicks off a background build and says so; the MCP server's start waits for that build (under the lock: two
// concurrent starts build once) and execs the result; later starts exec the binaries
// directly, with no Go at all. Slow (it builds four binaries), so it is the one such test.
func TestLaunchBuildsOnceAndExecs(t *testing.T) {
	skipOnWindows(t)
	goBin, goSettings := realGo(t, "go is not on PATH: the build-once path cannot run")
	root := copyPlugin(t)
	home := t.TempDir()
	data := filepath.Join(home, "plugin-data")
	if err := os.MkdirAll(data, 0o755); err != nil { // Claude Code creates it before hooks run
		t.Fatal(err)
	}
	// A go on PATH that records each build, then runs the real one.
	shims := t.TempDir()
	calls := filepath.Join(home, "go-calls")
	shim := "#!/bin/sh\necho \"$*\" >>" + calls + "\nexec " + goBin + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shims, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := toolDir(t)
	// The real PATH after the shim: the build needs what the cache was filled with (a C
	// compiler for cgo, say). Later starts get the tools alone: no Go at all.
	env := launchEnv(root, data, home, shims+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The shared caches and settings: otherwise the build downloads or recompiles the world.
		goSettings...)

	// 0. A bin dir left half-made by an older install must be replaced, not nested into.
	version := pluginVersion(t)
	bindir := filepath.Join(data, "bin-"+version)
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bindir, "stale"), []byte("left over"), 0o644); err != nil {
		t.Fatal(err)
	}

	// 1. A hook never waits: it starts the build in the background and says so.
	res := runLaunch(t, root, env, `{"session_id":"s1","source":"startup"}`, "cairn-session-start")
	if res.code != 0 || !strings.Contains(res.stdout, `downloading http://127.0.0.1:1/releases/v`) || !strings.Contains(res.stdout, "building them with Go in the background") {
		t.Fatalf("first hook start = %+v, want exit 0 and a systemMessage about the build", res)
	}

	// 2. Two MCP starts at once: both wait for the one build and exec the server.
	results := atOnce(2, func(int) launchResult { return runLaunch(t, root, env, initializeLine, "cairn-mcp") })
	log, _ := os.ReadFile(filepath.Join(data, "build-"+pluginVersion(t)+".log"))
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("MCP start %d: exit %d\nstderr: %s\nbuild log: %s", i, r.code, r.stderr, log)
		}
		if !strings.Contains(r.stdout, `"id":1`) || !strings.Contains(r.stdout, `"result"`) {
			t.Errorf("MCP start %d answered %q, want the server's initialize result", i, r.stdout)
		}
	}
	for name := range binarySources {
		if fi, err := os.Stat(filepath.Join(bindir, name)); err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s was not built into %s: %v", name, bindir, err)
		}
	}
	// A build names the plugin it was built from (checkouts share a data dir), and has the
	// launcher compare it: no .self-check.
	if names := dirNames(t, bindir); len(names) != len(binarySources)+2 || !slices.Contains(names, ".checksums") || !slices.Contains(names, ".built-from") {
		t.Errorf("%s holds %v, want exactly the %d binaries, .checksums and .built-from", bindir, names, len(binarySources))
	}
	builds := 0
	callLog, _ := os.ReadFile(calls)
	for _, line := range strings.Split(string(callLog), "\n") {
		if strings.HasPrefix(line, "build ") {
			builds++
		}
	}
	if builds != len(binarySources) {
		t.Errorf("go build ran %d times, want %d (each binary once, under the lock):\n%s", builds, len(binarySources), callLog)
	}
	// The builder releases its lock just after moving the binaries in place, which the
	// waiting MCP start may see first: give it a moment.
	var locks []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if locks, _ = filepath.Glob(filepath.Join(data, ".install-lock-*")); len(locks) == 0 {
			break
		}
	}
	if len(locks) != 0 {
		t.Errorf("build lock left behind: %v", locks)
	}

	// 3. Later starts exec the built binaries directly, without Go.
	noGo := launchEnv(root, data, home, tools)
	res = runLaunch(t, root, noGo, `{"session_id":"s2","source":"clear","hook_event_name":"SessionStart"}`, "cairn-session-start")
	if res.code != 0 || strings.Contains(res.stdout, "building") || strings.Contains(res.stderr, "install Go") {
		t.Fatalf("hook start after the build = %+v, want the built hook to run", res)
	}
	res = runLaunch(t, root, noGo, `{"session_id":"s2","hook_event_name":"Stop","stop_hook_active":false}`, "cairn-stop")
	if res.code != 0 || strings.Contains(res.stdout, "building") {
		t.Fatalf("stop after the build = %+v, want the built hook to run", res)
	}
	if n, _ := os.ReadFile(calls); len(n) != len(callLog) {
		t.Errorf("go ran again after the build:\n%s", n)
	}
}

func pluginVersion(t testing.TB) string {
	var m pluginManifest
	readJSON(t, ".claude-plugin/plugin.json", &m)
	return m.Version
}

// The hooks run with GOMAXPROCS=1 whatever the caller's environment says; the MCP server and
// the CLI keep the caller's value.
func TestLaunchGivesHooksOneProc(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	stamp(t, root, filepath.Join(root, "bin"))
	// The whole set: the launcher runs cairn from no other (see cairn_whole).
	for _, name := range []string{"cairn-session-start", "cairn-stop", "cairn-event", "cairn-mcp", "cairn"} {
		script := "#!/bin/sh\necho \"GOMAXPROCS=${GOMAXPROCS-unset}\"\n"
		if err := os.WriteFile(filepath.Join(root, "bin", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	for _, caller := range []string{"", "4"} {
		extra := []string{}
		want := map[string]string{"cairn-session-start": "1", "cairn-stop": "1", "cairn-mcp": "unset", "cairn": "unset"}
		if caller != "" {
			extra = append(extra, "GOMAXPROCS="+caller)
			want["cairn-mcp"], want["cairn"] = caller, caller
		}
		env := launchEnv(root, filepath.Join(home, "data"), home, toolDir(t), extra...)
		for name, w := range want {
			res := runLaunch(t, root, env, "{}", name)
			if got := strings.TrimSpace(res.stdout); res.code != 0 || got != "GOMAXPROCS="+w {
				t.Errorf("caller GOMAXPROCS=%q: %s ran with %q (exit %d, stderr %q), want GOMAXPROCS=%s", caller, name, got, res.code, res.stderr, w)
			}
		}
	}
}

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// stamp marks the binaries in dir as made from the plugin at root, as make build and
// hooks/install do: a copy of its release/checksums.txt.
func stamp(t *testing.T, root, dir string) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(root, "release", "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".checksums"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A data directory that cannot be made (here: under a regular file, or a file or a link to
// nothing in its place) is said at once, for what it is: not after waiting for a lock no one
// holds, as if another start were installing, and with no Go build that could not land. The
// step was to make it writable, which cannot help: the file in the way is named, and left as
// it is, and no step tells anyone to move it.
func TestLaunchUnwritableData(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	for _, tc := range []struct {
		name string
		make func(home string) (data, blocker string)
	}{
		{"under a file", func(home string) (string, string) {
			writeFile(t, filepath.Join(home, "file"), "not a directory\n")
			return filepath.Join(home, "file", "data"), filepath.Join(home, "file")
		}},
		{"a file", func(home string) (string, string) {
			writeFile(t, filepath.Join(home, "data"), "the user's\n")
			return filepath.Join(home, "data"), filepath.Join(home, "data")
		}},
		{"a link to nothing", func(home string) (string, string) {
			if err := os.Symlink(filepath.Join(home, "gone"), filepath.Join(home, "data")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(home, "data", "cairn"), filepath.Join(home, "data")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			data, blocker := tc.make(home)
			tools := toolDir(t)
			calls := goThatFails(t, tools, home)
			env := launchEnv(root, data, home, tools)
			rounds := lockWaitRounds(t, env)
			want := blocker + " is not a directory, so the data directory " + data + " cannot be made; Cairn leaves " + blocker + " as it is (it may be the user's): once a directory can be made there, start a new session."
			// The file is not Cairn's: no step tells the model reading the line to move it.
			for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
				res := launchAs(t, root, env, home, name)
				lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
				if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], want) || strings.Contains(lines[0], "move") {
					t.Errorf("%s = %+v, want exit %d and one line saying %q", name, res, launchFailCode(name), want)
				}
				if n := rounds(); n != 0 {
					t.Errorf("%s waited %d rounds, want no wait for a lock that cannot exist", name, n)
				}
				if name == "cairn-session-start" {
					var out map[string]string
					if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || !strings.Contains(out["systemMessage"], want) {
						t.Errorf("%s stdout = %q (%v), want a systemMessage saying so", name, res.stdout, err)
					}
				}
			}
			if b, err := os.ReadFile(calls); err == nil {
				t.Errorf("go ran for a data dir it cannot write to:\n%s", b)
			}
		})
	}
}

// A relative CLAUDE_PLUGIN_DATA (not what Claude Code gives, but what a user may type) is
// taken from the working directory, as the launcher looks for binaries there: the Go build,
// run from the plugin root, writes them there too, rather than beside the plugin's sources
// where the copy into place cannot find them.
func TestLaunchBuildsIntoRelativeData(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	work := t.TempDir()
	tools := toolDir(t)
	// A go that "builds" a script naming the package, wherever -o says (relative paths
	// from its working directory, as the real one).
	fakeGo(t, tools, `printf '#!/bin/sh\necho built %s\n' "$pkg" >"$out" && chmod +x "$out"`+"\n")
	env := launchEnv(root, "data", t.TempDir(), tools)
	res := runProcess(t, time.Minute, "hooks/launch cairn-mcp", env, work, "", filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	if res.code != 0 || strings.TrimSpace(res.stdout) != "built ./mcpserver" {
		log, _ := os.ReadFile(filepath.Join(work, "data", "build-"+pluginVersion(t)+".log"))
		t.Fatalf("cairn-mcp = %+v, want the built server run\nbuild log: %s", res, log)
	}
	if _, err := os.Stat(filepath.Join(work, "data", "bin-"+pluginVersion(t), ".checksums")); err != nil {
		t.Errorf("the build is not in the working directory's data/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "data")); err == nil {
		t.Error("the build left files under the plugin root")
	}
}

// XDG_CACHE_HOME, where the launcher keeps binaries when CLAUDE_PLUGIN_DATA is unset, is
// ignored when relative, as the XDG Base Directory spec says: it named a directory under
// whatever the working directory was, another for each project. ~/.cache is used instead.
func TestLaunchIgnoresARelativeXDGCacheHome(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	home, work := t.TempDir(), t.TempDir()
	cached := filepath.Join(home, ".cache", "cairn", "bin-"+pluginVersion(t))
	relative := filepath.Join(work, "cache", "cairn", "bin-"+pluginVersion(t))
	for _, dir := range []string{cached, relative} {
		fakeBinaries(t, dir)
		stamp(t, root, dir)
	}
	var env []string
	for _, kv := range launchEnv(root, "", home, "/nonexistent", "XDG_CACHE_HOME=cache") {
		if !strings.HasPrefix(kv, "CLAUDE_PLUGIN_DATA=") {
			env = append(env, kv)
		}
	}
	res := runProcess(t, time.Minute, "cairn-mcp", env, work, "", filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	if want := "ran " + filepath.Join(cached, "cairn-mcp"); res.code != 0 || strings.TrimSpace(res.stdout) != want {
		t.Errorf("cairn-mcp with XDG_CACHE_HOME=cache = %+v, want %q", res, want)
	}
}

// Outside Claude Code (no CLAUDE_PLUGIN_DATA) with HOME unset, as under env -i or a service,
// the launcher took "$HOME/.cache" as /.cache and installed the binaries under the root
// directory (or, where / is not writable, told the person to make /.cache/cairn writable); a
// relative HOME named a directory under wherever it ran. Neither is where cairn uninstall and
// cairn doctor look (project.CacheDir has no directory then). One line says why nothing is
// installed and what to set; nothing is downloaded or made.
func TestLaunchWithoutAHomeDirectory(t *testing.T) {
	skipOnWindows(t)
	for _, home := range []string{"", "home"} {
		t.Run("HOME="+home, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			var env []string
			for _, kv := range launchEnv(root, "", home, toolDir(t)) {
				if !strings.HasPrefix(kv, "CLAUDE_PLUGIN_DATA=") && (home != "" || !strings.HasPrefix(kv, "HOME=")) {
					env = append(env, kv)
				}
			}
			res := runProcess(t, time.Minute, "cairn version", env, work, "", filepath.Join(root, "hooks", "launch"), "cairn", "version")
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			if res.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "HOME is not an absolute path") || !strings.HasSuffix(lines[0], "set HOME, then run it again.") {
				t.Errorf("cairn version without HOME = %+v, want exit 1 and one line saying to set HOME", res)
			}
			if ents, _ := os.ReadDir(work); len(ents) != 0 {
				t.Errorf("the launcher made %s in the working directory", ents[0].Name())
			}
		})
	}
}

// The Go build a hook starts in the background gets the machine's processors: the GOMAXPROCS=1
// the launcher gives the hooks themselves would make go build compile one package at a time,
// minutes longer on a first start.
func TestLaunchHookBuildUsesAllProcs(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	work := t.TempDir()
	tools := toolDir(t)
	seen := filepath.Join(work, "gomaxprocs")
	writeFile(t, filepath.Join(tools, "go"), "#!/bin/sh\nif [ \"$1\" = build ]; then echo \"${GOMAXPROCS-unset}\" >>"+seen+"; fi\nexit 1\n")
	if err := os.Chmod(filepath.Join(tools, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := launchEnv(root, filepath.Join(work, "data"), work, tools)
	res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
	if res.code != 0 || !strings.Contains(res.stdout, "building them with Go in the background") {
		t.Fatalf("SessionStart = %+v, want the background build started", res)
	}
	// The background build is waited for (a minute only bounds a hang): a build a loaded
	// machine had not started within a few seconds was no build, and the test passed on it.
	var got []byte
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if got, _ = os.ReadFile(seen); len(got) > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the background build never ran go build")
		}
	}
	for l := range strings.Lines(string(got)) {
		if l != "unset\n" {
			t.Errorf("go ran with GOMAXPROCS=%q, want it unset", got)
		}
	}
}

// A Go build that fails (a Go older than go.mod needs, with GOTOOLCHAIN=local; no module
// cache and no network) had every later session say again that the binaries were being built
// "(first use only)" and would work once done, which they never did. A start after a failed
// build says it failed and where its log is, and tries again.
func TestLaunchHookSaysTheLastBuildFailed(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	tools := toolDir(t)
	fakeGo(t, tools, `echo "go: go.mod requires go >= 1.26.0 (running go 1.25.0; GOTOOLCHAIN=local)" >&2; exit 1`+"\n")
	env := launchEnv(root, data, work, tools)
	log := filepath.Join(data, "build-"+pluginVersion(t)+".log")
	for i, want := range []string{"building them with Go in the background", "building them with Go failed: see " + log} {
		res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
		var out map[string]string
		if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 || !strings.Contains(out["systemMessage"], want) {
			t.Fatalf("SessionStart %d = %+v, want exit 0 and a systemMessage saying %q", i+1, res, want)
		}
		if i == 1 && strings.Contains(out["systemMessage"], "first use only") {
			t.Errorf("SessionStart after a failed build says %q", out["systemMessage"])
		}
		// The background build is done when go has failed and its lock is gone.
		lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
		done := false
		for end := time.Now().Add(time.Minute); !done && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			b, _ := os.ReadFile(log)
			_, err := os.Stat(lock)
			done = strings.Contains(string(b), "go.mod requires go >= 1.26.0") && os.IsNotExist(err)
		}
		if !done {
			b, _ := os.ReadFile(log)
			t.Fatalf("background build %d not done in a minute; its log holds %q", i+1, b)
		}
	}
}

// A Go build that makes binaries this machine cannot run (another processor's here, as with
// GOOS or GOARCH set by go env -w for cross-compiling) had its exec, the MCP server's and the CLI's after
// they waited for the build, caught by nothing: dash exited 126 and bash went on to exit 1,
// neither with a line of Cairn's. The start says the set cannot run, in one line, as for a
// downloaded set, and exits 1.
func TestLaunchBuiltBinariesForAnotherProcessor(t *testing.T) {
	skipOnWindows(t)
	for _, sh := range []string{"/bin/sh", "bash"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			tools, sh := toolDirWithShell(t, sh)
			foreign := filepath.Join(work, "foreign")
			if err := os.WriteFile(foreign, foreignELF(), 0o755); err != nil {
				t.Fatal(err)
			}
			// A go whose every build is foreign, written where -o says.
			fakeGo(t, tools, "cp "+foreign+` "$out"`+"\n")
			set := filepath.Join(work, "data", "bin-"+pluginVersion(t))
			env := launchEnv(root, filepath.Join(work, "data"), work, tools)
			res := runProcess(t, time.Minute, "cairn-mcp", env, work, initializeLine, sh, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
			var cairn []string
			for _, l := range strings.Split(res.stderr, "\n") {
				if strings.HasPrefix(l, "cairn") {
					cairn = append(cairn, l)
				}
			}
			if res.code != 1 || len(cairn) != 1 || !strings.HasPrefix(cairn[0], "cairn: "+set+"/cairn-mcp cannot run on this machine") {
				t.Errorf("cairn-mcp over a build it cannot run = %+v, want exit 1 and one line of Cairn's saying the set cannot run", res)
			}
			if !strings.Contains(cairn[len(cairn)-1], "install a Go made for this machine (https://go.dev/dl/), then start a new session") {
				t.Errorf("cairn-mcp over a build it cannot run said %q, want the step: a Go made for this machine", cairn[len(cairn)-1])
			}
			// The record later starts read says what was built, not "the release's binaries".
			rec, _ := os.ReadFile(filepath.Join(work, "data", ".download-failed-"+pluginVersion(t)))
			if want := "the binaries Go built in " + set + " cannot run on this machine"; !strings.HasPrefix(string(rec), want) {
				t.Errorf("the failure record says %q, want %q...", rec, want)
			}
		})
	}
}

// GOOS and GOARCH (a user cross-compiling) are for the user's builds, and so are the CPU levels
// (GOAMD64, GOARM64, ...): a set built for a level above this machine's processor exits 1 at
// the first instruction it lacks, which no trap can tell from a binary's own failure. The
// launcher's build is of binaries for this machine, which it runs, whether the setting is in
// the environment Claude Code was started from or in the user's go env file (go env -w), which
// go reads for a variable the environment leaves unset or empty: unsetting them let
// "go env -w GOOS=windows" build a set no start here could run.
func TestLaunchBuildIgnoresGOOSAndGOARCH(t *testing.T) {
	skipOnWindows(t)
	level, high := hostLevel(t)
	for _, c := range []struct {
		where  string
		target []string
	}{
		{"environment", []string{"GOOS=windows", "GOARCH=arm64"}},
		{"environment", []string{"GOAMD64=v4"}}, {"environment", []string{"GOARM64=v9.5"}},
		{"environment", []string{"GOARM=7"}}, {"environment", []string{"GO386=sse2"}},
		{"environment", []string{"GOPPC64=power10"}}, {"environment", []string{"GORISCV64=rva23u64"}},
		{"environment", []string{"GOMIPS=softfloat"}}, {"environment", []string{"GOMIPS64=softfloat"}},
		{"environment", []string{"GOWASM=satconv"}},
		{"go env file", []string{"GOOS=windows"}}, {"go env file", []string{"GOARCH=" + otherArch()}},
		{"go env file", []string{level + "=" + high}},
	} {
		t.Run(c.where+":"+strings.Join(c.target, ","), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			tools := toolDir(t)
			foreign := filepath.Join(work, "foreign")
			if err := os.WriteFile(foreign, foreignELF(), 0o755); err != nil {
				t.Fatal(err)
			}
			// Built for the target go takes (see fakeGo): any other than this machine's is
			// foreign, as is any CPU level the environment names for another processor.
			fakeGo(t, tools, `
for k in GOOS GOARCH `+level+`; do eff $k; case $k:$v in GOOS:`+runtime.GOOS+` | GOARCH:`+runtime.GOARCH+` | `+level+`:`+hostLevelDefault(level)+`) ;; *) exec cp `+foreign+` "$out" ;; esac; done
for k in GOAMD64 GOARM64 GOARM GO386 GOPPC64 GORISCV64 GOMIPS GOMIPS64 GOWASM; do [ $k = `+level+` ] || eval "[ -z \"\${$k-}\" ]" || exec cp `+foreign+` "$out"; done
printf '#!/bin/sh\necho built %s\n' "$pkg" >"$out" && chmod +x "$out"
`)
			extra := c.target
			if c.where == "go env file" {
				goenv := filepath.Join(work, "go-env")
				writeFile(t, goenv, strings.Join(c.target, "\n")+"\n")
				extra = []string{"GOENV=" + goenv}
			}
			env := launchEnv(root, filepath.Join(work, "data"), work, tools, extra...)
			res := runProcess(t, time.Minute, "cairn-mcp", env, work, "", filepath.Join(root, "hooks", "launch"), "cairn-mcp")
			if res.code != 0 || strings.TrimSpace(res.stdout) != "built ./mcpserver" {
				t.Errorf("cairn-mcp with %v in the %s = %+v, want the server built for this machine and run", c.target, c.where, res)
			}
		})
	}
}

// fakeGo writes a go into tools that answers go env as the real one does, and builds by
// running build with out (-o) and pkg (the ./package) set. eff KEY sets v to the value go
// takes for KEY: the environment's, else (unless GOENV=off) the go env file's that GOENV
// names, else this machine's default.
func fakeGo(t *testing.T, tools, build string) {
	t.Helper()
	level, _ := hostLevel(t)
	writeFile(t, filepath.Join(tools, "go"), `#!/bin/sh
eff() {
	eval "v=\${$1-}"
	if [ -z "$v" ] && [ "${GOENV:-off}" != off ] && [ -r "$GOENV" ]; then
		while IFS= read -r l; do case $l in "$1="*) v=${l#*=} ;; esac; done <"$GOENV"
	fi
	case $1:$v in GOOS:) v=`+runtime.GOOS+` ;; GOARCH:) v=`+runtime.GOARCH+` ;; `+level+`:) v=`+hostLevelDefault(level)+` ;; esac
}
if [ "$1" = env ]; then
	shift
	for k; do eff $k; echo "$v"; done
	exit 0
fi
while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift ;; ./*) pkg=$1 ;; esac; shift; done
mkdir -p "$(dirname "$out")" || exit 1
`+build)
	if err := os.Chmod(filepath.Join(tools, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"cp", "chmod", "printf"} {
		if p, err := exec.LookPath(tool); err == nil {
			os.Symlink(p, filepath.Join(tools, tool))
		}
	}
}

// hostLevel is the CPU level variable of this machine's GOARCH and a level above its default.
func hostLevel(t *testing.T) (name, high string) {
	switch runtime.GOARCH {
	case "amd64":
		return "GOAMD64", "v4"
	case "arm64":
		return "GOARM64", "v9.5"
	}
	t.Skipf("no CPU level known for %s", runtime.GOARCH)
	return "", ""
}

func hostLevelDefault(name string) string {
	return map[string]string{"GOAMD64": "v1", "GOARM64": "v8.0"}[name]
}

// otherArch is a GOARCH this machine is not.
func otherArch() string {
	if runtime.GOARCH == "arm64" {
		return "amd64"
	}
	return "arm64"
}

// Two checkouts loaded with --plugin-dir share one data directory (Claude Code's
// ~/.claude/plugins/data/cairn-inline) and so one bin-VERSION. At different commits whose
// release/checksums.txt is the same (not yet regenerated, or sources edited since), each
// stamped its Go build with those checksums, and the other checkout ran it: binaries of other
// sources, for as long as nothing replaced them. A set Go built names the plugin it was built
// from, and runs only for that plugin; a hook of the other checkout does not run it either.
func TestLaunchRunsNoOtherCheckoutsBuild(t *testing.T) {
	skipOnWindows(t)
	tools := toolDir(t)
	// A go that "builds" a script naming the plugin root it was built from.
	fakeGo(t, tools, `printf '#!/bin/sh\necho built from %s\n' "$PWD" >"$out" && chmod +x "$out"`+"\n")
	data := filepath.Join(t.TempDir(), "cairn-inline")
	first, second := copyPlugin(t, launcherFiles...), copyPlugin(t, launcherFiles...)
	last := ""
	for i, root := range []string{first, second, first} {
		env := launchEnv(root, data, t.TempDir(), tools)
		// A hook finds the set the other checkout's start built (its own builds in the
		// background, under the install lock, which the MCP server then waits on).
		if res := launchAs(t, root, env, t.TempDir(), "cairn-stop"); last != "" && strings.Contains(res.stdout, "built from "+last) {
			t.Errorf("start %d: cairn-stop = %+v, ran the build of %s", i+1, res, last)
		}
		res := runProcess(t, time.Minute, "hooks/launch cairn-mcp", env, t.TempDir(), "", filepath.Join(root, "hooks", "launch"), "cairn-mcp")
		if res.code != 0 || strings.TrimSpace(res.stdout) != "built from "+root {
			t.Fatalf("start %d: cairn-mcp = %+v, want the build of %s run", i+1, res, root)
		}
		last = root
	}
}

// One checkout reached by two spellings of its path (a symlink to it, a bind mount) is one
// plugin: a session started through either runs the set Go built for the other. The set named
// its root as spelled, and a start through the other spelling took it for another checkout's
// build and built again, minutes each time; two sessions, one through each, rebuilt in turn
// for as long as they ran.
func TestLaunchOneCheckoutTwoSpellingsBuildsOnce(t *testing.T) {
	skipOnWindows(t)
	tools := toolDir(t)
	builds := filepath.Join(t.TempDir(), "builds")
	fakeGo(t, tools, `echo "$pkg" >>`+builds+`
printf '#!/bin/sh\necho built\n' >"$out" && chmod +x "$out"`+"\n")
	real := copyPlugin(t, launcherFiles...)
	link := filepath.Join(t.TempDir(), "cairn")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "cairn-inline")
	for i, root := range []string{link, real, link} {
		env := launchEnv(root, data, t.TempDir(), tools)
		res := runProcess(t, time.Minute, "hooks/launch cairn-mcp", env, t.TempDir(), "", filepath.Join(root, "hooks", "launch"), "cairn-mcp")
		if res.code != 0 || strings.TrimSpace(res.stdout) != "built" {
			t.Fatalf("start %d through %s: cairn-mcp = %+v, want the build run", i+1, root, res)
		}
	}
	got, _ := os.ReadFile(builds)
	if n := strings.Count(string(got), "\n"); n != len(binarySources) {
		t.Errorf("go built %d binaries for three starts of one checkout, want the %d of one build:\n%s", n, len(binarySources), got)
	}
}

// A plugin.json written on one line with no newline at its end (as json.dump and many editors
// write it) names the plugin's version as any other: the launcher runs that version's set. It
// read no last line without a newline, so took "dev", and installed a set no release has.
func TestLaunchReadsTheVersionFromAPluginJSONWithoutANewline(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name":"cairn","version":"`+pluginVersion(t)+`"}`)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	dir := filepath.Join(data, "bin-"+pluginVersion(t))
	fakeBinaries(t, dir)
	stamp(t, root, dir)
	res := runLaunch(t, root, launchEnv(root, data, work, toolDir(t)), "", "cairn")
	if want := "ran " + filepath.Join(dir, "cairn") + "\n"; res.stdout != want || res.code != 0 {
		t.Errorf("launch cairn = %+v, want %q", res, want)
	}
}

// An install that keeps failing is shown to the user once per session, as the Stop hook's own
// failures are (internal/hook, saidBefore): the Stop hook runs after every turn, and gave the
// same systemMessage after each one. Its stderr line stays (the transcript's record); a new
// session, or another failure, is shown; SessionStart always shows it, and a Stop after it in
// the same session does not repeat it.
func TestLaunchStopSaysAFailedInstallOncePerSession(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	tools := toolDir(t)
	p, err := exec.LookPath("cksum")
	if err != nil {
		t.Skip("cksum is not installed")
	}
	if err := os.Symlink(p, filepath.Join(tools, "cksum")); err != nil {
		t.Fatal(err)
	}
	run := func(session, name string) (shown bool) {
		t.Helper()
		env := launchEnv(root, data, home, tools, "CLAUDE_CODE_SESSION_ID="+session)
		res := runLaunch(t, root, env, `{"session_id":"`+session+`"}`, name)
		if res.code != 0 || strings.Count(res.stderr, "\n") != 1 || !strings.Contains(res.stderr, "install Go") {
			t.Fatalf("%s in session %s = %+v, want exit 0 and the line on stderr", name, session, res)
		}
		return strings.Contains(res.stdout, `"systemMessage":"Cairn: `)
	}
	for i, step := range []struct {
		session, name string
		shown         bool
	}{
		{"s1", "cairn-stop", true},
		{"s1", "cairn-stop", false},
		{"s1", "cairn-stop", false},
		{"s2", "cairn-stop", true},
		{"s3", "cairn-session-start", true},
		{"s3", "cairn-stop", false},
		{"s3", "cairn-session-start", true}, // a resume
	} {
		if got := run(step.session, step.name); got != step.shown {
			t.Errorf("step %d: %s in session %s showed the failure: %v, want %v", i, step.name, step.session, got, step.shown)
		}
	}
	// A mark file grown large (not by Cairn: read a byte per system call, it would take the
	// hook's seconds) is started afresh.
	writeFile(t, filepath.Join(data, ".install-said"), strings.Repeat("x", 4<<20))
	first, other := run("s1", "cairn-stop"), run("s2", "cairn-stop")
	if again := run("s1", "cairn-stop"); !first || !other || again {
		t.Errorf("with a large .install-said, shown in s1 %v, in s2 %v, in s1 again %v: want it shown once in each", first, other, again)
	}
	// Without a session id, each start shows it.
	env := launchEnv(root, data, home, tools)
	for range 2 {
		if res := runLaunch(t, root, env, `{}`, "cairn-stop"); !strings.Contains(res.stdout, "systemMessage") {
			t.Errorf("cairn-stop without a session id = %+v, want the failure shown", res)
		}
	}
}
