package mcptools_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStdioSignalWithStdoutFull: a client that has stopped reading the server's stdout (the
// pipe is full, the server's next answer cannot be written) and then sends SIGINT and SIGTERM,
// as Claude Code does at exit, must see the server exit; it waited for the pipe for ever. What
// it wrote before is whole lines.
func TestStdioSignalWithStdoutFull(t *testing.T) {
	p := newProject(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	// One page: a few answers fill it.
	const pipeSize = 4096
	if _, err := unix.FcntlInt(outW.Fd(), unix.F_SETPIPE_SZ, pipeSize); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcpBinary.get(t))
	cmd.Dir, cmd.Env = p.root, p.env()
	cmd.Stdin, cmd.Stdout = inR, outW
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	defer cmd.Process.Kill()

	// The descriptors, read here: the writer below closes stdin's once the server is gone.
	inFd, outFd := int(inW.Fd()), int(outR.Fd())
	// Lines the server answers itself, each with a parse error, far more than the pipe holds.
	go func() {
		defer inW.Close()
		line := []byte(strings.Repeat("x", 200) + "\n")
		for range 10_000 {
			if _, err := inW.Write(line); err != nil {
				return
			}
		}
	}()
	unread := func(fd int) int {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// stdout has no room for another answer, and the server has stopped reading stdin.
	waitFor(t, func() bool { return unread(outFd) > pipeSize-200 && unread(inFd) > 4096 })

	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("the server did not exit after SIGINT and SIGTERM with its stdout full; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr.String())
	}
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		var resp rpcResponse
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil || resp.Error == nil || resp.Error.Code != -32700 {
			t.Errorf("stdout line %q, want a whole parse error", clip(sc.Text()))
		}
	}
}
