package e2e

// Issues 6 and 15's install story in the real client: a fresh copy of the repository's
// committed HEAD (no bin/) is added as a marketplace and Cairn installed from it with `claude
// plugin`, then sessions run WITHOUT --plugin-dir. With a release to download (and no Go), the
// first session's hooks and MCP server install it once and run it at once; without one (and
// with Go), the first session builds the binaries once into the plugin's data directory (the
// hooks say so and let the session go on; the MCP server waits for the build) and the second
// runs the built hooks directly and gets the resume report.

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// installRunTimeout bounds a session of the install test: the first one waits for the build.
const installRunTimeout = 4 * time.Minute

// installedPlugin is one entry of `claude plugin list --json` (Claude Code 2.1.330).
type installedPlugin struct {
	ID          string `json:"id"`
	Version     string `json:"version"`
	Scope       string `json:"scope"`
	Enabled     bool   `json:"enabled"`
	InstallPath string `json:"installPath"`
	// ReadFromFolder is set for a directory marketplace: the client loads the plugin from that
	// folder in place, not from its cache copy at InstallPath.
	ReadFromFolder string `json:"readFromFolder"`
}

// Root is the directory the client loads the plugin from (CLAUDE_PLUGIN_ROOT).
func (p installedPlugin) Root() string {
	if p.ReadFromFolder != "" {
		return p.ReadFromFolder
	}
	return p.InstallPath
}

// Issue 6, "The plugin": installing from a fresh clone works on a machine with Go and no
// prebuilt binaries. The first session is not failed by the missing build (the hooks say so in
// one line), the MCP server's launcher builds once into the plugin's data dir and connects with
// the 15 tools, a tool call lands on disk; the second session runs the built hooks directly and
// its first request carries the resume report. Its CLI commands are the ones a user types.
func TestInstallFromFreshClone(t *testing.T) {
	t.Parallel()
	w := newInstallWorld(t)
	clone := filepath.Join(w.Dir, "clone")
	exportHEAD(t, repoRoot(t), clone)
	if exists(filepath.Join(clone, "bin")) {
		t.Fatalf("the fresh copy %s has a bin/: the test would not show the build", clone)
	}
	inst, manifest := installFrom(t, w, clone)
	if dirs, _ := filepath.Glob(filepath.Join(w.Home, ".claude", "plugins", "data", "*", "bin-*")); len(dirs) != 0 {
		t.Fatalf("binaries %v exist before the first session", dirs)
	}

	var workflowID string
	var built map[string]os.FileInfo
	var dataDir string
	binDir := func() string { return filepath.Join(dataDir, "bin-"+manifest.Version) }

	// First session: nothing built yet.
	ok := t.Run("first-session-builds", func(t *testing.T) {
		w.Mock.Script(
			mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("INSTALLED-PROMPT")),
				mockapi.ToolUse(cairnTool("start_workflow"), map[string]any{"type": "apex", "context": seedContext})).Named("start_workflow"),
			mockapi.On(afterToolResult, mockapi.Text("started")).Named("end of turn"),
		)
		// The MCP server's launcher waits for the build: let the client wait for it too.
		r := w.runInstalled(t, "INSTALLED-PROMPT: start the uploader work",
			"CLAUDE_CODE_MCP_STARTUP_WAIT_MS=180000", "MCP_TIMEOUT=180000")
		requireOK(t, r)
		requireInstalledLoaded(t, r, inst)
		requireScriptUsed(t, w)

		starts := requireHooksOK(t, r, "SessionStart")
		if got := hookNames(starts); strings.Join(got, ",") != "SessionStart:startup" {
			t.Errorf("SessionStart hooks %v", got)
		}
		t.Logf("first SessionStart: stdout %q, stderr %q", starts[0].Stdout, starts[0].Stderr)
		msg := parseHookOutput(t, starts[0]).SystemMessage
		// The hook and the MCP server start together: whichever takes the install lock first
		// builds (the hook in the background), and the hook says which.
		building := strings.HasPrefix(msg, "Cairn: the binaries for version "+manifest.Version+" could not be installed (downloading ") &&
			strings.Contains(msg, "building them with Go in the background")
		waited := msg == "Cairn: the binaries for version "+manifest.Version+" are being installed by another start (first use only): its tools work once that is done, and the next session starts with the resume report."
		// With a warm Go cache the MCP server's build can finish before the hook starts: then
		// the hook simply runs the new binaries, and there is nothing to tell the user.
		ran := msg == "" && strings.HasPrefix(starts[0].Stderr, "cairn-session-start: source=startup")
		if !building && !waited && !ran || strings.Contains(msg, "\n") {
			t.Errorf("the first SessionStart told the user %q, want one line saying the binaries are being built or installed (or the hook itself, already built)", msg)
		}
		if first := r.FirstMain(t); first.Contains("<cairn-state") {
			t.Errorf("the first session's first request carries a resume report, with nothing on record")
		}

		got := initTools(r.Init(t))
		if want := slices.Sorted(slices.Values(cairnTools)); !slices.Equal(got, want) {
			t.Errorf("init lists Cairn tools %v, want %v", got, want)
		}
		if tr := requireToolResultsOK(t, r, 1)[0]; !strings.Contains(tr.Text, `"analyze"`) {
			t.Errorf("start_workflow's result does not name the first phase: %s", tr.Text)
		}
		st := w.readState(t)
		workflowID = st.WorkflowID
		if st.Type != "apex" || st.Context != seedContext || st.State != "analyze" || st.Status != "active" || st.Owner == nil || st.Owner.SessionID != r.SessionID() {
			t.Errorf("workflow-state.json = %+v", st)
		}

		dataDir, built = requireBuiltOnce(t, w, manifest.Version)
		b := goBuilds(t, w)
		if len(b) != len(cairnPlugin.Binaries) {
			t.Errorf("go build ran %d times, want %d (each binary once):\n%s", len(b), len(cairnPlugin.Binaries), strings.Join(b, "\n"))
		}
		for _, call := range b {
			if !strings.Contains(call, " -o "+binDir()+".tmp/") {
				t.Errorf("go %s: want the output in %s.tmp, moved in place when complete", call, binDir())
			}
		}
		requireHooksOK(t, r, "Stop")
		t.Logf("binaries built into %s: %d files", binDir(), len(built))
	})
	if !ok {
		return
	}

	// Second session: the hooks exec the built binaries and the read protocol runs.
	t.Run("second-session-resumes", func(t *testing.T) {
		r := w.runInstalled(t, "NEXT-INSTALLED: where were we?")
		requireOK(t, r)
		requireInstalledLoaded(t, r, inst)
		requireHooksOK(t, r, "Stop")
		starts := requireHooksOK(t, r, "SessionStart")
		t.Logf("second SessionStart: stdout %q, stderr %q", starts[0].Stdout, starts[0].Stderr)
		out := parseHookOutput(t, starts[0])
		if strings.Contains(out.SystemMessage, "building") || strings.Contains(starts[0].Stderr, "building") {
			t.Errorf("the second session still says it is building: %q, stderr %q", out.SystemMessage, starts[0].Stderr)
		}
		if out.Specific == nil || out.Specific.HookEventName != "SessionStart" {
			t.Errorf("SessionStart printed %q, want hookSpecificOutput with hookEventName", starts[0].Stdout)
		}
		report := cairnReport(t, r.FirstMain(t))
		for _, want := range []string{"workflow: " + workflowID + " (apex)", "context: " + seedContext, "phase analyze (in_progress)"} {
			if !strings.Contains(report, want) {
				t.Errorf("the report lacks %q:\n%s", want, report)
			}
		}
		// The launcher writes only to the data dir, never into the plugin it runs from.
		if exists(filepath.Join(inst.Root(), "bin")) {
			t.Errorf("the launcher made %s/bin", inst.Root())
		}
		// Not built again: go not run, the same single bin dir, the same files.
		if b := goBuilds(t, w); len(b) != len(cairnPlugin.Binaries) {
			t.Errorf("go build has run %d times over both sessions, want %d:\n%s", len(b), len(cairnPlugin.Binaries), strings.Join(b, "\n"))
		}
		_, again := requireBuiltOnce(t, w, manifest.Version)
		for name, fi := range built {
			if g := again[name]; g == nil || !os.SameFile(fi, g) || !g.ModTime().Equal(fi.ModTime()) {
				t.Errorf("%s in %s was rebuilt or replaced by the second session", name, binDir())
			}
		}
	})
}

// pluginManifest is what the install tests read of plugin.json.
type pluginManifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// installFrom adds the plugin copy at clone as a marketplace and installs Cairn from it with
// `claude plugin`, as a user would, and checks the install: enabled at user scope, with the
// manifest's version, loaded from a folder with no bin/ and an executable hooks/launch.
func installFrom(t *testing.T, w *World, clone string) (installedPlugin, pluginManifest) {
	t.Helper()
	var manifest pluginManifest
	readJSON(t, filepath.Join(clone, ".claude-plugin", "plugin.json"), &manifest)
	var market struct {
		Name    string `json:"name"`
		Plugins []struct {
			Name string `json:"name"`
		} `json:"plugins"`
	}
	readJSON(t, filepath.Join(clone, ".claude-plugin", "marketplace.json"), &market)
	if manifest.Name != "cairn" || manifest.Version == "" || len(market.Plugins) != 1 || market.Plugins[0].Name != "cairn" {
		t.Fatalf("plugin.json %+v, marketplace.json %+v: want plugin cairn with a version, listed once", manifest, market)
	}
	id := manifest.Name + "@" + market.Name

	// Install as a user would, from the path of the fresh copy.
	out := w.cli(t, "plugin", "marketplace", "add", clone)
	if !strings.Contains(out, "Successfully added marketplace: "+market.Name) {
		t.Errorf("marketplace add said %q", out)
	}
	out = w.cli(t, "plugin", "install", id)
	if !strings.Contains(out, "Successfully installed plugin: "+id) {
		t.Errorf("plugin install said %q", out)
	}
	var list []installedPlugin
	if err := json.Unmarshal([]byte(w.cli(t, "plugin", "list", "--json")), &list); err != nil {
		t.Fatalf("plugin list --json: %v", err)
	}
	i := slices.IndexFunc(list, func(p installedPlugin) bool { return p.ID == id })
	if i < 0 {
		t.Fatalf("plugin list --json has no %s: %+v", id, list)
	}
	inst := list[i]
	if !inst.Enabled || inst.Scope != "user" || inst.Version != manifest.Version {
		t.Errorf("installed %+v, want enabled at user scope, version %s", inst, manifest.Version)
	}
	// The client copies the plugin into its cache, but (2.1.330) loads a directory
	// marketplace's plugin from the folder itself: either way, one with no bin/.
	cache := filepath.Join(w.Home, ".claude", "plugins", "cache") + string(filepath.Separator)
	if !strings.HasPrefix(inst.InstallPath, cache) || (inst.Root() != inst.InstallPath && inst.Root() != clone) {
		t.Fatalf("installed at %s, loaded from %s: want a copy under %s, loaded from it or from %s", inst.InstallPath, inst.Root(), cache, clone)
	}
	for _, dir := range []string{inst.InstallPath, inst.Root()} {
		if exists(filepath.Join(dir, "bin")) {
			t.Fatalf("the installed plugin %s has a bin/", dir)
		}
		if fi, err := os.Stat(filepath.Join(dir, "hooks", "launch")); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s/hooks/launch is not an executable file: %v", dir, err)
		}
	}

	return inst, manifest
}

// requireBuiltOnce checks that the plugin's data directory holds exactly one build, complete,
// with its log and no lock or half-made dir left, and returns that directory and the binaries.
func requireBuiltOnce(t testing.TB, w *World, version string) (string, map[string]os.FileInfo) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(w.Home, ".claude", "plugins", "data", "*", "bin-*"))
	if len(dirs) != 1 || filepath.Base(dirs[0]) != "bin-"+version {
		t.Fatalf("plugin data holds builds %v, want one bin-%s", dirs, version)
	}
	data := filepath.Dir(dirs[0])
	if !exists(filepath.Join(data, "build-"+version+".log")) {
		t.Errorf("no build log build-%s.log in %s", version, data)
	}
	for _, left := range []string{dirs[0] + ".tmp", filepath.Join(data, ".install-lock-"+version)} {
		if exists(left) {
			t.Errorf("the build left %s behind", left)
		}
	}
	bins := map[string]os.FileInfo{}
	for name := range cairnPlugin.Binaries {
		fi, err := os.Stat(filepath.Join(dirs[0], name))
		if err != nil || fi.Mode()&0o111 == 0 || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a built executable in %s: %v", name, dirs[0], err)
			continue
		}
		bins[name] = fi
	}
	if entries, _ := os.ReadDir(dirs[0]); len(entries) != len(cairnPlugin.Binaries)+2 || !exists(filepath.Join(dirs[0], ".checksums")) || !exists(filepath.Join(dirs[0], ".built-from")) {
		t.Errorf("%s holds %d entries, want the %d binaries, .checksums and .built-from (a Go build)", dirs[0], len(entries), len(cairnPlugin.Binaries))
	}
	if t.Failed() {
		t.FailNow()
	}
	return data, bins
}

// requireInstalledLoaded is requirePluginLoaded for the installed plugin: every init event lists
// it from its install path as <id>, with no plugin_errors, and its MCP server connected.
func requireInstalledLoaded(t testing.TB, r *Run, inst installedPlugin) {
	t.Helper()
	inits := r.Inits()
	if len(inits) == 0 {
		t.Fatalf("claude printed no init event; stderr:\n%s", r.Stderr)
	}
	server := "plugin:" + cairnPlugin.Name + ":" + cairnPlugin.Server
	for _, in := range inits {
		if len(in.PluginErrors) > 0 {
			t.Errorf("init lists plugin_errors: %+v", in.PluginErrors)
		}
		if !slices.ContainsFunc(in.Plugins, func(p Plugin) bool {
			return p.Name == cairnPlugin.Name && p.Path == inst.Root() && p.Source == inst.ID
		}) {
			t.Errorf("init's plugins do not include %s from %s: %+v", inst.ID, inst.Root(), in.Plugins)
		}
		i := slices.IndexFunc(in.MCPServers, func(s MCPServer) bool { return s.Name == server })
		if i < 0 || in.MCPServers[i].Status != "connected" {
			t.Errorf("MCP server %s is not connected: %+v", server, in.MCPServers)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// initTools are the Cairn tool names (without the plugin prefix) an init event lists, sorted.
func initTools(in InitEvent) []string {
	var got []string
	for _, name := range in.Tools {
		if rest, ok := strings.CutPrefix(name, cairnPlugin.AllowRule()+"__"); ok {
			got = append(got, rest)
		}
	}
	slices.Sort(got)
	return got
}

// newInstallWorld is newWorld with no --plugin-dir plugin: the plugin is installed with
// `claude plugin install`. Its runs use the caller's Go caches, as a user's own HOME would, and
// never the network.
func newInstallWorld(t *testing.T) *World {
	t.Helper()
	claudeBin(t) // skip before anything else when Node is missing
	w := newBareWorld(t, cairnPlugin)
	dir := w.Dir
	// The isolated HOME would move Go's build and module caches; point at the caller's.
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env printed %q", goenv)
	}
	w.Env = []string{"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOPATH=" + vals[2], "GOPROXY=off",
		// No release is published from here: a download fails at once, on 127.0.0.1.
		"CAIRN_DOWNLOAD_URL=http://127.0.0.1:1/releases"}
	// A go first on PATH that records each call, then runs the real one: the build is counted.
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	shims := filepath.Join(dir, "shims")
	shim := "#!/bin/sh\necho \"$*\" >>'" + w.goCalls() + "'\nexec '" + realGo + "' \"$@\"\n"
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shims, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Env = append(w.Env, "PATH="+shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	return w
}

// goCalls is the file the go shim of an install World appends each call's arguments to.
func (w *World) goCalls() string { return filepath.Join(w.Dir, "go-calls") }

// goBuilds are the go build calls made in an install World so far.
func goBuilds(t testing.TB, w *World) []string {
	t.Helper()
	data, err := os.ReadFile(w.goCalls())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var builds []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "build ") {
			builds = append(builds, line)
		}
	}
	return builds
}

// cli runs `claude ARGS...` (the plugin management commands) in the World and returns its
// stdout; it fails the test unless it exits 0.
func (w *World) cli(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin(t), args...)
	cmd.Dir = w.Project
	cmd.Env = w.env(nil)
	ownGroup(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := runGroup(cmd)
	killGroup(cmd)
	t.Logf("claude %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("claude %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String()
}

// runInstalled runs one -p session in the World's project with the installed plugins only (no
// --plugin-dir), allowing Cairn's MCP tools; extra is more environment.
func (w *World) runInstalled(t *testing.T, prompt string, extra ...string) *Run {
	t.Helper()
	w.runMu.Lock()
	defer w.runMu.Unlock()
	args := []string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--allowedTools", cairnPlugin.AllowRule()}
	ctx, cancel := context.WithTimeout(context.Background(), installRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin(t), args...)
	cmd.Dir = w.Project
	cmd.Env = w.env(extra)
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	seen := len(w.Mock.Requests())
	start := time.Now()
	err := runGroup(cmd)
	killGroup(cmd)
	r := &Run{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	r.Requests = w.Mock.Requests()[seen:]
	for _, line := range strings.Split(r.Stdout, "\n") {
		var e Event
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil {
			e.Raw = json.RawMessage(line)
			r.Events = append(r.Events, e)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("claude %s\nexit %d\nstderr:\n%s\nstdout (tail):\n%s\nmock requests: %v\nunused script steps: %v",
				strings.Join(args, " "), r.ExitCode, r.Stderr, tail(r.Stdout, 8000), w.Mock.Paths(), w.Mock.Unused())
		}
	})
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("claude -p %q: %v (after %v)", prompt, errTimedOut, installRunTimeout)
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("claude -p %q: %v", prompt, err)
	}
	t.Logf("claude -p %q: exit %d in %v, %d events", prompt, r.ExitCode, r.Duration.Round(time.Millisecond), len(r.Events))
	return r
}

// exportHEAD writes the tracked files of root's committed HEAD into dir, as a fresh clone
// would have them (no bin/, nothing ignored or uncommitted).
func exportHEAD(t testing.TB, root, dir string) {
	t.Helper()
	cmd := exec.Command("git", "-C", root, "archive", "--format=tar", "HEAD")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git archive HEAD in %s: %v\n%s", root, err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("reading git archive: %v", err)
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			t.Fatalf("git archive entry %q leaves %s", h.Name, dir)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				err = writeFrom(target, tr, h.FileInfo().Mode().Perm())
			}
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				err = os.Symlink(h.Linkname, target)
			}
		case tar.TypeXGlobalHeader: // git's commit id comment
		default:
			err = fmt.Errorf("unexpected entry type %q", h.Typeflag)
		}
		if err != nil {
			t.Fatalf("extracting %s: %v", h.Name, err)
		}
	}
}

func writeFrom(path string, r io.Reader, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The client stops its MCP server with SIGINT and then SIGTERM (to that process only). When the
// server's launcher holds the build lock at that moment, it must still finish the build and
// release the lock: a lock left behind would make every start in the next ten minutes wait for
// a build that is not running, and fail. A stand-in go (a short sleep, then a script) keeps this
// fast; it needs no Claude Code.
func TestInstallLauncherFinishesBuildWhenStopped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hooks/launch is a POSIX sh script")
	}
	t.Parallel()
	src := repoRoot(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "plugin")
	for _, f := range []string{".claude-plugin/plugin.json", "hooks/launch", "hooks/install", "release/checksums.txt"} {
		if err := copyTree(filepath.Join(src, filepath.FromSlash(f)), filepath.Join(root, filepath.FromSlash(f))); err != nil {
			t.Fatal(err)
		}
	}
	var manifest struct {
		Version string `json:"version"`
	}
	readJSON(t, filepath.Join(root, ".claude-plugin", "plugin.json"), &manifest)
	fakeBin := filepath.Join(dir, "fakego")
	calls := filepath.Join(dir, "go-calls")
	// go build -trimpath -o OUT PKG: writes a script that names itself. go env (the launcher
	// reads this Go's own target) answers nothing, so the build sets no target.
	fakeGo := `#!/bin/sh
[ "$1" = build ] || exit 0
echo "$*" >>'` + calls + `'
out=$4
sleep 0.3
mkdir -p "$(dirname "$out")"
printf '#!/bin/sh\necho "ran %s"\n' "$(basename "$out")" >"$out"
chmod +x "$out"
`
	if err := os.MkdirAll(fakeBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakeBin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	env := []string{"CLAUDE_PLUGIN_ROOT=" + root, "CLAUDE_PLUGIN_DATA=" + data, "HOME=" + dir,
		"PATH=" + fakeBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CAIRN_DOWNLOAD_URL=http://127.0.0.1:1/releases"}
	// In a group of its own, as the harness starts Claude Code: a run stopped part-way, or this
	// test's timeout, ends the launcher with the build it runs (the stand-in go, its sleep).
	launch := func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
		cmd.Env = env
		ownGroup(cmd)
		return cmd
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cmd := launch(ctx)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startGroup(cmd); err != nil {
		t.Fatal(err)
	}
	defer killGroup(cmd)
	// The download fails at once; the build starts under the install lock.
	lock := filepath.Join(data, ".install-lock-"+manifest.Version)
	for !exists(calls) || !exists(lock) {
		if ctx.Err() != nil {
			t.Fatalf("the launcher never started the build under the lock %s", lock)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// As the client does when it quits.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil || strings.Contains(stdout.String(), "ran cairn-mcp") {
		t.Errorf("the stopped launcher exited %v and printed %q: it must not start the server for a client that has gone", err, stdout.String())
	}
	if exists(lock) {
		t.Fatalf("the stopped launcher left the build lock %s (stderr %q)", lock, stderr.String())
	}
	bindir := filepath.Join(data, "bin-"+manifest.Version)
	for name := range cairnPlugin.Binaries {
		if fi, err := os.Stat(filepath.Join(bindir, name)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s was not built into %s: %v", name, bindir, err)
		}
	}
	if exists(bindir + ".tmp") {
		t.Errorf("%s.tmp left behind", bindir)
	}

	// The next start execs the built server at once, building nothing.
	next := launch(ctx)
	var out bytes.Buffer
	next.Stdout = &out
	err = runGroup(next)
	killGroup(next)
	if err != nil || out.String() != "ran cairn-mcp\n" {
		t.Errorf("the next start: %v, printed %q, want the built server to run", err, out.String())
	}
	if n := strings.Count(readFile(t, calls), "\n"); n != len(cairnPlugin.Binaries) {
		t.Errorf("go ran %d times, want %d (each binary once)", n, len(cairnPlugin.Binaries))
	}
}
