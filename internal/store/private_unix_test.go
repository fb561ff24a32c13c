//go:build unix

package store_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/vars"
)

// A state directory open to others' writes that belongs to another user cannot be made
// private by this one: its chmod fails (EPERM), and so would the "chmod 700 it" the refusal
// used to give. The refusal says whose directory it is and the step that works. Run as root,
// which opens the directory as another user (nobody) in a child.
func TestPrivateDirOfAnotherUser(t *testing.T) {
	if dir := os.Getenv("CAIRN_TEST_OPEN_AS_OTHER"); dir != "" {
		s, err := store.Open(dir)
		if err == nil {
			s.Close()
		}
		fmt.Print(err)
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to open the directory as another user")
	}
	base, err := os.MkdirTemp("", "cairn-private")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "cairn")
	bin := filepath.Join(base, "store.test")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{base, dir} {
		if err := os.Chmod(d, map[bool]os.FileMode{true: 0o777, false: 0o755}[d == dir]); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestPrivateDirOfAnotherUser$")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_OPEN_AS_OTHER="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("the child: %v: %s", err, got)
	}
	msg := string(got)
	if want := "belongs to uid 0, not to this user (uid 65534)"; !strings.Contains(msg, want) || strings.HasSuffix(msg, "chmod 700 it") {
		t.Errorf("open as another user: %q; want whose it is (%q) and a step that works", msg, want)
	}
	if want := "sudo chown -R 65534 " + vars.Quote(dir); !strings.Contains(msg, want) {
		t.Errorf("open as another user: %q; want the step %q", msg, want)
	}
}
