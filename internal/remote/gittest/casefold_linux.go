package gittest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CaseFold returns the path of a library that, loaded into git with LD_PRELOAD, makes it see
// the mirror refs (refs/cairn-mirror/) as macOS and Windows would: names looked up without
// case, kept with the case they were made with (testdata/casefold.c, built here). It skips the
// test without a C compiler or when git does not take the library.
func CaseFold(t testing.TB) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the case-insensitive file system shim")
	}
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "testdata", "casefold.c")
	so := filepath.Join(t.TempDir(), "casefold.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src, "-ldl").CombinedOutput(); err != nil {
		t.Skipf("building the shim: %v\n%s", err, out)
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "LD_PRELOAD="+so)
		cmd.Stdin = strings.NewReader("x")
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	blob := git("hash-object", "-w", "--stdin")
	git("update-ref", "refs/cairn-mirror/probe/Ab", blob)
	if blob == "" || git("rev-parse", "--verify", "-q", "refs/cairn-mirror/probe/aB") != blob {
		t.Skip("git does not load the LD_PRELOAD shim (statically linked?)")
	}
	return so
}
