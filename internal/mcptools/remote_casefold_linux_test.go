package mcptools_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// caseInsensitiveGit is the LD_PRELOAD library that makes git see the mirror refs as macOS and
// Windows would (gitremote's testdata/casefold.c, built here). It skips the test without a C
// compiler or when git does not take the library.
func caseInsensitiveGit(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the case-insensitive file system shim")
	}
	src, _ := filepath.Abs(filepath.Join("..", "remote", "gitremote", "testdata", "casefold.c"))
	so := filepath.Join(t.TempDir(), "casefold.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src, "-ldl").CombinedOutput(); err != nil {
		t.Skipf("building the shim: %v\n%s", err, out)
	}
	dir := t.TempDir()
	gitIn := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "LD_PRELOAD="+so)
		cmd.Stdin = strings.NewReader("x")
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	gitIn("init", "-q")
	blob := gitIn("hash-object", "-w", "--stdin")
	gitIn("update-ref", "refs/cairn-mirror/probe/Ab", blob)
	if blob == "" || gitIn("rev-parse", "--verify", "-q", "refs/cairn-mirror/probe/aB") != blob {
		t.Skip("git does not load the LD_PRELOAD shim (statically linked?)")
	}
	return so
}

// TestBackgroundSyncTellsCaseTwin: on a clone whose file system ignores case, a workflow id on
// the remote that differs only in case from another is left out of the server's syncs. The
// notice said it holds refs "Cairn did not write" and to "delete them there", which an agent
// could act on against the twin that syncs here; it says they are twins, which one syncs here,
// and advises no deletion.
func TestBackgroundSyncTellsCaseTwin(t *testing.T) {
	preload := caseInsensitiveGit(t)
	bare := bareRepo(t)
	lineOn(t, bare, "Deploy-1")
	// deploy-1 as a Cairn that did not yet refuse twins would have pushed it beside Deploy-1.
	other := bareRepo(t)
	lineOn(t, other, "deploy-1")
	git(t, other, "push", "-q", "file://"+bare, "refs/cairn/wf/deploy-1")

	t.Setenv("LD_PRELOAD", preload)
	_, _, notice := idleServer(t, bare)
	want := "origin holds workflow ids that differ only in case, which this machine's file system cannot keep apart: deploy-1 (twin of Deploy-1, which syncs here). " +
		"They are left out of the syncs, and the other workflows sync as before; cairn sync names the one step that ends each: delete no ref before reading it."
	if !strings.Contains(notice, want) || strings.Contains(notice, "did not write") || strings.Contains(notice, "delete them") {
		t.Errorf("notice %q\nwant it to hold %q", notice, want)
	}
}
