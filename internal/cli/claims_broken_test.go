//go:build unix

package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestBrokenClaimsLineDoesNotStopTheSync: a claims ref on the remote that cannot be read (a
// forged or corrupted commit) stops no workflow sync of a clone with no claim made offline:
// the workflow is pushed and the claims error said as a warning.
func TestBrokenClaimsLineDoesNotStopTheSync(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	a.must("task", "t1", "running") // a task running here: each sync reads the claims line

	// Anyone with push access to the host replaces the claims ref with a commit cairn did not
	// write.
	gittest.ForgeClaims(t, "file://"+bare, "wf-1")

	a.must("task", "t2", "pending")
	code, out, errb := a.cairn("sync")
	if code != 0 || !strings.Contains(out, "wf-1: pushed") || !strings.Contains(errb, "warning: the task claims could not be synced") {
		t.Fatalf("sync with a broken claims line: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
}

// TestBrokenClaimsLineIsNamedWhenClaiming: a task set running while the claims ref holds a
// commit Cairn did not write is said unclaimed for that reason, with its step, not as a remote
// out of reach (which git fetch origin would show is not so).
func TestBrokenClaimsLineIsNamedWhenClaiming(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	gittest.ForgeClaims(t, "file://"+bare, "wf-1")

	code, _, errb := a.cairn("task", "t1", "running")
	if code != 0 || strings.Contains(errb, "could not be reached") || !strings.Contains(errb, "refs/cairn/claims/wf-1, points at a commit Cairn did not write") {
		t.Fatalf("task running with a broken claims line: exit %d\nstderr %s", code, errb)
	}
	// The warning's step was "run cairn sync, which claims it", and that sync fails the same
	// way for as long as the ref is not Cairn's.
	if code, _, serr := a.cairn("sync"); code == 0 || !strings.Contains(serr, "points at a commit Cairn did not write") {
		t.Fatalf("sync with a broken claims line: exit %d\nstderr %s", code, serr)
	}
	if strings.Contains(errb, "run cairn sync") || !strings.Contains(errb, "no sync claims it until") {
		t.Fatalf("task running with a broken claims line names a sync that fails the same way as its step:\n%s", errb)
	}
}
