package plugintest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A download that fills the data dir's disk failed as "downloading URL failed", and the line
// said to check the network or install Go, neither of which helps: the line says the data dir
// could not take the download, whichever downloader wrote it.
func TestLaunchDownloadIntoAFullDisk(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1<<20))
	}))
	t.Cleanup(srv.Close)
	for _, dl := range []string{"curl", "wget"} {
		t.Run(dl, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			fakeSums(t, root)
			data := smallDisk(t, "64k")
			work := t.TempDir()
			env := launchEnv(root, data, work, toolDirWith(t, dl), "CAIRN_DOWNLOAD_URL="+srv.URL+"/releases")
			wantDiskFull(t, root, env, work, "writing the download into "+data+" failed: is its disk full?", nil)
		})
	}
}

// An archive that fits the data dir's disk but whose binaries do not failed as "unpacking
// ARCHIVE failed", with advice to check the network or install Go: the line says the disk is
// full and to free space there, as for the download.
func TestLaunchUnpackIntoAFullDisk(t *testing.T) {
	files := map[string][]byte{}
	for name := range binarySources {
		files[name] = make([]byte, 256<<10) // 1.25 MB unpacked, about 1 kB packed
	}
	root, archive, rs := archiveRelease(t, files)
	data := smallDisk(t, "256k")
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	wantDiskFull(t, root, env, work, "unpacking the download into "+data+" failed: is its disk full?", func() int { return rs.Hits(archive) })
}

// Binaries that fit the data dir's disk but whose stamp (.checksums, a copy of the plugin's
// release/checksums.txt) does not failed as "cannot write DIR", with advice to check the
// network or install Go: the line says the disk is full and to free space there.
func TestLaunchStampIntoAFullDisk(t *testing.T) {
	files := map[string][]byte{}
	for name := range binarySources {
		files[name] = make([]byte, 16<<10) // 80 kB unpacked
	}
	root, archive, rs := archiveRelease(t, files)
	// 64 kB of checksums: the binaries and the archive fit in 128 kB, the stamp after them not.
	sums := filepath.Join(root, "release", "checksums.txt")
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(b) < 64<<10; i++ {
		b = fmt.Appendf(b, "%064x  cairn_0.0.%d_other_os.tar.gz\n", i, i)
	}
	writeFile(t, sums, string(b))
	data := smallDisk(t, "128k")
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	wantDiskFull(t, root, env, work, "writing the binaries into "+data+" failed: is its disk full?", func() int { return rs.Hits(archive) })
}

// A disk so full that the install lock's mkdir fails (here: out of inodes, as a tmpfs full of
// data still takes directories) was said as a data dir that cannot be written, with advice to
// make it writable: one that can be written is said full, whether the data dir is there or
// its own mkdir failed too.
func TestLaunchLockOnAFullDisk(t *testing.T) {
	for _, made := range []bool{true, false} {
		t.Run(fmt.Sprint("data dir made: ", made), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			data := smallDisk(t, "1m,nr_inodes=16")
			if made {
				if err := os.Mkdir(data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; ; i++ {
				if err := os.Mkdir(filepath.Join(filepath.Dir(data), fmt.Sprint("fill", i)), 0o755); err != nil {
					break
				}
			}
			work := t.TempDir()
			env := launchEnv(root, data, work, toolDir(t))
			wantDiskFull(t, root, env, work, "making the install lock in "+data+" failed: is its disk full?", nil)
		})
	}
}

// smallDisk mounts a tmpfs of size (which may go on with more tmpfs options, ",nr_inodes=N")
// for the test (skipped where that needs root or is refused) and returns the data dir to make on it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return filepath.Join(mnt, "data")
}

// wantDiskFull starts a hook and the MCP server over a data dir whose disk fills: each exits
// as launchFailCode says with one line, line, ending in the step to free space and not sending the user to the
// network; with hits, after one download in all (the MCP server reads the hook's failure).
func wantDiskFull(t *testing.T, root string, env []string, work, line string, hits func() int) {
	t.Helper()
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res := launchAs(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], line) ||
			!strings.Contains(lines[0], "free some space there") || strings.Contains(lines[0], "check the network") {
			t.Errorf("%s: %+v, want exit %d and one line: %s ... free some space there", name, res, launchFailCode(name), line)
		}
		if hits != nil && hits() != 1 {
			t.Errorf("%s: %d downloads, want one", name, hits())
		}
	}
}

// A set the launcher cannot replace (its directory read-only: here a read-only bind mount; a
// set left by a cairn run with sudo is another user's) failed as "cannot write DIR", and the
// line said to install Go, or with Go started a build whose install failed the same way, to
// say only "building them with Go failed" next time. Neither helps: the line says to make the
// directory writable, and no Go build is started. The same for what an install that stopped
// left beside the set (bin-V.tmp), which the next install removes first: where it could not,
// the line said the data directory could not be written, which was not so. The MCP server that
// met the set first said it after rm's own line ("rm: cannot remove ..."): one line, Cairn's.
func TestLaunchOverASetItCannotReplace(t *testing.T) {
	skipOnWindows(t)
	// Either may be first: the other reads its failure. The MCP server's stderr is its log.
	for _, c := range []struct{ left, first, then string }{
		{"", "cairn-session-start", "cairn-mcp"},
		{"", "cairn-mcp", "cairn-session-start"},
		{".tmp", "cairn-session-start", "cairn-mcp"},
		{".tmp", "cairn-mcp", "cairn-session-start"},
	} {
		left := c.left
		t.Run("bin-V"+left+"/"+c.first, func(t *testing.T) {
			root, _, rs := stubRelease(t)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			set := filepath.Join(data, "bin-"+pluginVersion(t))
			ro := set + left
			fakeBinaries(t, ro)
			writeFile(t, filepath.Join(ro, ".checksums"), "0000  an older build\n")
			readOnly(t, ro)
			tools := toolDir(t)
			calls := goThatFails(t, tools, work)
			env := launchEnv(root, data, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
			for _, name := range []string{c.first, c.then} {
				res := launchAs(t, root, env, work, name)
				lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
				if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], "cannot write "+ro+")") || !strings.Contains(lines[0], "make it writable") || strings.Contains(lines[0], "Go") {
					t.Errorf("%s: %+v, want exit %d and one line: cannot write %s ... make it writable", name, res, launchFailCode(name), ro)
				}
			}
			if b, err := os.ReadFile(calls); err == nil {
				t.Errorf("go ran for a set it cannot replace:\n%s", b)
			}
		})
	}
}

// A dead install lock that cannot be removed (left by a start run with sudo, another user's;
// here read-only) was broken again and again, with no wait between and no end: the MCP server
// spun until killed, and a hook until Claude Code's timeout, printing rm's line each round. It
// is said in one line, with the step to make it writable.
func TestLaunchOverADeadLockItCannotRemove(t *testing.T) {
	skipOnWindows(t)
	root, archive, rs := stubRelease(t)
	work, _, data := launchSite(t)
	lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
	writeFile(t, filepath.Join(lock, "pid"), "999999999\n") // no such process
	readOnly(t, lock)
	env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		// A bound for the hang only: either ends in a fraction of it.
		args := []string{"/bin/sh", "-c", hookCommand(t, "SessionStart")}
		if name == "cairn-mcp" {
			args = []string{filepath.Join(root, "hooks", "launch"), name}
		}
		res, _ := runBounded(t, time.Minute, env, work, initializeLine, args[0], args[1:]...)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], "cannot write "+lock+")") || !strings.Contains(lines[0], "make it writable") {
			t.Errorf("%s: %+v, want exit %d and one line: cannot write %s ... make it writable", name, res, launchFailCode(name), lock)
		}
	}
	if n := rs.Hits(archive); n != 0 {
		t.Errorf("%d downloads under a lock another holds, want none", n)
	}
}

// stubRelease is archiveRelease of binaries that do nothing: for the tests that show no
// download or install happens, which need no build of the real release (minutes under load).
func stubRelease(t *testing.T) (root, archive string, rs *releaseServer) {
	t.Helper()
	files := map[string][]byte{}
	for name := range binarySources {
		files[name] = []byte("#!/bin/sh\n")
	}
	return archiveRelease(t, files)
}

// A failure record the MCP server cannot rewrite (another user's .download-failed-V, from a
// start run with sudo; here read-only), older than the minute it is read for, had the shell's
// own line ("cannot create ...: Read-only file system") said before Cairn's. One line, Cairn's.
func TestLaunchOverAFailureRecordItCannotRewrite(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	work, _, data := launchSite(t)
	record := filepath.Join(data, ".download-failed-"+pluginVersion(t))
	writeFile(t, record, "an old failure\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(record, old, old); err != nil {
		t.Fatal(err)
	}
	readOnly(t, record)
	env := launchEnv(root, data, work, toolDir(t))
	res := launchAs(t, root, env, work, "cairn-mcp")
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "cairn: ") || !strings.Contains(lines[0], "could not be installed (downloading") {
		t.Errorf("cairn-mcp: %+v, want exit 1 and Cairn's one line: could not be installed (downloading ...", res)
	}
}

// A build log Go's output cannot go to (another user's build-V.log, from a start run with
// sudo; here read-only) failed every build before go ran, and the line said the build failed
// and to see that log, which held another build's output; a hook said it was building. It is
// said before any build, with the step to make it writable, and go does not run.
func TestLaunchOverABuildLogItCannotWrite(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	work, _, data := launchSite(t)
	log := filepath.Join(data, "build-"+pluginVersion(t)+".log")
	writeFile(t, log, "another build's output\n")
	readOnly(t, log)
	tools := toolDir(t)
	calls := goThatFails(t, tools, work)
	env := launchEnv(root, data, work, tools)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res := launchAs(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], "cannot write its log, "+log) || !strings.Contains(lines[0], "make it a writable file") {
			t.Errorf("%s: %+v, want exit %d and one line: cannot write %s ... make it a writable file", name, res, launchFailCode(name), log)
		}
	}
	waitUnlocked(t, data)
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("go ran with a build log it cannot write:\n%s", b)
	}
}

// readOnly bind-mounts path over itself read-only for the test: what another user's file or
// directory is to this one (left by a start run with sudo). Skipped where that needs root.
func readOnly(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("a read-only bind mount needs root on Linux")
	}
	for _, args := range [][]string{{"--bind", path, path}, {"-o", "remount,ro,bind", path}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Skipf("cannot mount %s read-only: %v: %s", path, err, out)
		}
		t.Cleanup(func() { exec.Command("umount", path).Run() })
	}
}

// goThatFails puts a go into tools (a toolDir) that notes each call in the file it returns
// (under dir) and fails: a test sees whether the launcher ran go at all.
func goThatFails(t *testing.T, tools, dir string) (calls string) {
	t.Helper()
	calls = filepath.Join(dir, "go-calls")
	writeFile(t, filepath.Join(tools, "go"), "#!/bin/sh\necho \"$*\" >>"+calls+"\nexit 1\n")
	if err := os.Chmod(filepath.Join(tools, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	return calls
}

// A build log that cannot be made on a disk out of space (the install lock took its last
// inode) ended the MCP server's launcher there, by dash's exit 2 for a failed ': >LOG', with
// the shell's own line and the install lock left held. It is said in Cairn's one line, with
// the step to free space, and go does not run.
func TestLaunchBuildLogOnAFullDisk(t *testing.T) {
	root := copyPlugin(t, launcherFiles...)
	data := smallDisk(t, "1m,nr_inodes=32")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	// A download that failed within the minute: the server reads why, and builds.
	writeFile(t, filepath.Join(data, ".download-failed-"+pluginVersion(t)), "downloading http://127.0.0.1:1/releases failed\n")
	leaveInodes(t, data, 1)
	work := t.TempDir()
	tools := toolDir(t)
	calls := goThatFails(t, tools, work)
	env := launchEnv(root, data, work, tools)
	res := launchAs(t, root, env, work, "cairn-mcp")
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "cairn: ") || !strings.Contains(lines[0], "build-"+pluginVersion(t)+".log") ||
		!strings.Contains(lines[0], "free some space there") {
		t.Errorf("cairn-mcp: %+v, want exit 1 and one line: ... its log ... free some space there", res)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("go ran with no log to write to:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(data, ".install-lock-"+pluginVersion(t))); err == nil {
		t.Error("the install lock was left held")
	}
}

// leaveInodes fills the disk of data (a smallDisk made) with directories beside it until n
// inodes are left.
func leaveInodes(t *testing.T, data string, n int) {
	t.Helper()
	var made []string
	for i := 0; ; i++ {
		d := filepath.Join(filepath.Dir(data), fmt.Sprint("fill", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			break
		}
		made = append(made, d)
	}
	if len(made) < n {
		t.Fatalf("the disk took %d directories, fewer than the %d inodes to leave", len(made), n)
	}
	for _, d := range made[len(made)-n:] {
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
}

// The directory a download goes into (bin-V.tmp) that cannot be made on a disk out of space
// (the install lock took its last inode) was said as "cannot write DIR/bin-V.tmp", with the
// step to make it writable, which it is: the line says the disk is full and to free space.
// The same where that directory took the last inode and the file curl writes the server's
// answer code into (bin-V.tmp/.http) could not be made: curl never ran, and the shell's own
// line ("cannot create ...") came before "downloading URL failed", with the step to check the
// network.
func TestLaunchDownloadDirOnAFullDisk(t *testing.T) {
	for _, tc := range []struct {
		name string
		left int // inodes left for the install: the lock, its pid and start, bin-V.tmp
	}{
		{"the directory", 1},
		{"the answer code's file", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, archive, rs := releasedAndServed(t)
			data := smallDisk(t, "1m,nr_inodes=32")
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			leaveInodes(t, data, tc.left)
			work := t.TempDir()
			env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
			res := launchAs(t, root, env, work, "cairn-mcp")
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			if res.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "writing the download into "+data+" failed: is its disk full?") ||
				!strings.Contains(lines[0], "free some space there") {
				t.Errorf("cairn-mcp: %+v, want exit 1 and one line: writing the download into %s failed: is its disk full? ... free some space there", res, data)
			}
			if n := rs.Hits(archive); n != 0 {
				t.Errorf("%d downloads into a disk with no room for them, want none", n)
			}
		})
	}
}

// Where no start time can be told, the install lock's holder beats its alive file
// (cairn_beat). On a disk out of inodes once the lock and its pid took the last ones, that
// file's redirect failed before its 2>/dev/null was in place: the shell's own line ("cannot
// create .../alive") came before Cairn's.
func TestLaunchBeatOnAFullDisk(t *testing.T) {
	wrap := noStartTimes(t)
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	data := smallDisk(t, "1m,nr_inodes=32")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	leaveInodes(t, data, 2) // the lock and its pid
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t))
	res := runProcess(t, 2*time.Minute, "cairn-mcp without start times", env, work, initializeLine, wrap[0], append(wrap[1:], filepath.Join(root, "hooks", "launch"), "cairn-mcp")...)
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "writing the download into "+data+" failed: is its disk full?") {
		t.Errorf("cairn-mcp: %+v, want exit 1 and one line: writing the download into %s failed: is its disk full? ...", res, data)
	}
}

// A Go build whose set cannot be put in place was said as "building them failed; see LOG", a
// log that says nothing of why:
//   - one that fills the data dir's disk leaves no room in its log for go's complaint, nor for
//     the line that marks the build failed, and the MCP server's launcher printed the shell's
//     own line ("echo: I/O error") first;
//   - one over a set it cannot replace (read-only; another user's, left by a start run with
//     sudo), after a download that failed.
//
// Each says why in Cairn's one line, with the step that helps; the log says why too, where a
// hook's next start sends the user (a hook leaves the build to the background).
func TestLaunchBuildThatCannotLand(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		name  string
		disk  bool   // the data dir is on a small disk
		build string // fakeGo's build
		ro    bool   // bin-V is there, read-only
		want  []string
	}{
		{"disk full", true, `cat /dev/zero >"$(dirname "$out")/../../../filler" 2>/dev/null; echo "go: writing $out: no space left on device" >&2; exit 1`,
			false, []string{"cannot write its log", "is its disk full?", "free some space there"}},
		{"set read-only", false, `printf '#!/bin/sh\n' >"$out" && chmod +x "$out"`,
			true, []string{"cannot write ", "make it writable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			if tc.disk {
				data = smallDisk(t, "256k")
			}
			// A download that failed within the minute: the server reads why, and builds.
			writeFile(t, filepath.Join(data, ".download-failed-"+pluginVersion(t)), "downloading http://127.0.0.1:1/releases failed\n")
			set := filepath.Join(data, "bin-"+pluginVersion(t))
			if tc.ro {
				fakeBinaries(t, set)
				writeFile(t, filepath.Join(set, ".checksums"), "0000  an older build\n")
				readOnly(t, set)
				tc.want[0] += set + ")"
			}
			tools := toolDir(t)
			fakeGo(t, tools, tc.build+"\n")
			env := launchEnv(root, data, work, tools)
			res := launchAs(t, root, env, work, "cairn-mcp")
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			ok := res.code == 1 && len(lines) == 1 && strings.HasPrefix(lines[0], "cairn: ")
			for _, w := range tc.want {
				ok = ok && strings.Contains(lines[0], w)
			}
			if !ok {
				t.Errorf("cairn-mcp: %+v, want exit 1 and one line: ... %s", res, strings.Join(tc.want, " ... "))
			}
			if tc.ro {
				log, err := os.ReadFile(filepath.Join(data, "build-"+pluginVersion(t)+".log"))
				if want := "cairn: cannot write " + set + "\ncairn: this build failed.\n"; err != nil || !strings.HasSuffix(string(log), want) {
					t.Errorf("the build log holds %q (%v), want it to end in %q", log, err, want)
				}
			}
		})
	}
}
