package plugintest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/release"
)

// foreignELF is the header of an ELF executable for a processor nothing here runs (SPARC):
// what the kernel refuses with ENOEXEC, as it does the other architecture's binaries in a
// data dir shared between an x86_64 and an arm64 machine.
func foreignELF() []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(h[16:], 2) // ET_EXEC
	binary.LittleEndian.PutUint16(h[18:], 2) // EM_SPARC
	binary.LittleEndian.PutUint32(h[20:], 1)
	return h
}

// toolDirWithShell is toolDir with sh as its sh (skipped where sh is not installed), and sh's
// path: the launcher's paths differ between dash and bash.
func toolDirWithShell(t *testing.T, sh string) (tools, path string) {
	t.Helper()
	tools = toolDir(t)
	if sh == "/bin/sh" {
		return tools, sh
	}
	p, err := exec.LookPath(sh)
	if err != nil {
		t.Skipf("%s is not installed", sh)
	}
	os.Remove(filepath.Join(tools, "sh"))
	if err := os.Symlink(p, filepath.Join(tools, "sh")); err != nil {
		t.Fatal(err)
	}
	return tools, p
}

// foreignSet fills dir with every binary as foreignELF, stamped as this plugin's, and returns
// dir.
func foreignSet(t *testing.T, root, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range binarySources {
		if err := os.WriteFile(filepath.Join(dir, name), foreignELF(), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stamp(t, root, dir)
	return dir
}

// A data dir shared between machines of different processors (one home directory for an
// x86_64 and an arm64 machine) holds the other machine's binaries, with this plugin's stamp:
// every start exec'd them and failed (exit 126, "Exec format error"), the MCP server never
// started and every hook failed. The launcher sees its exec fail, and installs this machine's
// binaries in their place; the hook still exits 0.
func TestLaunchReplacesBinariesForAnotherProcessor(t *testing.T) {
	skipOnWindows(t)
	for _, sh := range []string{"/bin/sh", "bash"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			root, archive, rs := releasedAndServed(t)
			work, project, pdata := launchSite(t)
			set := foreignSet(t, root, filepath.Join(pdata, "bin-"+pluginVersion(t)))
			writeFile(t, filepath.Join(set, ".self-check"), "")
			tools, sh := toolDirWithShell(t, sh)
			stoppedClock(t, tools) // the hook waits for its unpack, however loaded the machine
			env := launchEnv(root, pdata, filepath.Join(work, "home"), tools, "CAIRN_DOWNLOAD_URL="+rs.URL,
				"CLAUDE_PROJECT_DIR="+project, "CLAUDE_CONFIG_DIR="+filepath.Join(work, "home", ".claude"),
				"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
			res := runProcess(t, time.Minute, "SessionStart", env, project, `{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`, sh, "-c", hookCommand(t, "SessionStart"))
			if res.code != 0 || !strings.Contains(res.stderr, "cairn-session-start: source=startup session=s-1") || rs.Hits(archive) != 1 {
				t.Errorf("SessionStart over another processor's binaries = %+v after %d downloads, want exit 0 and the hook run after one", res, rs.Hits(archive))
			}
			res = runProcess(t, time.Minute, "cairn-mcp", env, work, initializeLine, sh, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
			if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || rs.Hits(archive) != 1 {
				t.Errorf("cairn-mcp after the reinstall = %+v after %d downloads, want the server's answer and no more downloads", res, rs.Hits(archive))
			}
		})
	}
}

// A checkout's bin/ built on another machine (a checkout on a shared disk) is passed over, and
// left alone (make build replaces it): the data dir's set, also the other machine's here, is
// installed anew and run. dash ran the data set inside its EXIT trap, where a second failed exec
// is caught by nothing: every start exited 126, the hooks too.
func TestLaunchPassesOverABinForAnotherProcessor(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := releasedAndServed(t)
	work, project, pdata := launchSite(t)
	bin, set := filepath.Join(root, "bin"), filepath.Join(pdata, "bin-"+pluginVersion(t))
	foreignSet(t, root, bin)
	foreignSet(t, root, set)
	// The hook waits for its unpack however long a loaded machine takes: this test is of the
	// launcher's way past the two sets, not of the hook's clock.
	tools := toolDir(t)
	stoppedClock(t, tools)
	env := launchEnv(root, pdata, filepath.Join(work, "home"), tools, "CAIRN_DOWNLOAD_URL="+rs.URL,
		"CLAUDE_PROJECT_DIR="+project, "CLAUDE_CONFIG_DIR="+filepath.Join(work, "home", ".claude"),
		"CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
	res := runShell(t, hookCommand(t, "SessionStart"), env, project, `{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`)
	if res.code != 0 || !strings.Contains(res.stderr, "cairn-session-start: source=startup session=s-1") || rs.Hits(archive) != 1 ||
		!strings.Contains(res.stderr, "cairn: "+bin+" holds binaries this machine cannot run") ||
		!strings.Contains(res.stderr, "cairn: "+set+" held binaries this machine cannot run") {
		t.Errorf("SessionStart with another processor's bin/ and data set = %+v after %d downloads, want exit 0, the hook run after one download and a line on each set", res, rs.Hits(archive))
	}
	for range 2 {
		res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
		if res.code != 0 || !strings.Contains(res.stdout, `"serverInfo"`) || rs.Hits(archive) != 1 ||
			!strings.Contains(res.stderr, "cairn: "+bin+" holds binaries this machine cannot run") ||
			strings.Contains(res.stderr, set+" held binaries") {
			t.Errorf("cairn-mcp with another processor's bin/ = %+v after %d downloads, want the data set's server, no more downloads, and a line on bin/ only", res, rs.Hits(archive))
		}
	}
	if b, err := os.ReadFile(filepath.Join(bin, "cairn-mcp")); err != nil || string(b) != string(foreignELF()) {
		t.Errorf("bin/ was changed (%v)", err)
	}
}

// Where this machine's binaries cannot be had either (no network, no Go), a hook over another
// processor's set exits 0 with a line saying why, as the MCP server does (with exit 1). One line of Cairn's:
// the launcher said it was installing, then the install said it could not, after the shell's
// own "Exec format error" (which no launcher can keep from the user, see hooks/launch).
func TestLaunchBinariesForAnotherProcessorAndNoInstall(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	work, _, pdata := launchSite(t)
	set := foreignSet(t, root, filepath.Join(pdata, "bin-"+pluginVersion(t)))
	env := launchEnv(root, pdata, work, toolDir(t))
	res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 0 || len(lines) != 2 || !strings.HasSuffix(lines[0], "Exec format error") ||
		!strings.HasPrefix(lines[1], "cairn: "+set+" held binaries this machine cannot run") || !strings.Contains(lines[1], "could not be installed (downloading") ||
		!strings.Contains(res.stdout, `{"systemMessage":"Cairn: `+set+` held binaries this machine cannot run`) {
		t.Errorf("SessionStart = %+v, want exit 0, the shell's line and one (the systemMessage too) saying the set cannot run and why no other was installed", res)
	}
	res = runLaunch(t, root, env, initializeLine, "cairn-mcp")
	if res.code != launchFailCode("cairn-mcp") || !strings.Contains(res.stderr, "could not be installed") {
		t.Errorf("cairn-mcp = %+v, want exit 1 and a line saying the binaries could not be installed", res)
	}
}

// foreignRelease is a plugin (the launcher's files) whose release/checksums.txt lists an archive
// of this platform's name that holds another processor's binaries (a release built wrong, or a
// machine whose uname names a processor it cannot run), served on 127.0.0.1.
func foreignRelease(t *testing.T) (root, archive string, rs *releaseServer) {
	t.Helper()
	files := map[string][]byte{}
	for name := range binarySources {
		files[name] = foreignELF()
	}
	return archiveRelease(t, files)
}

// archiveRelease is a plugin (the launcher's files) whose release/checksums.txt lists an archive
// of this platform's name that holds files (mode 0755), served on 127.0.0.1.
func archiveRelease(t *testing.T, files map[string][]byte) (root, archive string, rs *releaseServer) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	root = copyPlugin(t, launcherFiles...)
	archive = release.ArchiveName(pluginVersion(t), release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})
	writeFile(t, filepath.Join(root, "release", "checksums.txt"), fmt.Sprintf("%x  %s\n", sha256.Sum256(buf.Bytes()), archive))
	return root, archive, serveRelease(t, map[string][]byte{archive: buf.Bytes()})
}

// A set just installed that cannot run either (exit 126 again) is not installed over and over:
// the start says so in a line (a hook's systemMessage too) and a hook exits 0 (dash ended with
// exit 126, bash went on past the exec into the lines for a failed install); a later start reads
// the failure where a failed download is kept, and downloads no more.
func TestLaunchInstalledBinariesForAnotherProcessor(t *testing.T) {
	skipOnWindows(t)
	for _, sh := range []string{"/bin/sh", "bash"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			root, archive, rs := foreignRelease(t)
			work, _, pdata := launchSite(t)
			set := filepath.Join(pdata, "bin-"+pluginVersion(t))
			tools, sh := toolDirWithShell(t, sh)
			env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
			cannot := "cairn: " + set + "/cairn-session-start cannot run on this machine"
			res := runProcess(t, time.Minute, "SessionStart", env, work, `{"session_id":"s"}`, sh, "-c", hookCommand(t, "SessionStart"))
			if res.code != 0 || !strings.Contains(res.stderr, cannot) || rs.Hits(archive) != 1 {
				t.Errorf("SessionStart installing another processor's binaries = %+v after %d downloads, want exit 0, one download and a line saying the set cannot run", res, rs.Hits(archive))
			}
			if !strings.Contains(res.stdout, `{"systemMessage":"Cairn: `+set+`/cairn-session-start cannot run on this machine`) {
				t.Errorf("SessionStart installing another processor's binaries = %+v, want the line as its systemMessage too", res)
			}
			// The step that works, as later starts say it: it said the state was not being
			// tracked "until it can", and no step.
			if !strings.Contains(res.stderr, "install Go 1.26 or newer (https://go.dev/dl/) for the launcher to build them for this machine, then start a new session") {
				t.Errorf("SessionStart installing another processor's binaries said %q, want the step: install Go", res.stderr)
			}
			// Later starts read the failure where a failed download is kept, and download no more.
			// The network is not the cause: the line does not send the user there, only to Go.
			res = runProcess(t, time.Minute, "cairn-mcp", env, work, initializeLine, sh, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], set+" cannot run on this machine") || rs.Hits(archive) != 1 ||
				strings.Contains(lines[0], "check the network") || !strings.Contains(lines[0], "install Go") {
				t.Errorf("cairn-mcp over them = %+v after %d downloads, want no more downloads and one line saying the set cannot run and to install Go, not to check the network", res, rs.Hits(archive))
			}
		})
	}
}

// A start that found its data set for another processor runs launch again (cairn_ran), told so
// in CAIRN_LAUNCH_RAN; where another start has installed a fresh set meanwhile, launch execs
// that one without loading install, and when it cannot run either, a hook's line went to
// stderr only: Claude Code shows the user a hook's systemMessage, not its stderr.
func TestLaunchAnotherStartsSetForAnotherProcessor(t *testing.T) {
	skipOnWindows(t)
	for _, sh := range []string{"/bin/sh", "bash"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			fakeSums(t, root)
			work, _, pdata := launchSite(t)
			set := foreignSet(t, root, filepath.Join(pdata, "bin-"+pluginVersion(t)))
			tools, sh := toolDirWithShell(t, sh)
			env := launchEnv(root, pdata, work, tools, "CAIRN_LAUNCH_RAN= data")
			res := runProcess(t, time.Minute, "SessionStart", env, work, `{"session_id":"s"}`, sh, "-c", hookCommand(t, "SessionStart"))
			var out map[string]string
			if res.code != 0 || !strings.Contains(res.stderr, "cairn: "+set+"/cairn-session-start cannot run on this machine") ||
				json.Unmarshal([]byte(res.stdout), &out) != nil || !strings.HasPrefix(out["systemMessage"], "Cairn: "+set+"/cairn-session-start cannot run on this machine") {
				t.Errorf("SessionStart over another start's set for another processor = %+v, want exit 0 and the line on stderr and as the systemMessage", res)
			}
		})
	}
}

// Another processor's set in a data dir mounted read-only (a home shared read-only between
// machines) keeps its stamp: the launcher ran it again, and the user read the shell's "Exec
// format error" twice and rm's "Read-only file system" twice before Cairn's line. The stamp
// that stays is seen at once: the shell's line and Cairn's, a hook's systemMessage too.
func TestLaunchBinariesForAnotherProcessorReadOnly(t *testing.T) {
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	pdata := smallDisk(t, "1m")
	set := foreignSet(t, root, filepath.Join(pdata, "bin-"+pluginVersion(t)))
	if out, err := exec.Command("mount", "-o", "remount,ro", filepath.Dir(pdata)).CombinedOutput(); err != nil {
		t.Skipf("cannot remount the tmpfs read-only: %v: %s", err, out)
	}
	work := t.TempDir()
	env := launchEnv(root, pdata, work, toolDir(t))
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res := launchAs(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.HasSuffix(lines[0], "Exec format error") || !strings.HasPrefix(lines[1], "cairn: "+set+"/"+name+" cannot run on this machine") {
			t.Errorf("%s over a read-only set for another processor = %+v, want the shell's line and Cairn's", name, res)
		}
		if name == "cairn-session-start" && (res.code != 0 || !strings.Contains(res.stdout, `{"systemMessage":"Cairn: `+set+`/cairn-session-start cannot run on this machine`)) {
			t.Errorf("%s = %+v, want exit 0 and the line as its systemMessage", name, res)
		}
		if !strings.Contains(lines[len(lines)-1], "make "+set+" writable for the launcher to install this machine's binaries there, then start a new session") {
			t.Errorf("%s said %q, want the step: make the set writable", name, lines[len(lines)-1])
		}
	}
}

// A set just installed that cannot run here is kept as a failed download is, for later starts
// to say so without downloading it again. Where a directory with something in it (the user's)
// sits at .download-failed-V, the install keeps its failures beside it, in .why; the launcher
// dropped its own, and every later start downloaded the set again. Both keep it in .why.
func TestLaunchInstalledBinariesForAnotherProcessorRecordBeside(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := foreignRelease(t)
	work, _, pdata := launchSite(t)
	record := filepath.Join(pdata, ".download-failed-"+pluginVersion(t))
	writeFile(t, filepath.Join(record, "mine"), "mine\n")
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	for range 2 {
		res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
		if res.code != launchFailCode("cairn-mcp") || !strings.Contains(res.stderr, "cannot run on this machine") || rs.Hits(archive) != 1 {
			t.Errorf("cairn-mcp installing another processor's binaries = %+v after %d downloads, want exit 1, a line saying they cannot run and one download in all", res, rs.Hits(archive))
		}
	}
	if b, err := os.ReadFile(record + ".why"); err != nil || !strings.Contains(string(b), "cannot run on this machine") {
		t.Errorf("%s.why = %q (%v), want the launcher's reason", record, b, err)
	}
	if _, err := os.Stat(filepath.Join(record, "mine")); err != nil {
		t.Errorf("the user's file at the record's name was removed: %v", err)
	}
}
