//go:build linux

package engine_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A kept task event the record cannot take because the state cannot be written (here the
// journal's directory is a read-only mount; a full disk or an I/O error is the same) is not
// a refusal: it stays kept, with the error saying so, and the next look records it once the
// state can be written again. Before, it was removed after the failed record, and lost.
func TestKeptClaudeTaskStaysKeptWhileTheStateCannotBeWritten(t *testing.T) {
	t.Parallel()
	_, en := keptEnv(t)
	noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	journal := filepath.Join(en.StateDir(), "journal")
	unmount := durabletest.Mount(t, journal, journal, "", syscall.MS_BIND, "", true)

	var said []string
	report := collect(&said)
	_, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, report)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "stays kept") {
		t.Errorf("applying with the journal read-only: %v; want the write error, saying the event stays kept", err)
	}
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 1 {
		t.Fatalf("kept task events after a failed record: %q, want the one kept", kept)
	}
	unmount()
	said = nil
	if _, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, report); err != nil {
		t.Fatal(err)
	}
	if want := "Claude Code task 1 recorded as open in phase analyze"; strings.Join(said, "|") != want {
		t.Errorf("applied %q, want %q", said, want)
	}
	if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); strings.Join(r.OpenTasks, "|") != "write the parser" {
		t.Errorf("open tasks %q, want the kept one", r.OpenTasks)
	}
}
