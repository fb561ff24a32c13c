// Package gittest holds helpers for tests that need a git server: an empty bare repository,
// git daemon on 127.0.0.1, started and stopped by the test.
package gittest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// git daemon cannot be handed a listener or say which port it took, so a free port is
	// picked and may be taken by someone else before the daemon binds it. The daemon says
	// "Ready to rumble" (with --verbose) only once it holds its socket, and exits when the
	// bind fails: dialing the port instead could reach whoever took it.
	for try := 0; try < 5; try++ {
		port := freePort(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "daemon", "--verbose", "--export-all", "--enable=receive-pack", "--reuseaddr",
			"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+base, "--informative-errors", base)
		cmd.Stderr = w
		// git daemon forks a child per connection: kill the whole group.
		OwnGroup(cmd)
		err = cmd.Start()
		w.Close()
		if err != nil {
			r.Close()
			t.Fatalf("starting git daemon: %v", err)
		}
		// Read stderr until the daemon is ready, then drain it (each connection logs a line)
		// until every process of the group has gone.
		ready := make(chan bool, 1)
		var said strings.Builder
		go func() {
			defer r.Close()
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				if strings.HasSuffix(sc.Text(), "] Ready to rumble") {
					ready <- true
					io.Copy(io.Discard, r)
					return
				}
				said.WriteString(sc.Text() + "\n")
			}
			ready <- false
		}()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case ok := <-ready:
			if ok {
				t.Cleanup(func() {
					KillGroup(cmd)
					<-done
				})
				return fmt.Sprintf("127.0.0.1:%d", port)
			}
			<-done // lost the port to someone else, or git daemon failed: try again
			if try == 4 {
				t.Fatalf("git daemon did not start: %s", said.String())
			}
		case <-time.After(30 * time.Second):
			KillGroup(cmd)
			<-done
			t.Fatal("git daemon did not say it was ready within 30s")
		}
	}
	panic("unreachable")
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
