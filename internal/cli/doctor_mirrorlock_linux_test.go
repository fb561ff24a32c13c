package cli_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestDoctorMirrorLockHeldByAStoppedSync: a cairn sync stopped (Ctrl-Z) while it synced holds
// the clone's mirror lock until it is resumed, and every sync fails on it; cairn doctor said
// the remote was fine. It fails the remote check with the step that resumes the holder.
func TestDoctorMirrorLockHeldByAStoppedSync(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	m := newMachine(t, "file://"+filepath.Join(base, "shared.git"))
	m.must("start", "apex", "stopped sync", "--id", "wf-s")
	m.must("remote", "enable", "--yes")
	holder := durabletest.HeldBySleeper(t, filepath.Join(m.dir, ".git"), ".lock-cairn-mirror")
	if err := holder.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	durabletest.WaitStopped(t, holder.Pid, true)
	code, out, errb := m.cairn("doctor")
	if code == 0 || !strings.Contains(out+errb, "kill -CONT "+strconv.Itoa(holder.Pid)) {
		t.Errorf("doctor beside a stopped sync: exit %d\n%s%s", code, out, errb)
	}
}
