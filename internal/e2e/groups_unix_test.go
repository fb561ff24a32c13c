//go:build unix

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// TestGroupsDieWithTheTestBinary: a test run stopped part-way leaves nothing the harness
// started running. Interrupted, the test binary kills every group it started, the leader (as
// Claude Code) and what the leader started (its hooks and MCP servers); killed outright
// (Linux), the kernel kills each leader. Before, both lived on: a leader has left the
// terminal's process group, so Ctrl-C never reached it.
func TestGroupsDieWithTheTestBinary(t *testing.T) {
	if script := os.Getenv("CAIRN_E2E_GROUP_CHILD"); script != "" {
		groupChild(t, script)
		return
	}
	cases := []struct {
		name   string
		sig    syscall.Signal
		script string
	}{
		{"interrupted", syscall.SIGINT, "sleep 600 & exec sleep 600"},
		{"terminated", syscall.SIGTERM, "sleep 600 & exec sleep 600"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct {
			name   string
			sig    syscall.Signal
			script string
		}{"killed", syscall.SIGKILL, "exec sleep 600"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Every process of the group holds w: r reads EOF once the last one has gone.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^TestGroupsDieWithTheTestBinary$")
			cmd.Env = append(os.Environ(), "CAIRN_E2E_GROUP_CHILD="+c.script)
			cmd.ExtraFiles = []*os.File{w}
			sc := storetest.StartChild(t, cmd, "the test binary", "ready")
			w.Close()
			var group int
			if !sc.Scan() {
				t.Fatal("the test binary did not name its group")
			}
			if _, err := fmt.Sscan(sc.Text(), &group); err != nil {
				t.Fatalf("the test binary named its group %q", sc.Text())
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			gone := make(chan struct{})
			go func() { io.Copy(io.Discard, r); close(gone) }()
			select {
			case <-gone:
			case <-time.After(30 * time.Second):
				syscall.Kill(-group, syscall.SIGKILL)
				t.Fatalf("a process the harness started (sh -c %q) outlived the test binary's %v", c.script, c.sig)
			}
		})
	}
}

// groupChild starts script as the harness starts Claude Code, with fd 3 passed on, says
// ready and the group's id, and waits to be stopped.
func groupChild(t *testing.T, script string) {
	fd3 := os.NewFile(3, "fd3")
	cmd := exec.CommandContext(context.Background(), "sh", "-c", script)
	cmd.ExtraFiles = []*os.File{fd3}
	ownGroup(cmd)
	if err := startGroup(cmd); err != nil {
		t.Fatal(err)
	}
	fd3.Close()
	fmt.Printf("ready\n%d\n", cmd.Process.Pid)
	time.Sleep(time.Minute)
	t.Fatal("the parent never stopped this test binary")
}
