//go:build unix

package cli_test

import (
	"strings"
	"testing"
)

// TestTaskRunningBeforeSharingIsClaimed: a task set running here before cairn remote enable
// was never claimed: another machine that pulled the workflow set it running too (two
// machines on one task), and this machine's own reports took it as another machine's. The
// first sync after the enable now claims it, as it does a claim made offline.
func TestTaskRunningBeforeSharingIsClaimed(t *testing.T) {
	t.Parallel()
	file, _ := sharedRepo(t)
	a, b := newMachine(t, file), newMachine(t, file)
	a.must("start", "apex", "claims", "--id", "wf-1")
	a.must("task", "t1", "running")
	a.must("remote", "enable", "--yes")
	a.must("sync")
	b.must("remote", "enable", "--yes")
	b.must("sync")
	if s := b.taskStatus("t1"); s != "running" {
		t.Fatalf("t1 is %q on B after its sync, want running (A's run)", s)
	}
	code, _, errb := b.cairn("task", "t1", "running")
	if code == 0 || !strings.Contains(errb, "task t1 is held by "+a.owner()) {
		t.Fatalf("B set running t1, which A runs since before sharing: exit %d, stderr %q", code, errb)
	}
	// A clone that pulled A's run, then switched sharing off and on again, does not take it
	// as its own: its sync would have set it back to pending, A holding it.
	c := newMachine(t, file)
	c.must("remote", "enable", "--yes")
	c.must("sync")
	c.must("remote", "disable")
	c.must("remote", "enable", "--yes")
	c.must("sync")
	if s := c.taskStatus("t1"); s != "running" {
		t.Fatalf("t1 is %q on C, enabled again after pulling A's run, want running", s)
	}
	a.must("task", "t1", "done")
}
