package gitremote_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
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

// bareRepo makes an empty bare repository and returns its path.
func bareRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared.git")
	git(t, t.TempDir(), "init", "-q", "--bare", dir)
	return dir
}

// clone makes a fresh repository with url as its remote "origin" and a Backend on it, as one
// machine would have.
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

// daemon serves every repository under base with git daemon on 127.0.0.1, pushes allowed,
// until the test ends, and returns its address.
func daemon(t testing.TB, base string) string {
	t.Helper()
	if err := exec.Command("git", "daemon", "-h").Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 129 {
			t.Skipf("git daemon is not available: %v", err)
		}
	}
	for try := 0; try < 5; try++ {
		port := freePort(t)
		var stderr bytes.Buffer
		cmd := exec.Command("git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
			"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+base, "--informative-errors", base)
		cmd.Stderr = &stderr
		// git daemon forks a child per connection: kill the whole group, and do not wait
		// for the children to close the stderr pipe.
		ownGroup(cmd)
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting git daemon: %v", err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				goto retry // lost the port to someone else
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
				c.Close()
				t.Cleanup(func() {
					killGroup(cmd)
					<-done
				})
				return addr
			}
			time.Sleep(20 * time.Millisecond)
		}
		killGroup(cmd)
		<-done
		t.Fatalf("git daemon did not listen within 10s: %s", stderr.String())
	retry:
	}
	t.Fatal("git daemon could not get a port")
	return ""
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
