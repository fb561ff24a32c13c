// Package gittest holds helpers for tests that need a git server: an empty bare repository,
// git daemon on 127.0.0.1, started and stopped by the test.
package gittest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Bare makes an empty bare repository, shared.git in a new temporary directory, and returns
// its path.
func Bare(t testing.TB) string {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "shared.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return bare
}

// Daemon serves every repository under base with git daemon on 127.0.0.1, pushes allowed,
// until the test ends, and returns its address.
func Daemon(t testing.TB, base string) string {
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
		OwnGroup(cmd)
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
					KillGroup(cmd)
					<-done
				})
				return addr
			}
			time.Sleep(20 * time.Millisecond)
		}
		KillGroup(cmd)
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
