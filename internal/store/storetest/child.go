package storetest

import (
	"bufio"
	"fmt"
	"os/exec"
	"testing"
)

// StartChild starts cmd (the test binary run again as a writer, its stdout not yet set) and
// waits for the first line it writes, which must be ready: otherwise it kills and reaps the
// child and fails, naming it as what and adding its stderr when cmd.Stderr is a
// strings.Builder or another fmt.Stringer. The scanner returned reads the child's later lines.
func StartChild(t testing.TB, cmd *exec.Cmd, what, ready string) *bufio.Scanner {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != ready {
		cmd.Process.Kill()
		cmd.Wait()
		stderr := ""
		if s, ok := cmd.Stderr.(fmt.Stringer); ok {
			stderr = ": " + s.String()
		}
		t.Fatalf("%s did not start (%q, want %q)%s", what, sc.Text(), ready, stderr)
	}
	return sc
}
