package durabletest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// ProcStat returns process pid's command name and state letter (R, S, T, Z, ...) as
// /proc/PID/stat says them, ok false where /proc has no such process.
func ProcStat(pid int) (comm, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// The state follows the command's name in parentheses, which may itself hold ") ".
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if err != nil || open < 0 || end < open || end+2 >= len(b) {
		return "", "", false
	}
	return string(b[open+1 : end]), string(b[end+2]), true
}

// WaitProcState waits until process pid runs the command comm ("" for any) in one of states
// (state letters, "S" or "RS"), as /proc says, for as long as a loaded machine may take (a
// minute), and fails t if it never does; a receive from done (nil for none) fails it at
// once: the process ended first. It polls, every millisecond: nothing tells when a process
// goes to sleep (for a child's stop and continue, and any process's end, see WaitStopped and
// WaitGone).
func WaitProcState(t testing.TB, pid int, comm, states string, done <-chan error) {
	t.Helper()
	var got string
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		c, s, ok := ProcStat(pid)
		if ok && (comm == "" || c == comm) && strings.Contains(states, s) {
			return
		}
		got = fmt.Sprintf("%s in state %q (/proc has it: %t)", c, s, ok)
		select {
		case err := <-done:
			t.Fatalf("pid %d ended before it was in state %q: %v", pid, states, err)
		case <-time.After(time.Millisecond):
		}
	}
	t.Fatalf("pid %d is not %s in state %q after a minute: %s", pid, comm, states, got)
}
