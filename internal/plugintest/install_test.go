package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/release"
)

// hookCommand is the hooks.json command for event, as Claude Code gives it to /bin/sh -c.
func hookCommand(t testing.TB, event string) string {
	t.Helper()
	var hf hooksFile
	readJSON(t, "hooks/hooks.json", &hf)
	if len(hf.Hooks[event]) != 1 || len(hf.Hooks[event][0].Hooks) != 1 {
		t.Fatalf("hooks.json has %d %s groups; this test knows one with one hook", len(hf.Hooks[event]), event)
	}
	return hf.Hooks[event][0].Hooks[0].Command
}

// runShell runs /bin/sh -c cmd as Claude Code runs a hook.
func runShell(t testing.TB, cmd string, env []string, dir, stdin string) launchResult {
	t.Helper()
	return runProcess(t, 2*time.Minute, fmt.Sprintf("sh -c %q", cmd), env, dir, stdin, "/bin/sh", "-c", cmd)
}

// fakeBinaries writes a script for each Cairn binary into dir that prints "ran DIR/NAME".
func fakeBinaries(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range binarySources {
		script := "#!/bin/sh\necho ran " + filepath.Join(dir, name) + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// When this plugin's binaries exist, the hooks.json command and the MCP server's launcher
// start nothing but the binary: no fork, no external command (PATH is empty), exactly one
// exec after the shell's own, on both install paths. Where the set is the data dir's, which
// Claude Code does not put on the agent's PATH as it does bin/, SessionStart alone appends one
// line to CLAUDE_ENV_FILE that does (see TestLaunchPutsTheDataSetOnTheAgentsPath).
func TestLaunchForksNothing(t *testing.T) {
	skipOnWindows(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: cannot count the launcher's processes")
	}
	for _, path := range []string{"bin", "data"} {
		t.Run(path, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			data := filepath.Join(t.TempDir(), "data")
			dir := filepath.Join(root, "bin")
			if path == "data" {
				dir = filepath.Join(data, "bin-"+pluginVersion(t))
			}
			fakeBinaries(t, dir)
			stamp(t, root, dir)
			envFile := filepath.Join(t.TempDir(), "sessionstart-hook-0.sh")
			env := launchEnv(root, data, t.TempDir(), "/nonexistent", "CLAUDE_ENV_FILE="+envFile)
			for _, tc := range []struct{ name, argv string }{
				{"cairn-session-start", "/bin/sh -c " + hookCommand(t, "SessionStart")},
				{"cairn-stop", "/bin/sh -c " + hookCommand(t, "Stop")},
				{"cairn-mcp", filepath.Join(root, "hooks", "launch") + " cairn-mcp"},
			} {
				trace := filepath.Join(t.TempDir(), "trace")
				args := []string{"-f", "-qq", "-e", "trace=process", "-o", trace}
				if strings.HasPrefix(tc.argv, "/bin/sh -c ") {
					args = append(args, "/bin/sh", "-c", strings.TrimPrefix(tc.argv, "/bin/sh -c "))
				} else {
					args = append(args, strings.Fields(tc.argv)...)
				}
				cmd := exec.Command(strace, args...)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				if err != nil {
					if strings.Contains(string(out), "ptrace") {
						t.Skipf("strace cannot trace here: %s", out)
					}
					t.Fatalf("%s: %v\n%s", tc.name, err, out)
				}
				if want := "ran " + filepath.Join(dir, tc.name); strings.TrimSpace(string(out)) != want {
					t.Errorf("%s printed %q, want %q", tc.name, out, want)
				}
				log, _ := os.ReadFile(trace)
				forks := regexp.MustCompile(`(?m)\b(clone|clone3|fork|vfork)\(`).FindAll(log, -1)
				execs := regexp.MustCompile(`(?m)\bexecve\(`).FindAll(log, -1)
				if len(forks) != 0 || len(execs) != 2 {
					t.Errorf("%s: %d forks and %d execs, want none and 2 (the shell, then the binary):\n%s", tc.name, len(forks), len(execs), log)
				}
			}
			lines, _ := os.ReadFile(envFile)
			if want := agentPathLine(dir, root); path == "bin" && len(lines) != 0 || path == "data" && string(lines) != want {
				t.Errorf("CLAUDE_ENV_FILE holds %q, want %q", lines, map[string]string{"data": want}[path])
			}
		})
	}
}

// agentPathLine is the line SessionStart appends to CLAUDE_ENV_FILE for a set in dir, and
// the one naming the plugin at root that follows it.
func agentPathLine(dir, root string) string {
	return `case :$PATH: in *:"` + dir + `":*) ;; *) export PATH="` + dir + `:$PATH" ;; esac` + "\n" +
		`export CAIRN_PLUGIN_ROOT="` + root + `"` + "\n"
}

// A marketplace install has no bin/ for Claude Code to put on the agent's PATH: SessionStart
// appends a line to CLAUDE_ENV_FILE (which Claude Code runs ahead of each Bash command, and
// appends to again on each resume) that puts the data dir's set first on PATH, once however
// often it runs; a directory that PATH cannot hold, or that the line would have to escape,
// gets no line, as Claude Code gives such a bin/ none, rather than one that breaks every Bash
// command after it. A second line names the plugin in CAIRN_PLUGIN_ROOT, for that cairn to
// tell whether the set is still this plugin's (the Bash tool has no CLAUDE_PLUGIN_ROOT); a
// plugin directory the line would have to escape gets none.
func TestLaunchPutsTheDataSetOnTheAgentsPath(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct{ name, data string }{
		{"plain", "data"},
		{"plugin with a dollar", "data"},
		{"spaces and quote", "my data's"},
		{"colon", "a:b"},
		{"double quote", `a"b`},
		{"dollar", "a$HOME"},
		{"backquote", "a`b"},
		{"backslash", `a\b`},
		// A relative CLAUDE_PLUGIN_DATA (a user's; Claude Code gives an absolute one) is the
		// working directory's: on PATH as it was, the agent's commands looked for the set under
		// whatever directory they ran in.
		{"relative", "-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			if strings.Contains(tc.name, "dollar") {
				odd := filepath.Join(filepath.Dir(root), "a$HOME")
				if err := os.Rename(root, odd); err != nil {
					t.Fatal(err)
				}
				root = odd
			}
			work := t.TempDir()
			data := filepath.Join(work, tc.data)
			dir := filepath.Join(data, "bin-"+pluginVersion(t))
			fakeBinaries(t, dir)
			// fakeBinaries' scripts hold their path unquoted.
			if err := os.WriteFile(filepath.Join(dir, "cairn-session-start"), []byte("#!/bin/sh\necho ran it\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			stamp(t, root, dir)
			envFile := filepath.Join(work, "sessionstart-hook-0.sh")
			env := launchEnv(root, data, work, toolDir(t), "CLAUDE_ENV_FILE="+envFile)
			if tc.name == "relative" {
				env = append(env, "CLAUDE_PLUGIN_DATA="+tc.data)
			}
			for range 2 { // a start and a resume of the session
				if res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`); !strings.HasPrefix(res.stdout, "ran ") {
					t.Fatalf("SessionStart = %+v, want the data dir's hook run", res)
				}
			}
			lines, _ := os.ReadFile(envFile)
			if strings.ContainsAny(data, `:"$`+"`\\") {
				if len(lines) != 0 {
					t.Errorf("CLAUDE_ENV_FILE holds %q, want nothing for %s", lines, data)
				}
				return
			}
			// As Claude Code runs it ahead of a Bash command, where CLAUDE_PLUGIN_ROOT is not set.
			res := runShell(t, `unset CLAUDE_PLUGIN_ROOT && . "$CLAUDE_ENV_FILE" && echo "$PATH" && command -v cairn && echo "$CAIRN_PLUGIN_ROOT"`, env, work, "")
			want, named := agentPathLine(dir, root), root
			if strings.Contains(root, "$") {
				want, _, _ = strings.Cut(want, "export CAIRN_PLUGIN_ROOT")
				named = ""
			}
			if string(lines) != strings.Repeat(want, 2) || res.code != 0 || !strings.HasPrefix(res.stdout, dir+":") ||
				strings.Count(res.stdout, dir) != 2 || !strings.HasSuffix(res.stdout, "\n"+filepath.Join(dir, "cairn")+"\n"+named+"\n") {
				t.Errorf("CLAUDE_ENV_FILE holds %q; run, it gave %+v, want PATH with %s once, first, its cairn, and CAIRN_PLUGIN_ROOT=%s", lines, res, dir, root)
			}
		})
	}
}

// Binaries made from other sources never run: bin/ after git pull without make build, the
// data dir after a plugin update without a version bump, and binaries of another version.
// Each start goes to the installer instead (here: no release, no Go, so one line saying so).
func TestLaunchNeverRunsOtherBuilds(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		name string
		make func(t *testing.T, root, data string) // puts binaries that must not run
	}{
		{"bin-after-git-pull", func(t *testing.T, root, data string) {
			fakeBinaries(t, filepath.Join(root, "bin"))
			writeFile(t, filepath.Join(root, "bin", ".checksums"), "0000  cairn_"+pluginVersion(t)+"_linux_amd64.tar.gz\n")
		}},
		{"bin-never-stamped", func(t *testing.T, root, data string) {
			fakeBinaries(t, filepath.Join(root, "bin"))
		}},
		{"data-after-update-without-version-bump", func(t *testing.T, root, data string) {
			dir := filepath.Join(data, "bin-"+pluginVersion(t))
			fakeBinaries(t, dir)
			writeFile(t, filepath.Join(dir, ".checksums"), "0000  cairn_"+pluginVersion(t)+"_linux_amd64.tar.gz\n")
		}},
		{"data-of-another-version", func(t *testing.T, root, data string) {
			dir := filepath.Join(data, "bin-0.0.1")
			fakeBinaries(t, dir)
			stamp(t, root, dir)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			home := t.TempDir()
			data := filepath.Join(home, "data")
			tc.make(t, root, data)
			env := launchEnv(root, data, home, toolDir(t))
			res := runShell(t, hookCommand(t, "SessionStart"), env, home, `{"session_id":"s"}`)
			if strings.Contains(res.stdout, "ran ") || res.code != 0 || !strings.Contains(res.stderr, "could not be installed") {
				t.Errorf("SessionStart = %+v, want the stale binary left alone and the installer's line", res)
			}
			res = runLaunch(t, root, env, "", "cairn-mcp")
			if strings.Contains(res.stdout, "ran ") || !strings.Contains(res.stderr, "could not be installed") {
				t.Errorf("cairn-mcp = %+v, want the stale binary left alone and the installer's line", res)
			}
		})
	}
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// launchSite is a test's work dir for starts of the launcher: a project in it (a git
// repository, where Cairn's hooks keep their state) and the plugin's data dir there, not made
// (the launcher makes it).
func launchSite(t *testing.T) (work, project, data string) {
	t.Helper()
	work = t.TempDir()
	project = filepath.Join(work, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return work, project, filepath.Join(work, "data")
}

// hostRelease builds a release of the working tree at root for this machine's platform, once
// (TestMain removes it). make dist's own command builds it, in a process of its own: in this
// one, under -race, packing the archive (gzip at its best compression) took minutes of CPU.
func hostRelease(root string) (string, error) {
	relOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			relErr = err
			return
		}
		if relDir, relErr = os.MkdirTemp("", "cairn-release-"); relErr != nil {
			return
		}
		cmd := exec.Command(goBin, "run", "./internal/release/dist", "-out", relDir, "-platforms", "host")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			relErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	return relDir, relErr
}

var (
	relOnce sync.Once
	relDir  string
	relErr  error
)

// releaseServer serves dir's files as a GitHub release of version at /releases/vVERSION/NAME
// on 127.0.0.1, counting the requests for each name.
type releaseServer struct {
	URL  string
	mu   sync.Mutex
	hits map[string]int
}

func serveRelease(t testing.TB, files map[string][]byte) *releaseServer {
	t.Helper()
	rs := &releaseServer{hits: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	prefix := "/releases/v" + pluginVersion(t) + "/"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		rs.mu.Lock()
		rs.hits[name]++
		rs.mu.Unlock()
		data, found := files[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rs.URL = "http://" + ln.Addr().String() + "/releases"
	return rs
}

func (rs *releaseServer) Hits(name string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.hits[name]
}

// serveArchive answers the requests for archive (a path ending in /archive) with serve and the
// others with 404, on 127.0.0.1 until the test ends, and returns the CAIRN_DOWNLOAD_URL to use.
func serveArchive(t testing.TB, archive string, serve http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/"+archive) {
			http.NotFound(w, r)
			return
		}
		serve(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/releases"
}

// releasedPlugin is a marketplace-style copy of the plugin (no bin/) whose
// release/checksums.txt lists the host release's archive, and that archive's name and bytes.
func releasedPlugin(t testing.TB) (root, archive string, data []byte) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: cannot build the release to serve")
	}
	dir, err := hostRelease(repoRoot(t))
	if err != nil {
		t.Fatalf("building the release: %v", err)
	}
	root = copyPlugin(t)
	version := pluginVersion(t)
	sums, err := os.ReadFile(filepath.Join(dir, release.ChecksumsName(version)))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), string(sums))
	archive = release.ArchiveName(version, release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})
	data, err = os.ReadFile(filepath.Join(dir, archive))
	if err != nil {
		t.Fatal(err)
	}
	return root, archive, data
}

// releasedAndServed is releasedPlugin with its archive served as the release on 127.0.0.1.
func releasedAndServed(t testing.TB) (root, archive string, rs *releaseServer) {
	t.Helper()
	root, archive, data := releasedPlugin(t)
	return root, archive, serveRelease(t, map[string][]byte{archive: data})
}

// Issue 15: with no Go on PATH, a marketplace-style install's first starts (both hooks and two
// MCP servers at once) download the release archive once, check it, install it into the data
// dir and run it; later starts run it with no download.
func TestLaunchDownloadsOnce(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, project, pdata := launchSite(t)
	env := launchEnv(root, pdata, filepath.Join(work, "home"), toolDir(t),
		"CAIRN_DOWNLOAD_URL="+rs.URL,
		"CLAUDE_PROJECT_DIR="+project,
		"CLAUDE_CONFIG_DIR="+filepath.Join(work, "home", ".claude"),
		"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"),
		"CLAUDE_PID="+hooktest.ClaudePID)
	// launch i starts the SessionStart hook (0), the Stop hook (1) or the MCP server (2 on).
	launch := func(i int) launchResult {
		switch i {
		case 0:
			return runShell(t, hookCommand(t, "SessionStart"), env, project, `{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`)
		case 1:
			return runShell(t, hookCommand(t, "Stop"), env, project, `{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`)
		}
		return runShell(t, `exec "$CLAUDE_PLUGIN_ROOT/hooks/launch" cairn-mcp`, env, project, initializeLine)
	}
	took := make([]time.Duration, 4)
	timed := func(i int) launchResult {
		start := time.Now()
		defer func() { took[i] = time.Since(start) }()
		return launch(i)
	}
	results := atOnce(4, timed)
	// A hook's time is bounded by hooks/install's clock, not by the install: on a loaded
	// machine it may give up waiting for another start's install, or install itself with too
	// little time left to run. Either is right only once that clock has run out; the later
	// starts show the hooks run what was installed.
	checkStarts := func(round string) {
		t.Helper()
		for i, want := range []string{"cairn-session-start: source=startup session=s-1", "cairn-stop: session=s-1"} {
			r := results[i]
			if round == "first starts" && r.code == 0 && !strings.Contains(r.stderr, want) {
				if leftOnItsClock(r.stdout, took[i]) ||
					strings.Contains(r.stdout, "installed the binaries for version") && took[i] >= hookInstallWait {
					t.Logf("%s: hook %d gave up after %s: %s", round, i, took[i].Round(time.Millisecond), r.stdout)
					continue
				}
			}
			if r.code != 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "systemMessage") {
				t.Errorf("%s: hook %d = %+v after %s, want the installed hook's own run (%q)", round, i, r, took[i].Round(time.Millisecond), want)
			}
		}
		for _, r := range results[2:] {
			var resp struct {
				Result struct {
					ServerInfo struct{ Version string } `json:"serverInfo"`
				} `json:"result"`
			}
			if r.code != 0 || json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &resp) != nil || resp.Result.ServerInfo.Version != pluginVersion(t) {
				t.Errorf("%s: cairn-mcp = %+v, want the server's initialize answer with version %s and no commit", round, r, pluginVersion(t))
			}
		}
	}
	checkStarts("first starts")
	if n := rs.Hits(archive); n != 1 {
		t.Errorf("the archive was downloaded %d times, want once", n)
	}
	bindir := filepath.Join(pdata, "bin-"+pluginVersion(t))
	names := dirNames(t, bindir)
	if len(names) != len(binarySources)+2 || !slices.Contains(names, ".checksums") || !slices.Contains(names, hook.SelfCheckFile) {
		t.Errorf("%s holds %v, want the %d binaries, .checksums and %s", bindir, names, len(binarySources), hook.SelfCheckFile)
	}
	for _, left := range []string{bindir + ".tmp", filepath.Join(pdata, ".install-lock-"+pluginVersion(t))} {
		if _, err := os.Stat(left); err == nil {
			t.Errorf("the install left %s behind", left)
		}
	}
	results = []launchResult{timed(0), timed(1), timed(2)}
	checkStarts("later starts")
	if n := rs.Hits(archive); n != 1 {
		t.Errorf("later starts downloaded the archive again (%d downloads)", n)
	}
}

// hookInstallWait is how long hooks/install lets a hook wait for another start's install, or
// for its own unpack (until its clock says 6 s are spent): a hook that gives up sooner leaves
// the session without Cairn when the install was about to end.
const hookInstallWait = 6 * time.Second

// leftOnItsClock says whether a hook that took took said it left the install to another start
// or to the background once its clock had run out, as on a loaded machine it may. The clock
// counts whole seconds from after the start: it says 6 after 5.
func leftOnItsClock(stdout string, took time.Duration) bool {
	return (strings.Contains(stdout, "being installed by another start") || strings.Contains(stdout, "being installed in the background")) &&
		took >= hookInstallWait-time.Second
}

// fastClock wraps date in tools (a toolDir) so that the clock a hook counts its time by
// (hooks/install's date +%s) moves on a second at each reading: a hook that waits by its
// clock gives up within about hookInstallWait/time.Second readings, however fast the machine.
func fastClock(t testing.TB, tools string) { stepClock(t, tools, 1) }

// stoppedClock wraps date in tools (a toolDir) so that the clock a hook counts its time by
// never moves: a hook waits for whatever it waits on (another start's install, its own
// unpack) to the end, however slow a loaded machine makes it, for tests of what comes after.
func stoppedClock(t testing.TB, tools string) { stepClock(t, tools, 0) }

// stepClock wraps date in tools so that date +%s moves on step seconds at each reading, and
// returns set, which puts the clock at spent seconds from where it began (for a stopped clock:
// a moving one writes its readings itself, over what set wrote).
func stepClock(t testing.TB, tools string, step int) (set func(spent int)) {
	t.Helper()
	readings := filepath.Join(t.TempDir(), "readings")
	base := time.Now().Unix()
	move := ""
	if step != 0 { // a stopped clock writes nothing: only set moves it
		move = fmt.Sprintf("\techo $((n + %d)) >%s\n", step, readings)
	}
	wrapTool(t, tools, "date", func(real string) string {
		return fmt.Sprintf("if [ \"$*\" = +%%s ]; then\n\tn=$(cat %s 2>/dev/null)\n%s\techo $((%d + ${n:-0}))\n\texit 0\nfi\nexec %s \"$@\"\n",
			readings, move, base, real)
	})
	return func(spent int) {
		t.Helper()
		// Whole or not at all, for a reading in between.
		writeFile(t, readings+".new", fmt.Sprintln(spent))
		if err := os.Rename(readings+".new", readings); err != nil {
			t.Fatal(err)
		}
	}
}

// waitInstalled waits until the install into pdata is done (its set stamped, its lock gone),
// for at most a minute.
func waitInstalled(t testing.TB, pdata string) {
	t.Helper()
	waitUnlocked(t, pdata)
	if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t), ".checksums")); err != nil {
		t.Fatalf("the install into %s let its lock go with no set stamped: %v", pdata, err)
	}
}

// waitUnlocked waits until no start holds the install lock in pdata (an install left to the
// background has ended, whatever became of it), for at most a minute.
func waitUnlocked(t testing.TB, pdata string) {
	t.Helper()
	lock := filepath.Join(pdata, ".install-lock-"+pluginVersion(t))
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(lock); os.IsNotExist(err) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the install into %s still held its lock a minute later", pdata)
		}
	}
}

// A tampered archive (here: one whose hook would leave a mark) is refused with one line and
// nothing from it is unpacked or run. So is the genuine archive for a plugin that is not the
// release: a checkout loaded with --plugin-dir at a later commit lists the sums of its own
// sources. The line said only that the sha256 does not match, which reads like tampering
// there: it names both causes.
func TestLaunchRefusesTamperedArchive(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		name     string
		tampered bool
	}{{"tampered", true}, {"unreleased-commit", false}} {
		t.Run(tc.name, func(t *testing.T) {
			root, archive, data := releasedPlugin(t)
			work, _, pdata := launchSite(t)
			mark := filepath.Join(work, "tampered-code-ran")
			if tc.tampered {
				evil := map[string][]byte{}
				for name := range binarySources {
					evil[name] = []byte("#!/bin/sh\ntouch " + mark + "\n")
				}
				var err error
				if data, err = release.TarGz(evil); err != nil {
					t.Fatal(err)
				}
			} else {
				fakeSums(t, root)
			}
			rs := serveRelease(t, map[string][]byte{archive: data})
			env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
			hookThenServer(t, root, env, work, func(name string, res launchResult, lines []string) {
				if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], "refused the downloaded "+archive+": its sha256 does not match") ||
					!strings.Contains(lines[0], "it was altered, or this plugin is not the v"+pluginVersion(t)+" release, as a checkout at an unreleased commit is") {
					t.Errorf("%s = %+v, want exit %d and one line refusing the archive, naming both causes", name, res, launchFailCode(name))
				}
			})
			if rs.Hits(archive) == 0 {
				t.Fatal("the archive was never requested: the test proves nothing")
			}
			if _, err := os.Stat(mark); err == nil {
				t.Error("code from the tampered archive ran")
			}
			if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t))); err == nil {
				t.Error("the refused archive was installed")
			}
			if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t)+".tmp")); err == nil {
				t.Error("the refused archive was left in the data dir")
			}
		})
	}
}

// BenchmarkFirstStartFromRelease is issue 15's first start with no Go on PATH: the SessionStart
// hook (as Claude Code runs it) and the MCP server start together on a marketplace-style
// install with an empty data dir and the release served from 127.0.0.1; the time is until
// both have answered (the hook its report, the server its initialize). Target: within 10 s
// (first-start-ms); the real client is in internal/e2e (TestInstallFromRelease).
func BenchmarkFirstStartFromRelease(b *testing.B) {
	skipOnWindows(b)
	root, archive, data := releasedPlugin(b)
	rs := serveRelease(b, map[string][]byte{archive: data})
	f := fixture(b)
	env := append(slices.Clone(f.cairnEnv), "PATH="+toolDir(b), "CAIRN_DOWNLOAD_URL="+rs.URL, "CLAUDE_PLUGIN_ROOT="+root)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		pdata := filepath.Join(b.TempDir(), fmt.Sprint("data-", i))
		env := append(slices.Clone(env), "CLAUDE_PLUGIN_DATA="+pdata)
		b.StartTimer()
		start := time.Now()
		r := atOnce(2, func(which int) launchResult {
			if which == 0 {
				return runShell(b, hookCommand(b, "SessionStart"), env, b.TempDir(), startEvent)
			}
			return runShell(b, `exec "$CLAUDE_PLUGIN_ROOT/hooks/launch" cairn-mcp`, env, b.TempDir(), initializeLine)
		})
		times = append(times, time.Since(start))
		hook, mcp := r[0], r[1]
		if !strings.Contains(hook.stdout, "(apex)") || !strings.Contains(mcp.stdout, `"serverInfo"`) {
			b.Fatalf("first start: hook %+v, server %+v: want the report and the initialize answer", hook, mcp)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(median(times).Milliseconds()), "first-start-ms")
	if n := rs.Hits(archive); n != b.N {
		b.Fatalf("%d downloads for %d first starts, want one each", n, b.N)
	}
}

// While another start holds the install (a download in progress, say), a hook waits a few
// seconds at most, then lets the session go on with one line; the other start's lock stays.
func TestLaunchHookDoesNotWaitLongForAnotherInstall(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
	if err := os.MkdirAll(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := toolDir(t)
	fastClock(t, tools)
	env := launchEnv(root, data, home, tools)
	rounds := lockWaitRounds(t, env)
	res := runShell(t, hookCommand(t, "SessionStart"), env, home, `{"session_id":"s"}`)
	var out map[string]string
	if n := rounds(); res.code != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil || !strings.Contains(out["systemMessage"], "being installed by another start") ||
		n > 2*int(hookInstallWait/time.Second) {
		t.Errorf("SessionStart = %+v after %d rounds of waiting on the lock, want exit 0, a systemMessage saying another start is installing, and its wait ended by its clock", res, n)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the other start's lock is gone: %v", err)
	}
}

// A PreCompact hook's stdout is added as it is to the compaction request: while another start
// holds the install, cairn-event's line is read by the model that compacts, and then by the
// model after it. It said "the next session starts with the resume report", which no session
// of theirs does (compaction goes on in the same one); it now names the tool to call after
// the compaction, and nothing of a next session.
func TestLaunchPreCompactDuringAnInstallSaysWhatToCallAfter(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	if err := os.MkdirAll(filepath.Join(data, ".install-lock-"+pluginVersion(t)), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := toolDir(t)
	fastClock(t, tools)
	res := runShell(t, hookCommand(t, "PreCompact"), launchEnv(root, data, home, tools), home,
		`{"session_id":"s","hook_event_name":"PreCompact","trigger":"manual"}`)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "Cairn: ") || !strings.Contains(res.stdout, engine.ToolPrefix+"resume_check") ||
		strings.Contains(res.stdout, "next session") {
		t.Errorf("PreCompact during another start's install = %+v, want exit 0 and a line of text naming resume_check, not a next session", res)
	}
}

// The release installs into a data dir whose path holds a space, quotes, a $, a backslash or
// a newline: the archive's checksum is still matched (sha256sum marks a file name with a
// backslash or newline by a backslash before the sum) and the installed server runs.
func TestLaunchDownloadsIntoOddPaths(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work := t.TempDir()
	for i, name := range []string{`d a\b`, "d\nnl", `d $x 'q"`} {
		pdata := filepath.Join(work, fmt.Sprint(i), name)
		env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
		res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
		if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
			t.Errorf("data dir %q: cairn-mcp = %+v, want the installed server's initialize answer", pdata, res)
		}
		if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t), ".checksums")); err != nil {
			t.Errorf("data dir %q: nothing installed: %v", pdata, err)
		}
	}
	if n := rs.Hits(archive); n != 3 {
		t.Errorf("%d downloads, want one for each data dir", n)
	}
}

// A client that quits while its start is downloading (Claude Code signals the MCP server,
// SIGTERM here) gets the launcher's exit at once, with the install lock released and nothing
// left half-made: not after the download gives up a minute later, by which time the client
// has killed it outright and left a lock that holds every later start off.
func TestLaunchQuitsPromptlyMidDownload(t *testing.T) {
	skipOnWindows(t)
	st := stalledStart(t)
	data, cmd, done := st.data, st.cmd, st.done
	inWait(t, cmd.Process.Pid, done)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second): // half the minute the download would go on for
		cmd.Process.Kill()
		<-done
		t.Fatal("the launcher was still downloading 30 s after SIGTERM")
	}
	version := pluginVersion(t)
	// Nor is the download taken for failed: a start within the minute would not try again.
	for _, left := range []string{filepath.Join(data, ".install-lock-"+version), filepath.Join(data, "bin-"+version+".tmp"), filepath.Join(data, ".download-failed-"+version)} {
		if _, err := os.Stat(left); err == nil {
			t.Errorf("%s was left behind", left)
		}
	}
}

// waitFile waits until path exists (true), for at most 30 s or until ctx ends (false).
func waitFile(ctx context.Context, path string) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// inWait returns once the shell pid, which has started its download, waits for it: asleep,
// as the wait builtin is (the shell runs only builtins between starting curl and its wait,
// and sleeps nowhere else). A SIGTERM before then, while it has not reached the wait, is a
// different case (see hooks/install). Without /proc it waits a while instead.
func inWait(t *testing.T, pid int, done <-chan error) {
	t.Helper()
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	if _, err := os.Stat(stat); err != nil {
		time.Sleep(100 * time.Millisecond)
		return
	}
	durabletest.WaitProcState(t, pid, "", "S", done)
}

// A start killed outright while it holds the install lock (SIGKILL runs no trap) leaves the
// lock behind; the next start sees its holder is gone and installs, rather than waiting on it
// and saying another start is installing, for the ten minutes after which a lock is old.
func TestLaunchBreaksTheLockOfAKilledStart(t *testing.T) {
	skipOnWindows(t)
	st := stalledStart(t)
	data, cmd, env, work := st.data, st.cmd, st.env, st.work
	cmd.Process.Kill()
	<-st.done
	if _, err := os.Stat(filepath.Join(data, ".install-lock-"+pluginVersion(t))); err != nil {
		t.Fatalf("the killed start left no lock, the test proves nothing: %v", err)
	}
	rounds := lockWaitRounds(t, env)
	res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
	if n := rounds(); res.code != 0 || !strings.Contains(res.stderr, "could not be installed (downloading") || n != 0 {
		t.Errorf("SessionStart after a killed install = %+v after %d rounds of waiting on the lock, want its own download tried at once", res, n)
	}
}

// A hook's first start stays inside the 10 s Claude Code gives it (hooks.json) when every step
// takes what it is allowed: waiting for another start's install, then installing itself with a
// slow download, then the hook waiting for an event whose stdin is not closed. The launcher
// counts its steps' time from its start, by its clock (date +%s), and hands the hook what is
// left. The test holds that clock and moves it at each step, so what it checks is what the
// launcher gives each step for the time the clock says is spent, however slow the machine.
func TestLaunchHookKeepsItsDeadlineThroughAnInstall(t *testing.T) {
	skipOnWindows(t)
	root, archive, data := releasedPlugin(t)
	_, project, _ := launchSite(t)
	// Another start, alive (this process), holds the install for held seconds of the hook's
	// clock: then the hook gives its download what is left of 6 s, at most 4. One download
	// takes all of that and comes: the hook installs and runs with what is left of 8 s (its
	// deadline, half of it for stdin). The other never comes: the hook says so and exits.
	for _, tc := range []struct {
		held, download int
		install        bool
		stdinWait      string // the hook's wait for stdin: half of its deadline
	}{{4, 2, false, ""}, {1, 4, true, "1.5s"}} {
		t.Run(fmt.Sprint("held-", tc.held, "s"), func(t *testing.T) {
			hookThroughInstall(t, root, project, tc.held, tc.download, tc.install, tc.stdinWait, archive, data)
		})
	}
}

// hookThroughInstall runs the SessionStart hook while this process holds the install lock for
// held seconds of the hook's clock, and checks that the hook then gives its download the
// download seconds left. The answer comes when those have passed on the hook's clock
// (install), or never: then curl is cut short at once, as its --max-time would cut it.
func hookThroughInstall(t *testing.T, root, project string, held, download int, install bool, stdinWait string, archive string, data []byte) {
	tools := toolDir(t)
	setClock := stepClock(t, tools, 0)
	var given atomic.Int64 // curl's --max-time, in seconds
	url := serveArchive(t, archive, func(w http.ResponseWriter, r *http.Request) {
		secs, err := strconv.Atoi(r.Header.Get("X-Max-Time"))
		if err != nil {
			http.Error(w, "no --max-time", http.StatusBadRequest)
			return
		}
		given.Store(int64(secs))
		if !install {
			<-r.Context().Done()
			return
		}
		setClock(held + secs) // the download took all the time it was given
		w.Write(data)
	})
	// curl as hooks/install runs it, telling the server its --max-time; where no answer comes,
	// cut short at once (a later --max-time wins).
	cut := ""
	if !install {
		cut = " --max-time 0.1"
	}
	wrapTool(t, tools, "curl", func(real string) string {
		return `m= p=
for a; do
	if [ "$p" = --max-time ]; then m=$a; fi
	p=$a
done
exec ` + real + ` -H "X-Max-Time: $m" "$@"` + cut + "\n"
	})
	work, _, pdata := launchSite(t)
	lock := filepath.Join(pdata, ".install-lock-"+pluginVersion(t))
	writeFile(t, filepath.Join(lock, "pid"), fmt.Sprintln(os.Getpid()))
	env := launchEnv(root, pdata, filepath.Join(work, "home"), tools,
		"CAIRN_DOWNLOAD_URL="+url,
		"CLAUDE_PROJECT_DIR="+project, "CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
	rounds := lockWaitRounds(t, env)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinW.Close()
	stdinW.WriteString(`{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`) // and never closed
	cmd := exec.Command("/bin/sh", "-c", hookCommand(t, "SessionStart"))
	cmd.Env, cmd.Dir, cmd.Stdin = env, project, stdinR
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Once the hook waits on the lock, held seconds pass on its clock and the holder lets go.
	var werr error
	waited := false
	for !waited {
		select {
		case werr = <-done:
			t.Fatalf("the hook ended before waiting on the other start's install (exit %v)\nstdout: %s\nstderr: %s", werr, stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond):
			waited = rounds() > 0
		}
	}
	setClock(held)
	os.RemoveAll(lock)
	select {
	case werr = <-done:
	case <-time.After(time.Minute): // a hang, not a slow machine
		cmd.Process.Kill()
		werr = <-done
	}
	var out map[string]any
	if werr != nil || stdout.Len() > 0 && json.Unmarshal([]byte(stdout.String()), &out) != nil {
		t.Errorf("SessionStart exit %v, want 0 and an answer Claude Code reads\nstdout: %s\nstderr: %s", werr, stdout.String(), stderr.String())
	}
	if got := given.Load(); got != int64(download) {
		t.Errorf("after waiting %d s of its clock for the other install, the hook gave its download %d s, want %d", held, got, download)
	}
	ran := strings.Contains(stderr.String(), "cairn-session-start: source=startup")
	if ran != install {
		t.Errorf("the installed hook ran: %t, want %t\nstdout: %s\nstderr: %s", ran, install, stdout.String(), stderr.String())
	}
	if want := "stdin was not closed within " + stdinWait + ";"; install && !strings.Contains(stderr.String(), want) {
		t.Errorf("the hook did not keep to what its clock left it (its stdin wait is not %s)\nstderr: %s", stdinWait, stderr.String())
	}
	// An unpack left to the background goes on in a process of its own, which lets the lock go
	// when it is done: until then it writes into pdata, which the test's cleanup removes.
	waitUnlocked(t, pdata)
}

// Starts that find the same dead lock at once (the next session after a killed install: its
// hooks and MCP server start together) break it once: one of them installs, the others wait
// for it. Here the first to judge the lock dead is slow to remove it (its rm waits, as a
// loaded machine may make it, until the other has judged the lock dead too and been refused
// the break), and the install then holds the lock until that rm is done: the slow one must
// not remove a lock the other took anew meanwhile and install over it.
func TestLaunchBreaksADeadLockOnce(t *testing.T) {
	skipOnWindows(t)
	root, archive, data := releasedPlugin(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	marks := t.TempDir() // the two starts' steps, as files
	var mu sync.Mutex
	downloads := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/"+archive) {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		downloads++
		mu.Unlock()
		if !waitFile(r.Context(), filepath.Join(marks, "removed")) { // the install holds its lock until then
			return
		}
		w.Write(data)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	dead := exec.Command("/bin/sh", "-c", "exit 0")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	work, _, pdata := launchSite(t)
	writeFile(t, filepath.Join(pdata, ".install-lock-"+pluginVersion(t), "pid"), fmt.Sprintln(dead.Process.Pid))
	url := "CAIRN_DOWNLOAD_URL=http://" + ln.Addr().String() + "/releases"
	slow := toolDir(t)
	realRm, err := exec.LookPath("rm")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(slow, "rm"))
	// The slow start's first rm is of the dead lock, under the break lock. It waits (up to
	// 10 s, for a start that is not refused) until the other start, refused the break lock,
	// looks at its age with find.
	writeFile(t, filepath.Join(slow, "rm"), fmt.Sprintf(`#!/bin/sh
: >'%[1]s/removing'
i=0
while [ ! -e '%[1]s/refused' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
%[2]s "$@"
rc=$?
: >'%[1]s/removed'
exit $rc
`, marks, realRm))
	if err := os.Chmod(filepath.Join(slow, "rm"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := toolDir(t)
	realFind, err := exec.LookPath("find")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(other, "find"))
	writeFile(t, filepath.Join(other, "find"), fmt.Sprintf("#!/bin/sh\n: >'%s/refused'\nexec %s \"$@\"\n", marks, realFind))
	if err := os.Chmod(filepath.Join(other, "find"), 0o755); err != nil {
		t.Fatal(err)
	}
	results := atOnce(2, func(i int) launchResult {
		if i == 0 {
			return runLaunch(t, root, launchEnv(root, pdata, work, slow, url), initializeLine, "cairn-mcp")
		}
		waitFile(context.Background(), filepath.Join(marks, "removing")) // the slow one breaks the lock
		return runLaunch(t, root, launchEnv(root, pdata, work, other, url), initializeLine, "cairn-mcp")
	})
	for i, r := range results {
		if r.code != 0 || !strings.Contains(r.stdout, `"serverInfo"`) {
			t.Errorf("start %d = %+v, want the installed server's answer", i, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if downloads != 1 {
		t.Errorf("the archive was downloaded %d times, want once: the dead lock was broken twice", downloads)
	}
}

// A data dir on a file system that runs no programs (mounted noexec, as some hardened homes
// and temporary dirs are) is named as the cause: not "cairn-mcp is missing from what was
// installed" with advice to check the network or install Go, neither of which would help.
// Needs a tmpfs mount: skipped where this test may not mount one.
func TestLaunchNoexecData(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a noexec tmpfs needs root on Linux")
	}
	root, archive, rs := releasedAndServed(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "noexec,size=256m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a noexec tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	work := t.TempDir()
	// The hook waits for its unpack however long a loaded machine takes: this test is of the
	// line a failed install says, not of the hook's clock.
	tools := toolDir(t)
	stoppedClock(t, tools)
	env := launchEnv(root, filepath.Join(mnt, "data"), work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res := launchAs(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], "noexec") || strings.Contains(lines[0], "install Go") {
			t.Errorf("%s = %+v, want exit %d and one line naming the noexec data dir, without Go advice", name, res, launchFailCode(name))
		}
	}
	if rs.Hits(archive) == 0 {
		t.Fatal("the archive was never requested: the test proves nothing")
	}
}

// stalled is a launcher start (hooks/launch cairn-mcp, in a plugin copy of its own) whose
// archive download has been asked for and stalls.
type stalled struct {
	cmd    *exec.Cmd
	done   <-chan error // cmd.Wait's answer
	stderr *strings.Builder
	data   string // CLAUDE_PLUGIN_DATA
	work   string
	env    []string
}

// stalledStart starts the launcher against a download server on 127.0.0.1 whose first answer
// stalls (for a minute, or until the client goes) and whose later ones are "not found", and
// returns once the launcher has asked for the archive.
// stalledStart's launcher runs as wrap's last argument (noStartTimes), when wrap is given.
func stalledStart(t *testing.T, wrap ...string) stalled {
	t.Helper()
	return stalledStartWith(t, toolDir(t), wrap...)
}

// stalledStartWith is stalledStart with tools (a toolDir, some of whose tools a test wrapped)
// on the launcher's PATH.
func stalledStartWith(t *testing.T, tools string, wrap ...string) stalled {
	t.Helper()
	root := copyPlugin(t, launcherFiles...)
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), fmt.Sprintf("%064d  %s\n", 0,
		release.ArchiveName(pluginVersion(t), release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})))
	asked := make(chan struct{})
	var once sync.Once
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true; close(asked) })
		if !first {
			http.NotFound(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	st := stalled{work: t.TempDir(), stderr: new(strings.Builder)}
	st.data = filepath.Join(st.work, "data")
	st.env = launchEnv(root, st.data, st.work, tools, "CAIRN_DOWNLOAD_URL=http://"+ln.Addr().String()+"/releases")
	args := append(wrap, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	st.cmd = exec.Command(args[0], args[1:]...)
	st.cmd.Env, st.cmd.Dir, st.cmd.Stderr = st.env, st.work, st.stderr
	if err := st.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.cmd.Wait() }()
	st.done = done
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the launcher ended before downloading: %v\n%s", err, st.stderr.String())
	case <-time.After(30 * time.Second):
		st.cmd.Process.Kill()
		t.Fatal("the launcher never asked for the archive")
	}
	return st
}

// On a loaded machine the steps after a hook's download (its checksum, gzip -d, the install)
// took seconds (gzip -d alone 4.2 s at load 20) and had no bound: the hook ran past Claude
// Code's 10 s. Here gzip waits until the test lets it go, after the hook (whose clock moves a
// second at each reading, fastClock) has left. The hook leaves inside its deadline, before
// the unpack, with exit 0 and one line saying the binaries are being installed, and no process
// of its left holding its output; the install lands meanwhile; and a start in between finds
// its holder alive, not a dead lock to break and download again.
func TestLaunchHookLeavesASlowUnpackToTheBackground(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, project, pdata := launchSite(t)
	tools := toolDir(t)
	// gzip waits until the test lets it go (a minute at most, so that it ends with the test):
	// the unpack outlasts whatever the hook's clock allows.
	unpack := filepath.Join(t.TempDir(), "unpack")
	wrapTool(t, tools, "gzip", func(real string) string {
		return "n=0\nuntil [ -e " + unpack + " ] || [ $n -ge 6000 ]; do sleep 0.01; n=$((n + 1)); done\nexec " + real + " \"$@\"\n"
	})
	fastClock(t, tools)
	env := launchEnv(root, pdata, filepath.Join(work, "home"), tools, "CAIRN_DOWNLOAD_URL="+rs.URL,
		"CLAUDE_PROJECT_DIR="+project, "CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
	const event = `{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`
	bindir := filepath.Join(pdata, "bin-"+pluginVersion(t))
	lock := filepath.Join(pdata, ".install-lock-"+pluginVersion(t))
	start := time.Now()
	res := runShell(t, hookCommand(t, "SessionStart"), env, project, event)
	took := time.Since(start)
	_, errSet := os.Stat(filepath.Join(bindir, ".checksums"))
	var out map[string]string
	if res.code != 0 || took > 9500*time.Millisecond || errSet == nil || json.Unmarshal([]byte(res.stdout), &out) != nil ||
		!strings.Contains(out["systemMessage"], "being installed in the background") || strings.Count(res.stderr, "\n") != 1 {
		t.Fatalf("SessionStart with an unpack that outlasts its clock took %s (set installed: %t): %+v, want exit 0 inside 9.5 s, before the unpack, and one line saying the install goes on", took, errSet == nil, res)
	}
	start = time.Now()
	res = runShell(t, hookCommand(t, "SessionStart"), env, project, event)
	if took := time.Since(start); res.code != 0 || took > 9500*time.Millisecond {
		t.Errorf("the next SessionStart, during the install, took %s: %+v, want exit 0 inside 9.5 s", took, res)
	}
	writeFile(t, unpack, "")
	waitInstalled(t, pdata)
	if names := dirNames(t, bindir); len(names) != len(binarySources)+2 {
		t.Fatalf("%s holds %v, want the installed set", bindir, names)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Errorf("the install left its lock behind")
	}
	res = runShell(t, hookCommand(t, "SessionStart"), env, project, event)
	if res.code != 0 || !strings.Contains(res.stderr, "cairn-session-start: source=startup") {
		t.Errorf("SessionStart after the install = %+v, want the installed hook's run", res)
	}
	if n := rs.Hits(archive); n != 1 {
		t.Errorf("the archive was downloaded %d times, want once: a start broke the live install's lock", n)
	}
}

// A power loss soon after an install can leave a binary empty (its rename reached the disk,
// its data did not); the shell runs an empty file as an empty script: exit 0, nothing done,
// every session, silently. A zero-length binary is not taken as installed: the start installs
// again (here the MCP server, from the release), or says in one line why it cannot (here a
// hook, with no release to download).
func TestLaunchReinstallsAnEmptyBinary(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	bin := filepath.Join(pdata, "bin-"+pluginVersion(t), "cairn-mcp")
	for round := range 2 {
		res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
		if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
			t.Fatalf("round %d: cairn-mcp = %+v, want the installed server's answer", round, res)
		}
		if err := os.Truncate(bin, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := rs.Hits(archive); n != 2 {
		t.Errorf("the archive was downloaded %d times, want twice (the empty binary installed again)", n)
	}

	hroot := copyPlugin(t, launcherFiles...)
	hdata := filepath.Join(work, "hook-data")
	dir := filepath.Join(hdata, "bin-"+pluginVersion(t))
	fakeBinaries(t, dir)
	stamp(t, hroot, dir)
	writeFile(t, filepath.Join(dir, hook.SelfCheckFile), "")
	if err := os.Truncate(filepath.Join(dir, "cairn-session-start"), 0); err != nil {
		t.Fatal(err)
	}
	res := runShell(t, hookCommand(t, "SessionStart"), launchEnv(hroot, hdata, work, toolDir(t)), work, `{"session_id":"s"}`)
	if res.code != 0 || !strings.Contains(res.stderr, "could not be installed (downloading") {
		t.Errorf("SessionStart with an empty binary = %+v, want exit 0 and the line saying the install failed", res)
	}
}

// An install over a set that is there (made from other sources: a plugin update without a
// version bump) never leaves a binary's path missing: a hook of another session starting in
// that moment would get exit 127. Every rm and mv the install runs here looks, before and
// after, whether the set's hook is there.
func TestLaunchReplacesASetWithoutAGap(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	dir := filepath.Join(pdata, "bin-"+pluginVersion(t))
	fakeBinaries(t, dir)
	writeFile(t, filepath.Join(dir, ".checksums"), "0000  other sources\n")
	tools := toolDir(t)
	watched := filepath.Join(dir, "cairn-session-start")
	gaps := filepath.Join(work, "gaps")
	for _, tool := range []string{"rm", "mv"} {
		look := fmt.Sprintf("[ -e %q ] || echo %q \"$*\" >>%q\n", watched, tool+" found it missing:", gaps)
		wrapTool(t, tools, tool, func(real string) string {
			return look + fmt.Sprintf("%q \"$@\"\nrc=$?\n", real) + look + "exit $rc\n"
		})
	}
	env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer", res)
	}
	if rs.Hits(archive) != 1 {
		t.Fatal("the archive was not downloaded: the test proves nothing")
	}
	if log, err := os.ReadFile(gaps); err == nil {
		t.Errorf("the install left the set's hook missing:\n%s", log)
	}
	if got, err := os.ReadFile(watched); err != nil || strings.HasPrefix(string(got), "#!") {
		t.Errorf("%s is not the release's binary (%v)", watched, err)
	}
	if _, err := os.Stat(dir + ".tmp"); err == nil {
		t.Errorf("the install left %s.tmp behind", dir)
	}
}

// A captive portal (or a proxy's sign-in page) answers the download with its own HTML page.
// It is refused as any other download that is not the archive, but the line says plainly that
// what came was a web page, not the release archive: not that its sha256 does not match,
// which reads like tampering. Other bytes that are not gzip data are said to be that, an
// empty answer (200 with no body) is said to be empty, and gzip data cut short (a body of no
// stated length whose connection closed early) is said to be cut short or damaged.
func TestLaunchSaysACaptivePortalsPageIsNotTheArchive(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	archive := release.ArchiveName(pluginVersion(t), release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})
	whole, err := release.TarGz(map[string][]byte{"cairn": []byte(strings.Repeat("a binary, cut short on the way\n", 1000))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"html", "<!DOCTYPE html>\n<html><body>Sign in to the hotel Wi-Fi</body></html>\n", "was a web page, not the release archive"},
		{"other", "\x00\x01 not an archive", "was not gzip data, so not the release archive"},
		{"empty", "", "was empty, not the release archive"},
		{"cut-short", string(whole[:len(whole)/2]), "was cut short or damaged, not the whole release archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := serveRelease(t, map[string][]byte{archive: []byte(tc.body)})
			work, _, pdata := launchSite(t)
			env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
			hookThenServer(t, root, env, work, func(name string, res launchResult, lines []string) {
				if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || strings.Contains(lines[0], "sha256") {
					t.Errorf("%s = %+v, want exit %d and one line saying %q", name, res, launchFailCode(name), tc.want)
				}
			})
			if rs.Hits(archive) == 0 {
				t.Fatal("the archive was never requested: the test proves nothing")
			}
			if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t))); err == nil {
				t.Error("the page was installed")
			}
		})
	}
}

// A release the server does not have (a version not published yet, a mirror in
// CAIRN_DOWNLOAD_URL without it) was said as any failed download: "check the network", which
// works. The line says what the server answered, and asks for nothing of the network.
func TestLaunchSaysTheServersAnswer(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	for _, tc := range []struct{ downloader, want string }{
		{"curl", "failed: the server answered 404"},
		{"wget", "failed: the server answered with an error"},
	} {
		t.Run(tc.downloader, func(t *testing.T) {
			rs := serveRelease(t, nil)
			work, _, pdata := launchSite(t)
			env := launchEnv(root, pdata, work, toolDirWith(t, tc.downloader), "CAIRN_DOWNLOAD_URL="+rs.URL)
			hookThenServer(t, root, env, work, func(name string, res launchResult, lines []string) {
				if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || strings.Contains(lines[0], "network") {
					t.Errorf("%s = %+v, want exit %d and one line saying %q, not the network", name, res, launchFailCode(name), tc.want)
				}
			})
		})
	}
}

// hookThenServer starts the SessionStart hook as hooks.json runs it, then the MCP server's
// launcher, from work, and calls check with each one's binary name, result and stderr lines.
func hookThenServer(t *testing.T, root string, env []string, work string, check func(name string, res launchResult, lines []string)) {
	t.Helper()
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		var res launchResult
		if name == "cairn-session-start" {
			start := time.Now()
			res = runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
			// A loaded machine may leave the install, its checks too, to the background once
			// the hook's clock has run out: the server's start then says what became of it.
			if took := time.Since(start); res.code == 0 && leftOnItsClock(res.stdout, took) {
				t.Logf("the hook left the install to the background after %s", took.Round(time.Millisecond))
				for _, kv := range env {
					if data, ok := strings.CutPrefix(kv, "CLAUDE_PLUGIN_DATA="); ok {
						waitUnlocked(t, data)
					}
				}
				continue
			}
		} else {
			res = runLaunch(t, root, env, "", name)
		}
		check(name, res, strings.Split(strings.TrimRight(res.stderr, "\n"), "\n"))
	}
}
