//go:build unix

package cairn

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakefileBuildsWithoutWorkspace: every Makefile target that builds runs go with
// GOWORK=off, as the launcher's fallback build and the release do, so a go.work above the
// checkout neither breaks the build nor swaps in other modules. A stand-in go records what
// it was run with (and makes the file it was asked for, so make build goes on).
func TestMakefileBuildsWithoutWorkspace(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "go.log")
	fake := filepath.Join(dir, "go")
	script := `#!/bin/sh
echo "GOWORK=${GOWORK-unset} $*" >>` + log + `
while [ $# -gt 0 ]; do
	if [ "$1" = -o ]; then mkdir -p "$(dirname "$2")" && : >"$2"; fi
	shift
done
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "build", "dist", "checksums", "dist-check", "GO="+fake, "BIN="+filepath.Join(dir, "bin"))
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work")) // a workspace the user chose
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 8 {
		t.Fatalf("go ran %d times, want 5 builds and 3 dist runs:\n%s", len(lines), data)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "GOWORK=off ") {
			t.Errorf("go ran without GOWORK=off: %s", l)
		}
	}
}

// TestMakefileBuildReplacesADirectoryAtABinary: a directory at bin/cairn-stop, or a link at it
// to a directory elsewhere, took make build's binary inside it (mv into a directory), so
// doctor's step for it, make build, left the hooks failing, or wrote where the link led.
func TestMakefileBuildReplacesADirectoryAtABinary(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "go")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n\tif [ \"$1\" = -o ]; then mkdir -p \"$(dirname \"$2\")\" && echo built >\"$2\"; fi\n\tshift\ndone\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, elsewhere := filepath.Join(dir, "bin"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{filepath.Join(bin, "cairn-stop"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(bin, "cairn-event")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "build", "GO="+fake, "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, b := range []string{"cairn-stop", "cairn-event"} {
		if fi, err := os.Lstat(filepath.Join(bin, b)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("after make build, bin/%s is %v (%v), want the binary", b, fi, err)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) > 0 {
		t.Errorf("make build wrote into %s, where the link led: %v", elsewhere, ents)
	}
}

// TestMakefileBuildOverAFIFOStamp: a FIFO at bin/.checksums (the launcher passes over such a
// set, and doctor's step for it is make build) hung make build: cp opened it to write and
// waited for a reader. The stamp is written aside and renamed into place.
func TestMakefileBuildOverAFIFOStamp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "go")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n\tif [ \"$1\" = -o ]; then mkdir -p \"$(dirname \"$2\")\" && echo built >\"$2\"; fi\n\tshift\ndone\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(bin, ".checksums"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The bound only turns the hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "build", "GO="+fake, "BIN="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v (hangs: %v)\n%s", err, ctx.Err() != nil, out)
	}
	want, _ := os.ReadFile("release/checksums.txt")
	if got, err := os.ReadFile(filepath.Join(bin, ".checksums")); err != nil || string(got) != string(want) {
		t.Errorf("bin/.checksums = %q (%v), want release/checksums.txt", got, err)
	}
}

// TestMakefileTestFailsOnEveryPart: make test runs lint, the full-size secrets run and the
// release check beside the test run; a failure of any part (or of the tests) fails make test,
// names the part and shows its output, and every other part still runs. A stand-in go fails
// the command whose arguments hold $FAIL, and .ci/install-claude.sh is a stand-in too.
func TestMakefileTestFailsOnEveryPart(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "go.log")
	fake := filepath.Join(dir, "go")
	script := `#!/bin/sh
echo "$*" >>` + log + `
case " $* " in *" $FAIL "*) echo "go $*: failed here"; exit 1;; esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, ".ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".ci", "install-claude.sh"), []byte("echo /opt/claude\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "Makefile"), makefile, 0o644); err != nil {
		t.Fatal(err)
	}
	all := []string{"mod tidy -diff", "vet ./...", "tool staticcheck ./...", "test -race -count=1 -timeout 30m ./...",
		"test -count=1 ./internal/secrets/", "run ./internal/release/dist -out dist -check"}
	for _, fail := range append([]string{""}, all[1:]...) {
		t.Run(fail, func(t *testing.T) {
			os.Remove(log)
			cmd := exec.Command("make", "test", "GO="+fake)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "FAIL="+fail)
			out, err := cmd.CombinedOutput()
			if (err != nil) != (fail != "") {
				t.Fatalf("make test with go %q failing: %v, want failure %v\n%s", fail, err, fail != "", out)
			}
			if fail != "" && !strings.Contains(string(out), "go "+fail+": failed here") {
				t.Errorf("make test does not show the failing part's output:\n%s", out)
			}
			if fail != "" && !strings.Contains(string(out), "make test: ") {
				t.Errorf("make test does not say which part failed:\n%s", out)
			}
			ran, _ := os.ReadFile(log)
			for _, c := range all {
				if !strings.Contains(string(ran), c) && (fail == "" || !strings.HasPrefix(fail, "vet") || !strings.Contains(c, "staticcheck")) {
					t.Errorf("go %s did not run:\n%s", c, ran)
				}
			}
		})
	}
}
