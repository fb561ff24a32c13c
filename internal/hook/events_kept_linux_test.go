//go:build linux

package hook_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
)

// Linux only: the journal's directory is made a read-only mount.
// TestTaskEventKeptWhileTheStateCannotBeWritten: a task event whose record the state cannot
// take (the journal's directory read-only; an I/O error is the same) is kept in kept-tasks/,
// which can be written, and recorded by the first hook after the state can be written again,
// as the events kept earlier are. Before, it was lost, said as "not recorded".
func TestTaskEventKeptWhileTheStateCannotBeWritten(t *testing.T) {
	getenv, en := startedAs(t, "sess-aaaa-1")
	journal := filepath.Join(en.StateDir(), "journal")
	unmount := durabletest.Mount(t, journal, journal, "", syscall.MS_BIND, "", true)
	var stderr bytes.Buffer
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"2","task_subject":"update the docs"}`), io.Discard, &stderr, getenv, nil)
	if got := stderr.String(); !strings.Contains(got, "TaskCreated task 2 kept: ") || !strings.Contains(got, "read-only") || strings.Contains(got, "does not send it again") {
		t.Errorf("stderr:\n%s", got)
	}
	unmount()
	stderr.Reset()
	hook.Events(strings.NewReader(`{"session_id":"sess-aaaa-1","hook_event_name":"TaskCreated","task_id":"3","task_subject":"ship it"}`), io.Discard, &stderr, getenv, nil)
	res := en.Resume(engine.ResumeOptions{ReportOnly: true})
	if open := strings.Join(res.OpenTasks, "|"); open != "update the docs|ship it" {
		t.Errorf("open tasks %q once the journal can be written:\n%s", res.OpenTasks, stderr.String())
	}
}
