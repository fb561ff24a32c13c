package engine_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestDoctorMemoryLockHeldByAStoppedProcess: a Cairn process stopped (Ctrl-Z, SIGSTOP) while
// it wrote auto-memory holds the memory lock until it is resumed, so every L2 line and
// learning fails; cairn doctor said "ok" for the auto-memory lock. It fails the check with
// the step that resumes the holder.
func TestDoctorMemoryLockHeldByAStoppedProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	noErr(t, os.MkdirAll(e.memoryDir(), 0o700))
	holder := durabletest.HeldBySleeper(t, e.memoryDir(), ".cairn-memory.lock")
	noErr(t, holder.Signal(syscall.SIGSTOP))
	durabletest.WaitStopped(t, holder.Pid, true)
	c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory lock")
	if c == nil || c.OK || !strings.Contains(c.Fix, "kill -CONT "+strconv.Itoa(holder.Pid)) || !strings.Contains(c.Detail, ".cairn-memory.lock") {
		t.Fatalf("doctor says %+v, want the step that resumes pid %d", c, holder.Pid)
	}
}
