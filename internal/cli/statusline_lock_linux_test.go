package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestStatuslineNeverWaitsForTheLock: Claude Code runs `cairn statusline` on every refresh
// of its status bar. When the snapshot needs a repair (here it is gone) while another process
// holds the workflow lock, the status line must not wait for the lock (before: it waited out
// the engine's 3 s, then printed nothing); it shows what it reads without it at once. The
// lock is held until the command has ended, so a waiter would be seen waiting.
func TestStatuslineNeverWaitsForTheLock(t *testing.T) {
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
	go func() {
		_, o := p.run("", "statusline")
		out <- o
		done <- nil
	}()
	if !durabletest.WaitLockWaiter(filepath.Join(state, ".lock-workflow"), done) {
		t.Fatal("cairn statusline waited for the workflow lock")
	}
	if o := <-out; !strings.HasPrefix(o, "apex · analyze") {
		t.Fatalf("cairn statusline under a held lock printed %q, want the status line read from the journal", o)
	}
}
