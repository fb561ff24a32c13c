package storetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RaceOptions are the race detector's options for the processes a test starts: no sleep at
// exit. Under -race a process otherwise sleeps a second before it exits, to catch races in
// goroutines still running; races are still reported, and the process still exits 66.
const RaceOptions = "atexit_sleep_ms=0"

// QuietExits gives every process this test binary starts RaceOptions, unless GORACE is set
// already: TestMain calls it before m.Run, in the parent only (the options are read when a
// process starts, so the parent keeps its own).
func QuietExits() {
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", RaceOptions)
	}
}

// ExitedPID is the pid of a process that has exited and been reaped: a client that is gone.
func ExitedPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// Main is a TestMain for a package whose tests start the test binary again and need nothing
// else before m.Run: QuietExits, then the tests.
func Main(m *testing.M) {
	QuietExits()
	os.Exit(m.Run())
}

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
