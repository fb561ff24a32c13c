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

// A kept task event that cannot be applied for an I/O error is not refused, nor damaged: it
// stays kept, where the next hook reads it and records it once the reads work again. The
// error is in reading the state (the record cannot take the event), or in reading the kept
// event's own file (which is then not moved to quarantine/, where no hook records it).
func TestKeptClaudeTaskStaysKeptThroughAnIOError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files func(name string) bool // the files whose reads fail; nil: the workflow's
	}{
		{"the state", nil},
		{"the kept event", func(name string) bool { return strings.HasPrefix(name, engine.KeptTasksDir+"/") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := keptEnv(t)
			var on atomic.Bool
			en := e.openWith("sess-aaaa-1", 4242, func(c *engine.Config) {
				c.WrapFS = func(fsys durable.FS) durable.FS { return readEIO{FS: noSync(fsys), on: &on, files: tc.files} }
			})
			noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
			var said []string
			on.Store(true)
			notes, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, collect(&said))
			on.Store(false)
			if err == nil || !strings.Contains(err.Error(), "stays kept") {
				t.Errorf("applying with %s unreadable: %v (notes %q, reported %q); want the read error, saying the event stays kept", tc.name, err, notes, said)
			}
			if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), engine.KeptTasksDir, "*.json")); len(kept) != 1 {
				t.Fatalf("kept task events after a failed read: %q, want the one kept", kept)
			}
			noErr(t, func() error {
				_, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, collect(&said))
				return err
			}())
			if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); strings.Join(r.OpenTasks, "|") != "write the parser" {
				t.Errorf("open tasks %q, want the kept one", r.OpenTasks)
			}
		})
	}
}
