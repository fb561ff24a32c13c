package gitremote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// forge pushes to bare, at ref, one commit whose tree holds record and whose message is msg,
// as anyone with push access to the host could.
func forge(t *testing.T, bare, ref, record, msg string) {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q")
	blob := gitIn(t, work, record, "hash-object", "-w", "--stdin")
	pushCommit(t, work, bare, ref, gitIn(t, work, "100644 blob "+blob+"\trecord\n", "mktree"), msg)
}

// pushCommit makes in the repository work a commit of tree with message msg on parents, and
// force-pushes it to bare at ref.
func pushCommit(t *testing.T, work, bare, ref, tree, msg string, parents ...string) {
	t.Helper()
	args := []string{"-c", "user.name=x", "-c", "user.email=x@example.com", "commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	git(t, work, "push", "-q", "--force", "file://"+bare, gitIn(t, work, msg, args...)+":"+ref)
}

// TestHugeRevisionIsRefused: a ref whose commit claims a revision far past its line's length
// (a forged or corrupted subject) is reported as a broken line; reading it must not size
// anything by the revision it claims, which would crash the process (or exhaust its memory)
// before the line is even read.
func TestHugeRevisionIsRefused(t *testing.T) {
	ctx := bg(t)
	for _, rev := range []string{"9223372036854775807", "4000000000"} {
		t.Run(rev, func(t *testing.T) {
			bare := bareRepo(t)
			forge(t, bare, "refs/cairn/wf/wf-x", `{"revision":1}`, "cairn wf-x r"+rev+"\n")
			b := clone(t, "file://"+bare, gitremote.Refs)
			recs, err := b.Since(ctx, "wf-x", 0)
			if err == nil || !strings.Contains(err.Error(), "wf-x") {
				t.Fatalf("Since on a line claiming r%s = %d records, %v; want an error naming the workflow", rev, len(recs), err)
			}
		})
	}
}

// gitIn runs git in dir with stdin and returns its output, failing the test if it fails.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestProjectHooksDoNotRun: the project's git hooks are not run by Cairn's git commands. A
// reference-transaction hook runs on every ref update git makes, the mirror's included, and
// core.hooksPath often names a directory the repository itself tracks (husky, lefthook), so
// whoever can push code could otherwise have it run by every sync in the background.
func TestProjectHooksDoNotRun(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", "file://"+bare)
	marker := filepath.Join(t.TempDir(), "ran")
	hooks := filepath.Join(dir, "tracked-hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reference-transaction", "pre-push", "post-update", "pre-auto-gc"} {
		script := "#!/bin/sh\necho " + name + " >> '" + marker + "'\n"
		if err := os.WriteFile(filepath.Join(hooks, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "config", "core.hooksPath", hooks)
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "wf-h", 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Heads(ctx); err != nil {
		t.Fatal(err)
	}
	if recs, err := b.Since(ctx, "wf-h", 0); err != nil || len(recs) != 1 {
		t.Fatalf("Since = %d records, %v", len(recs), err)
	}
	if ran, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the project's hooks ran:\n%s", ran)
	}
}
