package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
)

// readEIO is a state directory whose reads of the workflow's snapshot and journal fail with
// EIO while on is set: a disk failing under the state.
type readEIO struct {
	durable.FS
	on    *atomic.Bool
	files func(name string) bool // the files whose reads fail; nil: the workflow's
}

func (r readEIO) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	files := r.files
	if files == nil {
		files = func(name string) bool { return name == "workflow-state.json" || strings.HasPrefix(name, "journal/") }
	}
	if r.on.Load() && flag&(os.O_WRONLY|os.O_RDWR) == 0 && files(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EIO}
	}
	return r.FS.OpenFile(name, flag, perm)
}

// A kept task event the record cannot take because the state cannot be read (an I/O error)
// is not a refusal: it stays kept for the next hook, which records it once the state reads
// again.
func TestKeptClaudeTaskStaysKeptWhileTheStateCannotBeRead(t *testing.T) {
	e, _ := keptEnv(t)
	var on atomic.Bool
	en := e.openWith("sess-aaaa-1", 4242, func(c *engine.Config) {
		c.WrapFS = func(fsys durable.FS) durable.FS { return readEIO{FS: noSync(fsys), on: &on} }
	})
	noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	var said []string
	on.Store(true)
	_, err := en.ApplyKeptClaudeTasks(true, time.Time{}, collect(&said))
	on.Store(false)
	if err == nil || !strings.Contains(err.Error(), "stays kept") {
		t.Errorf("applying with the state unreadable: %v (reported %q); want the read error, saying the event stays kept", err, said)
	}
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 1 {
		t.Fatalf("kept task events after a failed read: %q, want the one kept", kept)
	}
	said = nil
	noErr(t, func() error { _, err := en.ApplyKeptClaudeTasks(true, time.Time{}, collect(&said)); return err }())
	if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); strings.Join(r.OpenTasks, "|") != "write the parser" {
		t.Errorf("open tasks %q, want the kept one", r.OpenTasks)
	}
}

// A kept task event whose own file cannot be read for an I/O error is not damaged: it stays
// kept, where the next hook reads it, and is not moved to quarantine/, where no hook records it.
func TestKeptClaudeTaskUnreadForAnIOErrorStaysKept(t *testing.T) {
	e, _ := keptEnv(t)
	var on atomic.Bool
	en := e.openWith("sess-aaaa-1", 4242, func(c *engine.Config) {
		c.WrapFS = func(fsys durable.FS) durable.FS {
			return readEIO{FS: noSync(fsys), on: &on, files: func(name string) bool { return strings.HasPrefix(name, engine.KeptTasksDir+"/") }}
		}
	})
	noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	var said []string
	on.Store(true)
	notes, err := en.ApplyKeptClaudeTasks(true, time.Time{}, collect(&said))
	on.Store(false)
	if err == nil || !strings.Contains(err.Error(), "stays kept") {
		t.Errorf("applying with the kept event unreadable: %v (notes %q); want the read error, saying the event stays kept", err, notes)
	}
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 1 {
		t.Fatalf("kept task events after a failed read: %q, want the one kept", kept)
	}
	noErr(t, func() error { _, err := en.ApplyKeptClaudeTasks(true, time.Time{}, collect(&said)); return err }())
	if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); strings.Join(r.OpenTasks, "|") != "write the parser" {
		t.Errorf("open tasks %q, want the kept one", r.OpenTasks)
	}
}
