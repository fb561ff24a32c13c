package plugintest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/release"
	"github.com/cairn-dev/cairn/internal/store"
)

// fakeSums gives the plugin at root a release/checksums.txt listing this platform's archive
// with a sum nothing matches, for tests whose download must never install.
func fakeSums(t *testing.T, root string) {
	t.Helper()
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), fmt.Sprintf("%064d  %s\n", 0,
		release.ArchiveName(pluginVersion(t), release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})))
}

// toolDirWith is toolDir with curl swapped for the named downloader ("" for none).
func toolDirWith(t *testing.T, downloader string) string {
	t.Helper()
	dir := toolDir(t)
	if err := os.Remove(filepath.Join(dir, "curl")); err != nil {
		t.Fatal(err)
	}
	if downloader != "" {
		p, err := exec.LookPath(downloader)
		if err != nil {
			t.Skipf("%s is not installed", downloader)
		}
		if err := os.Symlink(p, filepath.Join(dir, downloader)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serveSlowly answers every request with 200 and a megabyte's Content-Length, then one byte
// every 300 ms: a network that never stalls long enough for a read timeout to fire.
func serveSlowly(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1048576")
		w.WriteHeader(http.StatusOK)
		for range 400 {
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/releases"
}

// runBounded runs name as runProcess does, but gives up on a child left holding its output
// (a downloader still going) a second after killing it at timeout, and says how long it took.
func runBounded(t *testing.T, timeout time.Duration, env []string, dir, stdin, name string, args ...string) (launchResult, time.Duration) {
	t.Helper()
	c := exec.Command(name, args...)
	c.Env, c.Dir, c.Stdin = env, dir, strings.NewReader(stdin)
	c.WaitDelay = time.Second
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(timeout, func() { c.Process.Kill() })
	defer timer.Stop()
	err := c.Wait()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return launchResult{out.String(), errb.String(), code}, took
}

// shortTimers wraps curl and sleep in tools (a toolDir) so that the time hooks/install gives a
// hook's download (curl's --max-time; sleep, the timer that ends wget) is noted, then cut to
// shortTimer: a test sees the bound the launcher sets, and that it ends the download, without
// waiting it out. It returns the seconds noted, in order. sleep's tenths (the waits between
// rounds) are left as they are.
// shortTimer is what shortTimers leaves of a download's bound: time enough for a loaded
// machine to start curl and have the server's answer (a curl that times out before it says
// no HTTP code, which the launcher reads as no network), well short of the hook's 4 s.
const shortTimer = "2"

func shortTimers(t *testing.T, tools string) (given func() []string) {
	t.Helper()
	noted := filepath.Join(t.TempDir(), "given")
	if _, err := os.Lstat(filepath.Join(tools, "curl")); err == nil {
		wrapTool(t, tools, "curl", func(real string) string {
			return "p=\nfor a; do\n\tshift\n\tif [ \"$p\" = --max-time ]; then echo \"$a\" >>" + noted + " && a=" + shortTimer + "; fi\n\tp=$a\n\tset -- \"$@\" \"$a\"\ndone\nexec " + real + " \"$@\"\n"
		})
	}
	wrapTool(t, tools, "sleep", func(real string) string {
		return "case $1 in *.*) exec " + real + " \"$@\" ;; esac\necho \"$1\" >>" + noted + "\nexec " + real + " " + shortTimer + "\n"
	})
	return func() []string {
		b, _ := os.ReadFile(noted)
		return strings.Fields(string(b))
	}
}

// A hook's download from a server that trickles bytes ends within the hook's four seconds for
// it, with exit 0 and a line saying so, whichever downloader is on PATH: wget's -T bounds each
// read, not the download, so without a bound of its own the hook ran until Claude Code killed
// it. The line said to check the network or install Go (hundreds of megabytes) for a download
// the MCP server, allowed a minute, finishes on a slow network, often in the same session: it
// says the download takes longer than a hook may wait, and that the MCP server allows it a
// minute. With Go on PATH too: the hook started a build in the background, which raced the MCP
// server for the install lock the hook let go. Where it won, the server's minute to download
// went to waiting on a build of minutes (its modules fetched over the same slow network), and
// the server gave up; where the server won, the hook had said a build was running that never
// ran. The server builds itself when its own download fails, so the hook starts no build.
// The bound is read from the downloader's arguments (shortTimers), not waited out.
func TestLaunchHookSlowServer(t *testing.T) {
	skipOnWindows(t)
	url := serveSlowly(t)
	for _, tc := range []struct {
		dl     string
		withGo bool
	}{{"curl", false}, {"wget", false}, {"curl", true}} {
		t.Run(fmt.Sprintf("%s go=%t", tc.dl, tc.withGo), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			fakeSums(t, root)
			work, _, data := launchSite(t)
			tools := toolDirWith(t, tc.dl)
			given := shortTimers(t, tools)
			calls := filepath.Join(work, "go-calls")
			if tc.withGo {
				fakeGo(t, tools, `echo "$pkg" >>`+calls+"\nexit 1\n")
			}
			env := launchEnv(root, data, work, tools, "CAIRN_DOWNLOAD_URL="+url)
			// The server trickles for two minutes: a download its bound does not end is killed here.
			res, _ := runBounded(t, 20*time.Second, env, work, `{"session_id":"s"}`, "/bin/sh", "-c", hookCommand(t, "SessionStart"))
			var out map[string]string
			if res.code != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil ||
				!strings.HasPrefix(res.stderr, "cairn: ") || strings.Count(res.stderr, "\n") != 1 ||
				!strings.Contains(res.stderr, "are not installed yet (downloading "+url) || !strings.Contains(res.stderr, "takes longer than a hook may wait") ||
				!strings.Contains(res.stderr, "the MCP server allows the download a minute") || strings.Contains(res.stderr, "install Go") {
				t.Errorf("SessionStart with %s: %+v, want exit 0 and one line saying the download takes longer than a hook may wait", tc.dl, res)
			}
			if g := given(); len(g) != 1 || !slices.Contains([]string{"1", "2", "3", "4"}, g[0]) {
				t.Errorf("the hook's download with %s was given %v seconds, want one bound of 1 to 4", tc.dl, g)
			}
			waitUnlocked(t, data)
			if b, err := os.ReadFile(calls); err == nil {
				t.Errorf("the hook built with Go after a slow download: %s", b)
			}
		})
	}
}

// With wget and no curl, the release still installs and runs.
func TestLaunchDownloadsWithWget(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, _, data := launchSite(t)
	env := launchEnv(root, data, work, toolDirWith(t, "wget"), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || rs.Hits(archive) != 1 {
		t.Errorf("cairn-mcp with wget = %+v after %d downloads, want the installed server's answer after one", res, rs.Hits(archive))
	}
}

// Without sha256sum, shasum or openssl the archive cannot be checked: the line says so, not
// that the genuine archive's sum does not match (which reads as a tampered download), before
// anything is downloaded. Without curl or wget it cannot be downloaded; without tar (or the
// gzip GNU tar runs) it cannot be unpacked, which was said as "unpacking ARCHIVE failed". Each
// line said to install Go, hundreds of megabytes to build what the missing tool would fetch:
// the step is that tool.
func TestLaunchWithoutAnInstallTool(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		tool, reason, step string
		downloads          int
	}{
		{"sha256sum", "neither sha256sum, shasum nor openssl is installed", "install sha256sum (GNU coreutils), shasum or openssl, then start a new session", 0},
		{"curl", "neither curl nor wget is installed", "install curl or wget, then start a new session", 0},
		{"tar", "tar is not installed to unpack it", "install tar, then start a new session", 0},
		// GNU tar runs gzip to unpack a .tar.gz, which busybox and bsdtar do themselves: told
		// by tar's complaint, after the download.
		{"gzip", "gzip is not installed to unpack it", "install gzip, then start a new session", 1},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			root, archive, rs := releasedAndServed(t)
			work, _, pdata := launchSite(t)
			tools := toolDir(t)
			if err := os.Remove(filepath.Join(tools, tc.tool)); err != nil {
				t.Fatal(err)
			}
			env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != launchFailCode("cairn-mcp") || strings.Contains(res.stderr, "does not match") || !strings.Contains(res.stderr, tc.reason) ||
				!strings.Contains(res.stderr, tc.step) || strings.Contains(res.stderr, "install Go") {
				t.Errorf("cairn-mcp without %s = %+v, want a line naming the missing tool and the step to install it", tc.tool, res)
			}
			if n := rs.Hits(archive); n != tc.downloads {
				t.Errorf("the archive was downloaded %d times, want %d", n, tc.downloads)
			}
			if _, err := os.Stat(filepath.Join(pdata, "bin-"+pluginVersion(t))); err == nil {
				t.Error("an archive no tool checked or unpacked was installed")
			}
		})
	}
}

// A plugin update installs the new version's binaries beside the old version's bin-V, which
// nothing runs again: the install removes other versions' sets more than a day old (a session
// still on the old plugin, until it is restarted, reinstalls its own at most once a day), and
// leaves younger ones and what is not the launcher's alone. So it does with what an install
// killed mid-way left of another version (bin-V.tmp: a download or a build cut short), which
// no start of this version takes up again: one such leftover a version piled up for good.
func TestLaunchUpdateRemovesOldBinaries(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	old := time.Now().Add(-49 * time.Hour)
	set := func(name string, mtime time.Time, stamped bool) string {
		dir := filepath.Join(pdata, name)
		fakeBinaries(t, dir)
		if stamped {
			writeFile(t, filepath.Join(dir, ".checksums"), "0000  cairn_0.0.1_linux_amd64.tar.gz\n")
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := set("bin-0.0.1", old, true)
	writeFile(t, filepath.Join(pdata, "build-0.0.1.log"), "an old build\n")
	cut := set("bin-0.0.3.tmp", old, false)
	writeFile(t, filepath.Join(cut, ".part"), "")
	if err := os.Chtimes(cut, old, old); err != nil {
		t.Fatal(err)
	}
	// A download a hook's clock cut short, kept to go on (.part): no start of this version takes
	// it up, and it stayed for good.
	part := filepath.Join(pdata, "bin-0.0.6.tmp")
	writeFile(t, filepath.Join(part, ".part"), "")
	writeFile(t, filepath.Join(part, "cairn_0.0.6_linux_amd64.tar.gz"), "\x1f\x8b")
	if err := os.Chtimes(part, old, old); err != nil {
		t.Fatal(err)
	}
	// So did a download killed outright (SIGKILL: only curl's answer, .http, beside the archive),
	// and a Go build killed between its link and its copy (.link).
	killed := []string{filepath.Join(pdata, "bin-0.0.7.tmp"), filepath.Join(pdata, "bin-0.0.8.tmp")}
	writeFile(t, filepath.Join(killed[0], ".http"), "")
	writeFile(t, filepath.Join(killed[0], "cairn_0.0.7_linux_amd64.tar.gz"), "\x1f\x8b")
	writeFile(t, filepath.Join(killed[1], ".link", "cairn-mcp"), "")
	for _, p := range killed {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	kept := []string{set("bin-0.0.2", time.Now(), true), set("bin-0.0.4.tmp", time.Now(), false), set("bin-mine", old, false)}
	// A .tmp that is no set's, as the sets are told (a user's, in a CLAUDE_PLUGIN_DATA of
	// theirs), was removed whatever it held, once a day old.
	for _, name := range []string{"bin-mine.tmp", "bin-0.0.1.tmp"} {
		dir := filepath.Join(pdata, name)
		writeFile(t, filepath.Join(dir, "notes"), "mine\n")
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, dir)
	}
	// At the name of the old set's failure record, a directory with something in it is the
	// user's: it went with the set, whole.
	writeFile(t, filepath.Join(pdata, ".download-failed-0.0.1", "notes"), "mine\n")
	kept = append(kept, filepath.Join(pdata, ".download-failed-0.0.1", "notes"))
	// One it cannot remove (another user's, left by a cairn run with sudo; here read-only) is
	// left, without a line from rm for each of its files on the server's stderr.
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		readOnly(t, set("bin-0.0.5", old, true))
	}
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer and nothing on stderr", res)
	}
	for _, p := range []string{gone, filepath.Join(pdata, "build-0.0.1.log"), cut, part, killed[0], killed[1]} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the update", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// What the clean-up of last versions' sets passed over piled up for good: the build log and
// the failure record of an older version whose build or download failed (no bin-V was ever
// made, and the clean-up only removed them with their set), and an older version's set an older
// Cairn wrote, before sets were stamped (no .checksums), and an empty bin-V.tmp (an install
// killed right after making it). They go as an old set does: a day old,
// of a version not newer than this one's, no install of theirs under way. What is not a
// version's (bin-mine), a newer version's, and a directory named after a version that holds no
// Cairn binary (a user's, in a CLAUDE_PLUGIN_DATA of theirs) are left.
func TestLaunchUpdateRemovesOldLeftovers(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	old := time.Now().Add(-49 * time.Hour)
	file := func(name string, mtime time.Time) string {
		p := filepath.Join(pdata, name)
		writeFile(t, p, "left\n")
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unstamped := func(name string, mtime time.Time) string {
		dir := filepath.Join(pdata, name)
		fakeBinaries(t, dir)
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// An install killed right after making its bin-V.tmp left it empty: no rule took it.
	empty := func(name string, mtime time.Time) string {
		dir := filepath.Join(pdata, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := []string{
		file("build-0.0.1.log", old),
		file(".download-failed-0.0.1", old),
		file(".download-failed-0.0.2", old),
		file(".download-failed-0.0.2.why", old),
		unstamped("bin-0.0.3", old),
		empty("bin-0.0.2.tmp", old),
	}
	if err := os.MkdirAll(filepath.Join(pdata, ".install-lock-0.0.5"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept := []string{
		file("build-0.0.4.log", time.Now()),
		file("build-0.0.5.log", old), // its install holds the lock
		// Kept beside a record's name the user's directory holds (see cairn_record), so too;
		// its version was read as "0.0.5.why", whose lock no install holds.
		file(".download-failed-0.0.5.why", old),
		file("build-99.0.0.log", old),
		file(".download-failed-99.0.0", old),
		unstamped("bin-99.0.1", old),
		unstamped("bin-mine", old),
		empty("bin-0.0.7.tmp", time.Now()),
		empty("bin-99.0.2.tmp", old),
		empty("bin-mine.tmp", old), // not named after a version: not the launcher's
		// Named after a version but holding no Cairn binary: not a set, the user's.
		file(filepath.Join("bin-0.0.6", "notes.txt"), old),
	}
	if err := os.Chtimes(filepath.Join(pdata, "bin-0.0.6"), old, old); err != nil {
		t.Fatal(err)
	}
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer and nothing on stderr", res)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after installing %s", p, pluginVersion(t))
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// An install of an older version that died left its lock, .install-lock-V, which no start of
// a later version takes up or breaks: it stayed for good, and kept its version's build log and
// failure record with it (an install looked under way). It now goes as the other leftovers do:
// a day old, of a version not newer than this one's, once dead by the rule that breaks this
// version's own lock (no holder alive); its break lock with it. A lock a day old whose holder
// lives, a newer version's and a fresh one are left.
func TestLaunchUpdateRemovesDeadOldLocks(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	old := time.Now().Add(-49 * time.Hour)
	lock := func(name, pid string, mtime time.Time) string {
		dir := filepath.Join(pdata, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			writeFile(t, filepath.Join(dir, "pid"), pid+"\n")
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	file := func(name string) string {
		p := filepath.Join(pdata, name)
		writeFile(t, p, "left\n")
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A holder alive: this test's process, its start in the lock as the holder writes it.
	live := lock(".install-lock-0.0.8", strconv.Itoa(os.Getpid()), time.Now())
	start, ok := store.ProcessStart(os.Getpid())
	if !ok {
		t.Skip("the platform does not tell a process's start")
	}
	writeFile(t, filepath.Join(live, "start"), strconv.FormatUint(start, 10)+"\n")
	if err := os.Chtimes(live, old, old); err != nil {
		t.Fatal(err)
	}
	gone := []string{
		lock(".install-lock-0.0.6", "", old),
		lock(".install-lock-0.0.6.break", "", old),
		lock(".install-lock-0.0.7", "999999999", old), // its holder exited
		file("build-0.0.6.log"),
		file(".download-failed-0.0.7"),
	}
	kept := []string{
		live,
		file("build-0.0.8.log"),
		lock(".install-lock-0.0.9", "", time.Now()),
		lock(".install-lock-99.0.0", "", old),
	}
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer and nothing on stderr", res)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after installing %s", p, pluginVersion(t))
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// A session that runs for days on the old plugin after an update keeps its set: its MCP server
// runs from it, and its agent's cairn is found there (CLAUDE_ENV_FILE's PATH). The install of
// the new version removed any other version's set more than a day old, running or not, and
// that agent's cairn then said "command not found". A set a process runs from stays.
func TestLaunchUpdateKeepsOldBinariesInUse(t *testing.T) {
	skipOnWindows(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("sleep is not installed")
	}
	ps, err := exec.LookPath("ps")
	if err != nil {
		t.Skip("ps is not installed")
	}
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	inUse := filepath.Join(pdata, "bin-0.0.1")
	fakeBinaries(t, inUse)
	writeFile(t, filepath.Join(inUse, ".checksums"), "0000  cairn_0.0.1_linux_amd64.tar.gz\n")
	bin, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(inUse, "cairn-mcp")
	if err := os.WriteFile(server, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	running := exec.Command(server, "60")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { running.Process.Kill(); running.Wait() })
	old := time.Now().Add(-49 * time.Hour)
	if err := os.Chtimes(inUse, old, old); err != nil {
		t.Fatal(err)
	}
	tools := toolDir(t)
	if err := os.Symlink(ps, filepath.Join(tools, "ps")); err != nil {
		t.Fatal(err)
	}
	env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer", res)
	}
	for _, name := range []string{"cairn", "cairn-mcp", ".checksums"} {
		if _, err := os.Stat(filepath.Join(inUse, name)); err != nil {
			t.Errorf("the old set a running server uses lost %s: %v", name, err)
		}
	}
}

// After a marketplace update, ~/.local/bin/cairn, made by cairn doctor --link, ran the last
// version's cairn (it linked that set, DATA/bin-VERSION) until the person linked again, and
// dangled once the set was removed a day later. An install now points DATA/cairn, a path that
// stays, at the set it installed, and doctor --link links there: the link runs the new
// version from the first session of it on, with no step. A session still on an older plugin
// (until it is restarted) that installed its set again pointed DATA/cairn back at that older
// version, and the link with it, until the next session of the newer one: DATA/cairn names the
// newest version installed.
func TestLaunchPointsTheStableCairnAtTheNewestSet(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	for _, tc := range []struct {
		name, named string // the set DATA/cairn names before the install
		stays       bool   // DATA/cairn still names it after
	}{
		{"an older set", "0.0.1", false},
		{"a newer set", "99.0.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, _, pdata := launchSite(t)
			set := filepath.Join(pdata, "bin-"+tc.named)
			fakeBinaries(t, set)
			writeFile(t, filepath.Join(set, ".checksums"), "0000  cairn_"+tc.named+"_linux_amd64.tar.gz\n")
			stable := filepath.Join(pdata, "cairn")
			if err := os.Symlink(filepath.Join("bin-"+tc.named, "cairn"), stable); err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(work, "home")
			link := filepath.Join(home, ".local", "bin", "cairn")
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(stable, link); err != nil {
				t.Fatal(err)
			}
			env := launchEnv(root, pdata, home, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
				t.Fatalf("cairn-mcp = %+v, want the installed server's answer and nothing on stderr", res)
			}
			want := filepath.Join("bin-"+pluginVersion(t), "cairn")
			if tc.stays {
				want = filepath.Join("bin-"+tc.named, "cairn")
			}
			if got, err := os.Readlink(stable); err != nil || got != want {
				t.Fatalf("after installing %s, %s links to %q (%v), want %q", pluginVersion(t), stable, got, err, want)
			}
			if got, err := filepath.EvalSymlinks(link); err != nil || got != filepath.Join(pdata, want) {
				t.Errorf("after installing %s, %s runs %q (%v), want %s", pluginVersion(t), link, got, err, filepath.Join(pdata, want))
			}
			if ents, err := filepath.Glob(filepath.Join(pdata, ".cairn*")); err != nil || len(ents) != 0 {
				t.Errorf("the install left %q in the data directory", ents)
			}
		})
	}
}

// A CLAUDE_PLUGIN_DATA of the user's own may hold a file of theirs named cairn: an install
// renamed its link to the newest set over it, and the file was gone. Only the launcher's link
// (to bin-VERSION/cairn) is replaced; anything else there stays, said in one line, and the
// server runs.
func TestLaunchLeavesAUsersCairnInTheDataDir(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"a file", func(t *testing.T, path string) { writeFile(t, path, "mine\n") }},
		{"a link elsewhere", func(t *testing.T, path string) {
			writeFile(t, path+"-mine", "mine\n")
			if err := os.Symlink(path+"-mine", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a link to a directory", func(t *testing.T, path string) {
			if err := os.MkdirAll(path+"-dir", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+"-dir", path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, _, pdata := launchSite(t)
			stable := filepath.Join(pdata, "cairn")
			tc.make(t, stable)
			before, _ := os.Lstat(stable)
			env := launchEnv(root, pdata, filepath.Join(work, "home"), toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
				t.Fatalf("cairn-mcp = %+v, want the installed server's answer", res)
			}
			if after, err := os.Lstat(stable); err != nil || !os.SameFile(before, after) {
				t.Errorf("the install replaced the user's %s (%v)", stable, err)
			}
			if b, err := os.ReadFile(stable); tc.name == "a file" && (err != nil || string(b) != "mine\n") {
				t.Errorf("the user's %s holds %d bytes (%v), want its own %q", stable, len(b), err, "mine\n")
			}
			if lines := strings.Split(strings.TrimSpace(res.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "cairn: "+stable+" is not ") {
				t.Errorf("stderr = %q, want one line saying %s was left", res.stderr, stable)
			}
			if ents, err := filepath.Glob(filepath.Join(pdata, ".cairn*")); err != nil || len(ents) != 0 {
				t.Errorf("the install left %q in the data directory", ents)
			}
		})
	}
}

// Two installs of different versions at once (a session still on the old plugin and one on
// the new) each pointed DATA/cairn at the newest set it had seen: the older version's, which
// chose before the newer set was there, could rename its link in last, and DATA/cairn, with
// ~/.local/bin/cairn through it, ran the older version for good (no later install comes to put
// it back). An install now looks again after its rename and points it at the newest there is.
func TestLaunchStableCairnRaceKeepsTheNewest(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	staged := filepath.Join(t.TempDir(), "bin-99.0.0")
	fakeBinaries(t, staged)
	writeFile(t, filepath.Join(staged, ".checksums"), "0000  cairn_99.0.0_linux_amd64.tar.gz\n")
	mv, err := exec.LookPath("mv")
	if err != nil {
		t.Skip("mv is not installed")
	}
	tools := toolDir(t)
	// The newer version's install finishes while this one makes its link aside: its set is
	// published and DATA/cairn renamed onto it, under a name of its own.
	wrapTool(t, tools, "ln", func(real string) string {
		return fmt.Sprintf(`case $3 in */.cairn-link) if [ -d %[1]q ]; then
	%[2]s %[1]q %[3]q && %[4]s -s bin-99.0.0/cairn %[5]q && %[2]s -f %[5]q %[6]q
fi ;; esac
exec %[4]s "$@"
`, staged, mv, filepath.Join(pdata, "bin-99.0.0"), real, filepath.Join(pdata, ".newer-link"), filepath.Join(pdata, "cairn"))
	})
	env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || res.stderr != "" {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer and nothing on stderr", res)
	}
	if _, err := os.Stat(staged); err == nil {
		t.Fatal("the newer install was not made while the link was")
	}
	want := filepath.Join("bin-99.0.0", "cairn")
	if got, err := os.Readlink(filepath.Join(pdata, "cairn")); err != nil || got != want {
		t.Errorf("after two installs at once, DATA/cairn links to %q (%v), want the newest set's %q", got, err, want)
	}
}

// The clean-up of last versions' sets after an install took any set a day old that no process
// ran from, a newer version's too: a session still on an older plugin removed the set the
// newer one's sessions and DATA/cairn use, and their next start downloaded it again. Only
// older versions' sets go now.
func TestLaunchKeepsANewerVersionsSet(t *testing.T) {
	skipOnWindows(t)
	root, _, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	newer, older := filepath.Join(pdata, "bin-99.0.0"), filepath.Join(pdata, "bin-0.0.1")
	day := time.Now().Add(-49 * time.Hour)
	for _, set := range []string{newer, older} {
		fakeBinaries(t, set)
		writeFile(t, filepath.Join(set, ".checksums"), "0000  cairn_x_linux_amd64.tar.gz\n")
		if err := os.Chtimes(set, day, day); err != nil {
			t.Fatal(err)
		}
	}
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
		t.Fatalf("cairn-mcp = %+v, want the installed server's answer", res)
	}
	if _, err := os.Stat(filepath.Join(newer, "cairn")); err != nil {
		t.Errorf("installing %s removed the newer version's set: %v", pluginVersion(t), err)
	}
	if _, err := os.Stat(older); err == nil {
		t.Errorf("installing %s kept the older version's set %s, a day old", pluginVersion(t), older)
	}
}

// The Go fallback builds the plugin's own module whatever the user's Go settings say: a
// go.work above the plugin (one in the home directory, say) that does not list it, or a
// GOFLAGS=-mod=vendor, made every build fail ("not one of the workspace modules").
func TestLaunchBuildIgnoresTheUsersWorkspace(t *testing.T) {
	skipOnWindows(t)
	_, goSettings := realGo(t, "go is not on PATH")
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "go.work"), "go 1.26\n\nuse ./elsewhere\n")
	writeFile(t, filepath.Join(home, "elsewhere", "go.mod"), "module example.com/elsewhere\n\ngo 1.26\n")
	root := filepath.Join(home, "plugins", "cairn")
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyPlugin(t), root); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, "data")
	env := launchEnv(root, data, home, os.Getenv("PATH"),
		append(goSettings, "GOFLAGS=-mod=vendor")...)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
		log, _ := os.ReadFile(filepath.Join(data, "build-"+pluginVersion(t)+".log"))
		t.Errorf("cairn-mcp under a go.work = %+v, want the built server's answer\nbuild log: %s", res, log)
	}
}

// A SIGTERM the shell takes before it is in the wait for its download (between starting the
// download and the wait; here, deterministically, while its mkdir of the lock runs: the same
// state, a signal whose trap has run) did not cut that wait: the download went on against a
// slow server for its whole minute, past the client's patience. The trap ends the download
// whenever the signal comes.
func TestLaunchQuitsPromptlyWhenStoppedBeforeTheWait(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	work, _, data := launchSite(t)
	tools := toolDir(t)
	// The launcher runs mkdir itself (no subshell), so its parent is the launcher's shell.
	wrapTool(t, tools, "mkdir", func(real string) string {
		return "case $1 in */.install-lock-*) kill -TERM $PPID ;; esac\nexec " + real + " \"$@\"\n"
	})
	env := launchEnv(root, data, work, tools, "CAIRN_DOWNLOAD_URL="+serveSlowly(t))
	// Killed at 30 s, half the minute a download not cut would go on for: only the launcher's
	// own exit 1 passes.
	res, took := runBounded(t, 30*time.Second, env, work, initializeLine, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	if res.code != 1 {
		t.Errorf("cairn-mcp stopped before its download's wait took %s: %+v, want exit 1 at once", took, res)
	}
	version := pluginVersion(t)
	for _, left := range []string{filepath.Join(data, ".install-lock-"+version), filepath.Join(data, "bin-"+version+".tmp"), filepath.Join(data, ".download-failed-"+version)} {
		if _, err := os.Stat(left); err == nil {
			t.Errorf("%s was left behind", left)
		}
	}
}

// A failure is kept for a minute in .download-failed-VERSION, for later starts to say without
// trying again; a disk full when it was written (the failure was the disk's, or its set filled
// it) leaves the file but not its line. An empty record is no record: the start said the
// binaries "could not be installed ()" and to check the network, and installed nothing, where
// the disk may have room again. It tries the install.
func TestLaunchEmptyFailureRecord(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, _, pdata := launchSite(t)
	writeFile(t, filepath.Join(pdata, ".download-failed-"+pluginVersion(t)), "")
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || rs.Hits(archive) != 1 {
		t.Errorf("cairn-mcp over an empty failure record = %+v after %d downloads, want the server installed and run", res, rs.Hits(archive))
	}
}

// A server that answers with a body far larger than any release archive (a proxy's endless
// stream, a wrong CAIRN_DOWNLOAD_URL) was downloaded whole into the data directory, for the
// minute the MCP server's start allows: gigabytes on a fast network, to be refused by its
// checksum at the end. A body whose length says it is too large is not downloaded; one that
// states no length (chunked), which wget and curl before 8.4 do not bound, is cut off at
// 256 MiB.
func TestLaunchRefusesAHugeDownload(t *testing.T) {
	skipOnWindows(t)
	const offered = 512 << 20 // bytes the server writes at most
	for _, tc := range []struct {
		name, downloader, length string
		most                     int64 // bytes the server may write before the download stops
	}{
		{"stated length, curl", "curl", "1099511627776", 64 << 20}, // a terabyte
		{"no length, curl", "curl", "", 384 << 20},
		{"no length, wget", "wget", "", 384 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.length != "" {
					w.Header().Set("Content-Length", tc.length)
				}
				w.WriteHeader(http.StatusOK)
				chunk := make([]byte, 1<<20)
				for written.Load() < offered {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			root := copyPlugin(t, launcherFiles...)
			work, _, pdata := launchSite(t)
			env := launchEnv(root, pdata, work, toolDirWith(t, tc.downloader), "CAIRN_DOWNLOAD_URL=http://"+ln.Addr().String()+"/releases")
			res := runLaunch(t, root, env, "", "cairn-mcp")
			if lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n"); res.code != launchFailCode("cairn-mcp") || len(lines) != 1 || !strings.Contains(lines[0], "larger than a release archive") {
				t.Errorf("cairn-mcp = %+v, want exit 1 and one line saying the download is larger than a release archive", res)
			}
			if n := written.Load(); n == 0 || n >= tc.most {
				t.Errorf("the server wrote %d bytes before the download stopped, want some and less than %d MiB", n, tc.most>>20)
			}
		})
	}
}

// A CAIRN_DOWNLOAD_URL with credentials in it (a private mirror's user:password@host) was
// repeated whole in the line that says the download failed: shown to the user by every hook,
// kept in the data directory's failure record. The line names the URL without them.
func TestLaunchDownloadFailureHidesURLCredentials(t *testing.T) {
	skipOnWindows(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	const password = "Qk7vR2mXw9LpT4sNbY6c"
	url := strings.Replace(srv.URL, "://", "://deploy:"+password+"@", 1) + "/releases"
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		t.Run(name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work, _, data := launchSite(t)
			env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+url)
			res := launchAs(t, root, env, work, name)
			record, _ := os.ReadFile(filepath.Join(data, ".download-failed-"+pluginVersion(t)))
			if res.code != launchFailCode(name) || !strings.Contains(res.stderr, "the server answered 404") || !strings.Contains(res.stderr, strings.TrimPrefix(srv.URL, "http://")+"/releases/v") {
				t.Errorf("%s = %+v, want exit %d and a line naming the server and its 404", name, res, launchFailCode(name))
			}
			if strings.Contains(res.stdout+res.stderr+string(record), password) {
				t.Errorf("%s repeated the URL's password: %+v, failure record %q", name, res, record)
			}
		})
	}
}

// A hook's download that its clock cut short while the server was sending was thrown away:
// on a slow network the MCP server, allowed a minute, started again from the first byte, and
// so did each later start. The next start goes on from where the last one stopped (a server
// that cannot send from an offset sends it all again), and the archive is checked whole.
func TestLaunchResumesADownloadCutShort(t *testing.T) {
	skipOnWindows(t)
	root, archive, whole := releasedPlugin(t)
	const first = 4096
	for _, tc := range []struct {
		dl     string
		ranges bool
		want   []string // the Range of each request: the hook's, then the MCP server's
	}{
		{"curl", true, []string{"", fmt.Sprintf("bytes=%d-", first)}},
		{"wget", true, []string{"", fmt.Sprintf("bytes=%d-", first)}},
		{"curl", false, []string{"", fmt.Sprintf("bytes=%d-", first), ""}},
	} {
		t.Run(fmt.Sprintf("%s ranges=%t", tc.dl, tc.ranges), func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			sent := -1 // the body bytes of the last request
			url := serveArchive(t, archive, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked = append(asked, r.Header.Get("Range"))
				n := len(asked)
				mu.Unlock()
				if n == 1 {
					// The hook's: the first bytes, then nothing until it gives up.
					w.Header().Set("Content-Length", fmt.Sprint(len(whole)))
					w.Write(whole[:first])
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return
				}
				cw := &countingWriter{ResponseWriter: w}
				if tc.ranges {
					http.ServeContent(cw, r, archive, time.Time{}, bytes.NewReader(whole))
				} else {
					cw.Write(whole)
				}
				mu.Lock()
				sent = cw.n
				mu.Unlock()
			})
			work, _, data := launchSite(t)
			// The hook's bound is cut short (shortTimers), not waited out; the server's is its own.
			hookTools := toolDirWith(t, tc.dl)
			shortTimers(t, hookTools)
			env := launchEnv(root, data, work, hookTools, "CAIRN_DOWNLOAD_URL="+url)
			res, _ := runBounded(t, 20*time.Second, env, work, `{"session_id":"s"}`, "/bin/sh", "-c", hookCommand(t, "SessionStart"))
			if !strings.Contains(res.stderr, "takes longer than a hook may wait") {
				t.Fatalf("SessionStart = %+v, want its download cut short by its clock: the test proves nothing", res)
			}
			env = launchEnv(root, data, work, toolDirWith(t, tc.dl), "CAIRN_DOWNLOAD_URL="+url)
			res = runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) {
				t.Fatalf("cairn-mcp after the hook's download was cut short = %+v, want the installed server's answer", res)
			}
			mu.Lock()
			defer mu.Unlock()
			want := len(whole) - first
			if !tc.ranges {
				want = len(whole)
			}
			if !slices.Equal(asked, tc.want) || sent != want {
				t.Errorf("requests asked for ranges %q, the last was sent %d bytes; want %q and %d", asked, sent, tc.want, want)
			}
		})
	}
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += n
	return n, err
}

// On Windows (Git Bash, whose uname -s says MINGW64_NT-...) the release is a zip, and the tar
// Git for Windows puts first on PATH is GNU tar, which reads no zip ("This does not look like a
// tar archive"): every download there failed as "unpacking ARCHIVE failed", with the step to
// check the network or install Go. unzip, which Git for Windows ships beside it, unpacks it.
func TestLaunchUnpacksTheWindowsZip(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the release has Windows binaries for amd64 only")
	}
	files := map[string][]byte{}
	for name := range binarySources {
		files[name+".exe"] = []byte("MZ " + name)
	}
	zip, err := release.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	root := copyPlugin(t, launcherFiles...)
	archive := release.ArchiveName(pluginVersion(t), release.Platform{OS: "windows", Arch: "amd64"})
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), fmt.Sprintf("%x  %s\n", sha256.Sum256(zip), archive))
	rs := serveRelease(t, map[string][]byte{archive: zip})
	tools := toolDir(t)
	for _, tool := range []string{"unzip"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(tools, tool)); err != nil {
			t.Fatal(err)
		}
	}
	wrapTool(t, tools, "uname", func(real string) string {
		return "if [ \"$1\" = -s ]; then echo MINGW64_NT-10.0-19045; else exec " + real + " \"$@\"; fi\n"
	})
	work, _, data := launchSite(t)
	env := launchEnv(root, data, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
	// Here the launcher's exec of the set's cairn-mcp fails (Git Bash finds cairn-mcp.exe): the
	// set is what is looked at.
	res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
	set := filepath.Join(data, "bin-"+pluginVersion(t))
	if strings.Contains(res.stderr, "could not be installed") || rs.Hits(archive) != 1 {
		t.Errorf("cairn-mcp: %+v after %d downloads, want one download and no line saying the binaries could not be installed", res, rs.Hits(archive))
	}
	for name := range files {
		if b, err := os.ReadFile(filepath.Join(set, name)); err != nil || string(b) != string(files[name]) {
			t.Errorf("%s in the set: %q, %v; want the archive's", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(set, ".checksums")); err != nil {
		t.Errorf("the set is not stamped: %v", err)
	}
}
