package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestReadsNeverWaitForTheLock: Claude Code runs `cairn statusline` on every refresh of its
// status bar, and a person runs status or show to see where the work is. When the snapshot
// needs a repair (here it is gone) while another process holds the workflow lock, none of
// them waits for the lock (before: statusline waited out the engine's 3 s, then printed
// nothing; status waited, then said "No active workflow."; show waited, then failed with
// exit 3): each shows what it reads from the journal without the lock, at once. The lock is
// held until the command has ended, so a waiter would be seen waiting.
func TestReadsNeverWaitForTheLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // the start of what it prints
	}{
		{[]string{"statusline"}, "apex · analyze"},
		{[]string{"status"}, "Workflow:    apex-held (apex)"},
		{[]string{"show"}, "Workflow:     apex-held"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			if code, out := p.run("", "start", "apex", "held lock", "--id", "apex-held"); code != 0 {
				t.Fatalf("start: exit %d\n%s", code, out)
			}
			state := filepath.Join(p.root, ".claude", "cairn")
			if err := os.Remove(filepath.Join(state, store.WorkflowFile)); err != nil {
				t.Fatal(err)
			}
			holdLock(t, state, ".lock-workflow")

			out := make(chan string, 1)
			done := make(chan error, 1)
			code := make(chan int, 1)
			go func() {
				c, o := p.run("", tc.args...)
				out <- o
				code <- c
				done <- nil
			}()
			if !durabletest.WaitLockWaiter(filepath.Join(state, ".lock-workflow"), done) {
				t.Fatalf("cairn %s waited for the workflow lock", tc.args[0])
			}
			if o, c := <-out, <-code; c != 0 || !strings.HasPrefix(o, tc.want) {
				t.Fatalf("cairn %s under a held lock: exit %d, printed %q; want exit 0 and what the journal holds, starting %q", tc.args[0], c, o, tc.want)
			}
		})
	}
}
