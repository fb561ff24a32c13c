//go:build !windows

package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A FIFO planted where kept task events are looked for, or as one of them, never blocks the
// hook that looks: it is refused, not opened for a writer that never comes.
func TestKeptClaudeTasksNeverBlockOnAFIFO(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "0000000000000000001-1.json"} {
		_, en := keptEnv(t)
		dir := filepath.Join(en.StateDir(), engine.KeptTasksDir)
		if name != "" {
			noErr(t, os.MkdirAll(dir, 0o700))
		}
		noErr(t, syscall.Mkfifo(filepath.Join(dir, name), 0o600))
		done := make(chan error, 1)
		go func() {
			_, err := en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, func(engine.ClaudeTask, bool, *engine.Result, error) {})
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a guard against a hang, not a measure
			t.Fatalf("a FIFO at %s blocks the look for kept task events", filepath.Join(dir, name))
		}
	}
}

// A kept-tasks directory that is a symlink (a repository that commits one) leads out of the
// state directory: the files where it points are not Cairn's, so none is read as a kept
// event, removed or moved to quarantine/, and no event is kept there.
func TestKeptClaudeTasksNeverFollowALinkOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	en := e.open("sess-aaaa-1")
	elsewhere := t.TempDir()
	files := map[string]string{"0000000000000000001-1.json": `{"name":"not a task"}`, "0000000000000000002-1.json": "not json"}
	for name, data := range files {
		noErr(t, os.WriteFile(filepath.Join(elsewhere, name), []byte(data), 0o600))
	}
	noErr(t, os.Symlink(elsewhere, filepath.Join(en.StateDir(), engine.KeptTasksDir)))
	_ = en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write it"}, false)
	_, _ = en.ApplyKeptClaudeTasks(3*time.Second, time.Time{}, func(engine.ClaudeTask, bool, *engine.Result, error) {})
	ents, err := os.ReadDir(elsewhere)
	noErr(t, err)
	var names []string
	for _, ent := range ents {
		names = append(names, ent.Name())
	}
	if len(names) != len(files) {
		t.Errorf("where the link points now holds %q, want only the %d files it held", names, len(files))
	}
	for name, data := range files {
		if b, err := os.ReadFile(filepath.Join(elsewhere, name)); err != nil || string(b) != data {
			t.Errorf("%s where the link points: %q, %v; want it as it was", name, b, err)
		}
	}
}

// A FIFO, or a link to a device, as a task's file in Claude Code's task list held every
// turn's end (and every compaction anchor) to the hook's deadline, which then said it stopped
// early and did none of its work; a device that never ends grew memory until then. Neither
// proves anything about the task: the turn ends at once, the task as it was.
func TestClaudeTaskListNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	const sess = "sess-aaaa-1"
	for _, kind := range []string{"fifo", "device"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			en := e.open(sess)
			must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "1", Subject: "write the parser"}, false))(t)
			dir := filepath.Join(e.home, ".claude", "tasks", sess)
			noErr(t, os.MkdirAll(dir, 0o700))
			if kind == "fifo" {
				noErr(t, syscall.Mkfifo(filepath.Join(dir, "1.json"), 0o600))
			} else {
				noErr(t, os.Symlink("/dev/zero", filepath.Join(dir, "1.json")))
			}
			done := make(chan *engine.StopOutcome, 1)
			go func() {
				out, err := e.open(sess).Stop(engine.StopInput{SessionID: sess})
				if err != nil {
					out = &engine.StopOutcome{DroppedErr: err}
				}
				done <- out
			}()
			select {
			case out := <-done:
				if out.DroppedErr != nil || out.Followed != (engine.TasksFollowed{}) {
					t.Errorf("followed %+v, %v; want nothing changed", out.Followed, out.DroppedErr)
				}
			case <-time.After(10 * time.Second): // a guard against a hang, not a measure
				t.Fatalf("a %s as a task's file blocks the turn's end", kind)
			}
			if r := e.open(sess).Resume(engine.ResumeOptions{ReportOnly: true}); len(r.OpenTasks) != 1 {
				t.Errorf("open tasks %q, want the one recorded", r.OpenTasks)
			}
		})
	}
}

// A hook stopped (Ctrl-Z on its Claude Code) while it held the kept task events' lock keeps
// them out of resume_check's record until it is resumed: resume_check answered with the task
// list as it was before them and said nothing; it says who holds the lock and the step that
// frees it, once, as the hooks say it.
func TestResumeCheckSaysAStoppedHolderOfKeptTasks(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("a stopped process is told through /proc")
	}
	_, en := keptEnv(t)
	noErr(t, en.KeepClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))
	pid := durabletest.StoppedHolder(t, en.StateDir(), ".lock-kept-tasks")
	res := en.Resume(engine.ResumeOptions{Apply: true, FromClient: true}) // resume_check's
	step := fmt.Sprintf("kill -CONT %d", pid)
	var said int
	for _, w := range res.Warnings {
		if strings.Contains(w, step) {
			said++
		}
	}
	if said != 1 {
		t.Errorf("resume_check warnings %q, notices %q: want the stopped holder and %q said once", res.Warnings, res.Notices, step)
	}
}
