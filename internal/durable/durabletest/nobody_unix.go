//go:build unix

package durabletest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// NobodyUID is the user AsNobody runs a child as.
const NobodyUID = 65534

// AsNobody gives, to a test run as root (else skipped), a directory base that the user nobody
// (uid 65534) may enter, and run, which runs this test again as nobody, from a copy of the test
// binary in base, with env added, and returns what it printed: the test, seeing env set, does
// the child's part and exits.
func AsNobody(t *testing.T) (base string, run func(env string) string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run as another user")
	}
	base, err := os.MkdirTemp("", "cairn-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "test.bin")
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
	runTest := "-test.run=^" + strings.Split(t.Name(), "/")[0] + "$"
	return base, func(env string) string {
		cmd := exec.Command(bin, runTest)
		cmd.Env = append(os.Environ(), env)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: NobodyUID, Gid: NobodyUID}}
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("the child: %v: %s", err, got)
		}
		return string(got)
	}
}
