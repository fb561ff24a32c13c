//go:build unix

package hook_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
)

// Unix only: the holder is stopped with SIGSTOP.
// TestKeptTasksHeldByAStoppedHookSaySo: a hook stopped (Ctrl-Z on its Claude Code) while it
// held the kept task events' lock records none of them until it is resumed. The hooks that
// found its lock held said nothing, as of one recording them now; they say who holds it, and
// the step that frees it.
func TestKeptTasksHeldByAStoppedHookSaySo(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("a stopped process is told through /proc")
	}
	getenv, en := startedAs(t, "sess-aaaa-1", "CLAUDE_PID", strconv.Itoa(os.Getpid()))
	if err := en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the retry loop"}, false); err != nil {
		t.Fatal(err)
	}
	pid := durabletest.StoppedHolder(t, en.StateDir(), ".lock-kept-tasks")
	var stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), io.Discard, &stderr, getenv, nil)
	_, stop := runStopToItsAnswer(getenv, "sess-aaaa-1")
	for _, got := range []string{stderr.String(), stop} {
		if !strings.Contains(got, fmt.Sprintf("the kept task events are locked by pid %d (sleep, stopped)", pid)) || !strings.Contains(got, fmt.Sprintf("kill -CONT %d", pid)) {
			t.Errorf("stderr:\n%s\nwant the stopped holder named, and how to resume it", got)
		}
	}
}
