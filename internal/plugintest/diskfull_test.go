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
)

// A download that fills the data dir's disk failed as "downloading URL failed", and the line
// said to check the network or install Go, neither of which helps: the line says the data dir
// could not take the download, whichever downloader wrote it.
func TestLaunchDownloadIntoAFullDisk(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1<<20))
	}))
	t.Cleanup(srv.Close)
	for _, dl := range []string{"curl", "wget"} {
		t.Run(dl, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			fakeSums(t, root)
			mnt := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
				t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", mnt).Run() })
			data := filepath.Join(mnt, "data")
			work := t.TempDir()
			env := launchEnv(root, data, work, toolDirWith(t, dl), "CAIRN_DOWNLOAD_URL="+srv.URL+"/releases")
			for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
				res, _ := launchTimed(t, root, env, work, name)
				lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
				if res.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "writing the download into "+data+" failed: is its disk full?") ||
					strings.Contains(lines[0], "check the network") {
					t.Errorf("%s: %+v, want exit 0 and one line saying the data dir could not take the download", name, res)
				}
			}
		})
	}
}

// An archive that fits the data dir's disk but whose binaries do not failed as "unpacking
// ARCHIVE failed", with advice to check the network or install Go: the line says the disk is
// full and to free space there, as for the download.
func TestLaunchUnpackIntoAFullDisk(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
	files := map[string][]byte{}
	for name := range binarySources {
		files[name] = make([]byte, 256<<10) // 1.25 MB unpacked, about 1 kB packed
	}
	root, archive, rs := archiveRelease(t, files)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	data := filepath.Join(mnt, "data")
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res, _ := launchTimed(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "unpacking the download into "+data+" failed: is its disk full?") ||
			!strings.Contains(lines[0], "free some space there") || strings.Contains(lines[0], "check the network") || rs.Hits(archive) != 1 {
			t.Errorf("%s: %+v after %d downloads, want exit 0, one download (the MCP server reads the hook's failure) and one line saying the data dir's disk is full", name, res, rs.Hits(archive))
		}
	}
}

// Binaries that fit the data dir's disk but whose stamp (.checksums, a copy of the plugin's
// release/checksums.txt) does not failed as "cannot write DIR", with advice to check the
// network or install Go: the line says the disk is full and to free space there.
func TestLaunchStampIntoAFullDisk(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
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
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	data := filepath.Join(mnt, "data")
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res, _ := launchTimed(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if res.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "writing the binaries into "+data+" failed: is its disk full?") ||
			!strings.Contains(lines[0], "free some space there") || strings.Contains(lines[0], "check the network") || rs.Hits(archive) != 1 {
			t.Errorf("%s: %+v after %d downloads, want exit 0, one download and one line saying the data dir's disk is full", name, res, rs.Hits(archive))
		}
	}
}
