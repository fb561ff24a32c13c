package gitremote_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// git runs git in dir and fails the test if it fails.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func bareRepo(t testing.TB) string { return gittest.Bare(t) }

// clone makes a fresh repository with url as its remote "origin" and a Backend on it, as one
// machine would have.
func daemon(t testing.TB, base string) string { return gittest.Daemon(t, base) }

func clone(t testing.TB, url string, layout gitremote.Layout) *gitremote.Backend {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", url)
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Layout: layout, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scaled returns full when CAIRN_REMOTE_FULL is set and small otherwise, so CI stays quick and
// the full counts are one variable away.
func scaled(small, full int) int {
	if os.Getenv("CAIRN_REMOTE_FULL") != "" {
		return full
	}
	return small
}

var _ remote.Backend = (*gitremote.Backend)(nil)

func bg(t testing.TB) context.Context {
	// Full counts on a loaded 2-core machine take about 5 minutes a seed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(scaled(5, 30))*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
