package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestUninstallOnAFullDisk: MEMORY.md could not be rewritten without Cairn's line for a full
// disk, and the step was "run cairn uninstall again to retry", which fails the same way while
// the disk is full, with exit 1, a refusal. It says the disk is full and to free some space
// first, with exit 3; once there is space the same command removes the line and keeps the
// user's. A file system out of inodes with room for data was said to be full; it is said to
// have no inodes.
func TestUninstallOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range noRoomCases("cairn uninstall") {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			durabletest.Mount(t, "tmpfs", p.memory, "tmpfs", 0, tc.opts+",mode=0700", false)
			mustRun(t, p, "", "start", "apex", "uninstall on a full disk")
			mustRun(t, p, "", "transition", "plan")
			index := filepath.Join(p.memory, "MEMORY.md")
			f, err := os.OpenFile(index, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("- the user's own line\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			filler := tc.fill(t, p.memory)
			code, out := p.run("", "uninstall", "--yes")
			if code != 3 || !strings.Contains(out, tc.said) || !strings.Contains(out, tc.step) {
				t.Errorf("uninstall: exit %d\n%s", code, out)
			}
			if err := os.RemoveAll(filler); err != nil {
				t.Fatal(err)
			}
			mustRun(t, p, "", "uninstall", "--yes")
			if b, err := os.ReadFile(index); err != nil || string(b) != "- the user's own line\n" {
				t.Errorf("MEMORY.md after the uninstall: %q %v", b, err)
			}
		})
	}
}

// TestUninstallOverBinariesItCannotRemove: the launcher's binaries on a read-only mount (or left
// by a cairn run with sudo, another user's) were not removed, and the step was "run cairn
// uninstall again to retry", which fails the same way. It says to make them writable first.
func TestUninstallOverBinariesItCannotRemove(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	set := filepath.Join(p.home, ".claude", "plugins", "data", "cairn-cairn", "bin-0.1.0")
	if err := os.MkdirAll(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, "cairn-mcp"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unmount := durabletest.Mount(t, set, set, "", syscall.MS_BIND, "", true)
	code, out := p.run("", "uninstall", "--yes")
	if code == 0 || !strings.Contains(out, "read-only file system") || !strings.Contains(out, "make it writable, then run cairn uninstall again") {
		t.Errorf("uninstall over read-only binaries: exit %d\n%s", code, out)
	}
	unmount()
	mustRun(t, p, "", "uninstall", "--yes")
	if _, err := os.Stat(filepath.Dir(set)); !os.IsNotExist(err) {
		t.Errorf("the data dir after the uninstall: %v", err)
	}
}
