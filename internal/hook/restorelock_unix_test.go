//go:build unix

package hook_test

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
)

// TestSessionStartSaysWhoHoldsTheMarkLock: a session start that found the lock of Cairn's
// memory mark held by another Cairn process (here a stopped one) logged "auto-memory
// consolidation holds its lock", with no consolidation anywhere; it names the lock's holder.
func TestSessionStartSaysWhoHoldsTheMarkLock(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("a stopped process is told through /proc")
	}
	getenv, state := startedProject(t, "apex-mark")
	en, err := engine.Open(engine.Config{Getenv: getenv, SessionID: "s1", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := en.Transition(engine.TransitionRequest{To: "plan"}); err != nil { // writes and marks Cairn's line
		t.Fatal(err)
	}
	en.Close()
	mem := getenv("CAIRN_MEMORY_DIR")
	if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- [Prefs](prefs.md) — tabs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid := durabletest.StoppedHolder(t, state, ".lock-l2-mark")
	var stderr bytes.Buffer
	// A short deadline: the wait for a held lock is what is left of it.
	short := func(k string) string { return cmp.Or(map[string]string{hook.EnvDeadline: "400ms"}[k], getenv(k)) }
	hook.SessionStart(strings.NewReader(`{"session_id":"s1","hook_event_name":"SessionStart","source":"resume"}`), io.Discard, &stderr, short, nil)
	if got := stderr.String(); strings.Contains(got, "consolidation") || !strings.Contains(got, fmt.Sprintf("locked by pid %d (sleep, stopped)", pid)) {
		t.Errorf("stderr:\n%s\nwant the mark lock's holder named, and no consolidation", got)
	}
}
