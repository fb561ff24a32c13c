//go:build !windows

package engine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A FIFO planted where kept task events are looked for, or as one of them, never blocks the
// hook that looks: it is refused, not opened for a writer that never comes.
func TestKeptClaudeTasksNeverBlockOnAFIFO(t *testing.T) {
	for _, name := range []string{"", "0000000000000000001-1.json"} {
		en := keptEnv(t)
		dir := filepath.Join(en.StateDir(), engine.KeptTasksDir)
		if name != "" {
			noErr(t, os.MkdirAll(dir, 0o700))
		}
		noErr(t, syscall.Mkfifo(filepath.Join(dir, name), 0o600))
		done := make(chan error, 1)
		go func() {
			_, err := en.ApplyKeptClaudeTasks(true, func(engine.ClaudeTask, bool, *engine.Result, error) {})
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a guard against a hang, not a measure
			t.Fatalf("a FIFO at %s blocks the look for kept task events", filepath.Join(dir, name))
		}
	}
}
