package claimsync_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestSessionStartLeavesAnotherMachinesRunningTask: a task running on another machine, under
// its claim, arrives here with that machine's revisions; a session starting here took it as
// interrupted (its session is not alive on this machine, which cannot tell) and set it back to
// pending, pushed at the next sync over the holder's run. Recovery now leaves it running. A
// task this clone holds is still recovered when its session has ended.
func TestSessionStartLeavesAnotherMachinesRunningTask(t *testing.T) {
	bare := gittest.Bare(t)
	base := t.TempDir()
	a := gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	a.en = openSession(t, a.opt.Root, "session-a0") // a session sets it running, as update_task does
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	a.push()

	b := pulled(t, a, filepath.Join(base, "b"), "file://"+bare)
	if got := taskStatus(t, b, "t1"); got != "running" {
		t.Fatalf("a session start here set another machine's running task t1 to %s", got)
	}
	// The next session here (in the same client, after /clear) is told it runs: its session is
	// the other machine's, not the one that ended here.
	next := openSession(t, b.opt.Root, "session-b2")
	if got := next.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}).OpenTasks; !slices.Equal(got, []string{"t1 (running)"}) {
		t.Fatalf("the report here lists another machine's running task as %q, want %q", got, "t1 (running)")
	}
	sessionStart(t, a.opt.Root, nil)
	if got := taskStatus(t, a, "t1"); got != "pending" {
		t.Fatalf("a session start on the machine holding t1, its session ended, left it %s; want it recovered", got)
	}
}

// pulled is another machine at dir, sharing the remote url with a: a session there started
// on the workflow taken from the remote.
func pulled(t *testing.T, a *clone, dir, url string) *clone {
	t.Helper()
	gitInit(t, url, dir)
	b := &clone{t: t, opt: a.opt}
	b.en = sessionStart(t, dir, func(st *store.Store, en *engine.Engine) {
		if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
			t.Fatal(err)
		}
		bk, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := remotesync.Sync(context.Background(), st, bk, "origin", "wf-1", remotesync.EngineReplayer(en)); err != nil {
			t.Fatal(err)
		}
	})
	b.opt.StateDir, b.opt.Root = b.en.StateDir(), dir
	return b
}

// taskMirrored is machine a, in base, sharing through a new bare repository at url, whose
// session aaaaaaaa-a mirrored in its Claude Code task (task id 1, the record's id).
func taskMirrored(t *testing.T) (a *clone, url, base string, task engine.ClaudeTask, id string) {
	t.Helper()
	url, base = "file://"+gittest.Bare(t), t.TempDir()
	a = gitClone(t, url, filepath.Join(base, "a"))
	task = engine.ClaudeTask{SessionID: "aaaaaaaa-a", TaskID: "1", Subject: "write the parser"}
	if _, err := a.en.RecordClaudeTask(task, false); err != nil {
		t.Fatal(err)
	}
	return a, url, base, task, workflow.ClaudeTaskID(task)
}

// runningElsewhere is taskMirrored's machine a once another machine, b, pulled the workflow and
// set the task running under its claim, and a read the claims line.
func runningElsewhere(t *testing.T) (a *clone, task engine.ClaudeTask, id string) {
	t.Helper()
	a, url, base, task, id := taskMirrored(t)
	a.push()
	b := pulled(t, a, filepath.Join(base, "b"), url)
	if _, err := b.task(id, "running"); err != nil {
		t.Fatal(err)
	}
	b.push()
	a.push()
	a.sync()
	return a, task, id
}

// TestTaskEventLeavesAnotherMachinesRunningTask: one of Claude Code's tasks, mirrored in and
// set running on another machine under its claim, arrives here; this machine's session
// completing a task of the same subject in its own list recorded that task done, past the
// claim, to be pushed over the holder's run. It is now recorded as this session's own.
func TestTaskEventLeavesAnotherMachinesRunningTask(t *testing.T) {
	a, url, base, _, id := taskMirrored(t)
	if _, err := a.task(id, "running"); err != nil {
		t.Fatal(err)
	}
	a.push()
	b := pulled(t, a, filepath.Join(base, "b"), url)
	if _, err := b.en.RecordClaudeTask(engine.ClaudeTask{SessionID: "bbbbbbbb-b", TaskID: "1", Subject: "write the parser"}, true); err != nil {
		t.Fatal(err)
	}
	if got := taskStatus(t, b, id); got != "running" {
		t.Fatalf("a task event here recorded another machine's running task %s as %s", id, got)
	}
}

// TestOwnTaskEventLeavesItRunningOnAnotherMachine: a session here mirrors one of its Claude
// Code tasks in; another machine sets it running under its claim; the session here then
// completes the task in its own list. Its TaskCompleted recorded the task done here, past the
// other machine's claim (update_task refuses that done), to be pushed over the holder's run.
// The event is now refused, and the task stays running under its holder.
func TestOwnTaskEventLeavesItRunningOnAnotherMachine(t *testing.T) {
	a, task, id := runningElsewhere(t)
	if got := taskStatus(t, a, id); got != "running" {
		t.Fatalf("the other machine's run of %s reached a as %s", id, got)
	}
	_, err := a.en.RecordClaudeTask(task, true)
	if got := taskStatus(t, a, id); got != "running" || err == nil || !strings.Contains(err.Error(), "another machine") {
		t.Fatalf("this session completing %s, which another machine runs, left it %s (%v); want it running and the event refused", id, got, err)
	}
}

// sessionStart opens the project at dir as a session of this process's client, runs before
// (when not nil) on its state, then the read protocol as SessionStart runs it.
func sessionStart(t *testing.T, dir string, before func(*store.Store, *engine.Engine)) *engine.Engine {
	t.Helper()
	en := openSession(t, dir, "session-"+filepath.Base(dir))
	if before != nil {
		st, err := store.Open(en.StateDir())
		if err != nil {
			t.Fatal(err)
		}
		before(st, en)
		st.Close()
	}
	en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	return en
}

// t1RunningOnA is two clones of one remote: a, in session-a0, set task t1 running and pushed
// its claim; b is a clone that pulled it.
func t1RunningOnA(t *testing.T) (a, b *clone) {
	t.Helper()
	bare := gittest.Bare(t)
	base := t.TempDir()
	a = gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	a.en = openSession(t, a.opt.Root, "session-a0")
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	a.push()
	return a, pulled(t, a, filepath.Join(base, "b"), "file://"+bare)
}

// openSession opens the project at dir as session, of this process's client.
func openSession(t *testing.T, dir, session string) *engine.Engine {
	t.Helper()
	return openAt(t, dir, session, 0)
}

// TestTakeoverOutlivesTheOldHoldersRecovery: a task running on one machine whose claim went
// unrenewed past the lease is taken over by another, which runs it again. The first machine,
// which has not read the claims line since, takes its own run as interrupted at its next
// session start and sets the task back to pending. The takeover wrote nothing (the task was
// running already), so that machine's next sync pushed "pending" over the new holder's run.
// The takeover is now a new run on record, and the old holder's put-back is left out.
func TestTakeoverOutlivesTheOldHoldersRecovery(t *testing.T) {
	a, b := t1RunningOnA(t)
	vars := map[string]string{claimsync.EnvLease: "1m"}
	b.opt.Getenv = func(k string) string { return vars[k] }
	if _, err := b.task("t1", "running"); err == nil {
		t.Fatal("t1 was taken over as soon as the claim was seen")
	}
	vars[claimsync.EnvClockSkew] = "2m" // past a's lease since then
	if _, err := b.task("t1", "running"); err != nil {
		t.Fatalf("taking over t1, its claim lapsed: %v", err)
	}
	b.push()

	sessionStart(t, a.opt.Root, nil) // a's session ended: its run of t1 is taken as interrupted
	if got := taskStatus(t, a, "t1"); got != "pending" {
		t.Fatalf("the old holder's session start left its run of t1 %s; want it put back to pending", got)
	}
	a.push()
	b.push()
	if got := taskStatus(t, b, "t1"); got != "running" {
		t.Fatalf("the machine that took t1 over finds it %s after the old holder's sync; want running", got)
	}
}
