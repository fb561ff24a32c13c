package cli_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptAfterClaimChangesNothing: with sharing on, Ctrl-C (or SIGTERM) on cairn task
// running once its claim was pushed, while it waited for the workflow lock, still set the task
// running once the lock was free, and printed so, and only then ended by the signal. It ends
// at once, as without sharing, the task not changed; the next sync releases the claim.
func TestInterruptAfterClaimChangesNothing(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ms := team(t, "file://"+bareRepo(t)+"/shared.git", 2, nil)
		a, b := ms[0], ms[1]
		// Waiting for the lock, which it takes only to set the task once it is claimed.
		cmd, out, unlock := waitingForTheLock(t, filepath.Join(a.dir, ".claude", "cairn"), a.dir, a.env, "task", "t1", "running")
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { cmd.Wait(); close(ended) }()
		select { // the lock is let go well before the 3 s its wait gives up after
		case <-ended:
		case <-time.After(2 * time.Second):
		}
		unlock()
		<-ended
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig || out.Len() > 0 || a.taskStatus("t1") != "" {
			t.Fatalf("cairn task sent %v after its claim: ended %v, printed %q, t1 is %q here; want ended by the signal, nothing printed, t1 not on record", sig, cmd.ProcessState, out.String(), a.taskStatus("t1"))
		}
		if code, _, errb := b.cairn("task", "t1", "running"); code != 1 || !strings.Contains(errb, "is held by "+a.owner()) {
			t.Fatalf("before the interrupted machine synced, the other: exit %d, stderr %q; want t1 held (the claim was pushed)", code, errb)
		}
		a.must("sync")
		b.must("task", "t1", "running") // released by that sync
	}
}
