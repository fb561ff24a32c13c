//go:build unix

package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
)

// TestRemoteStatusAfterFailedSync: a sync that fetched the remote's line (another clone moved
// it on) and then failed here (the workflow lock was held) leaves this clone's change
// unpushed; remote status says so on both its lines. Before, its second line counted from the
// fetched head and said "0 unpushed" under a first line saying "1 change not pushed".
func TestRemoteStatusAfterFailedSync(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	work := filepath.Dir(dir)
	bare, other := filepath.Join(work, "shared.git"), filepath.Join(work, "other")
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "--bare", bare)
	for _, d := range []string{dir, other} {
		git("init", "-q", d)
		git("-C", d, "remote", "add", "origin", "file://"+bare)
	}
	oenv := append(append([]string{}, env...), "CLAUDE_PROJECT_DIR="+other)
	run(t, dir, env, "remote", "enable")
	run(t, dir, env, "start", "debug", "x", "--id", "wf-1")
	run(t, dir, env, "sync")
	run(t, other, oenv, "remote", "enable")
	run(t, other, oenv, "sync")
	run(t, other, oenv, "vars", "set", "REVIEW_BY", "bob")
	run(t, other, oenv, "vars", "set", "REVIEW_NOTE", "x")
	run(t, other, oenv, "sync")
	run(t, dir, env, "vars", "set", "REVIEW_BY", "ann")

	d, err := durable.OpenDir(filepath.Join(dir, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.Lock(".lock-workflow", 0)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := exitOf(t, cairnCmd(t, dir, env, "sync"))
	unlock()
	d.Close()
	if code == 0 || !strings.Contains(stderr, ".lock-workflow is locked") {
		t.Fatalf("sync under a held lock: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := exitOf(t, cairnCmd(t, dir, env, "remote", "status"))
	if code != 0 || !strings.Contains(stdout, "shared via origin: synced just now, 1 change not pushed\n") ||
		!strings.Contains(stdout, "remote origin: wf-1 at r2 here, r3 on the remote (last sync ") || !strings.HasSuffix(stdout, "; 1 unpushed\n") {
		t.Fatalf("remote status: exit %d\n%s%s", code, stdout, stderr)
	}
}
