package gitremote_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestStoppedSyncIsNotWaitedFor: a cairn sync stopped with Ctrl-Z while its git fetched holds
// Cairn's mirror lock until it is resumed. Every other sync of the clone (cairn-mcp's, and the
// claims of each update_task) waited for it for all of its time and then failed; it now fails
// at once, saying how to resume it.
func TestStoppedSyncIsNotWaitedFor(t *testing.T) {
	const timeout = 10 * time.Second
	dir, _, _ := lockedClone(t, time.Time{})
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	stopped := exec.Command("sleep", "600")
	if err := stopped.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopped.Process.Kill(); stopped.Wait() })
	d, err := durable.OpenDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(gitremote.MirrorLock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// The lock's holder, as the stopped process would have recorded it.
	host, _ := os.Hostname()
	rec, _ := json.Marshal(durable.Holder{PID: stopped.Process.Pid, Command: "sleep", Since: time.Now(), Host: host})
	if err := os.WriteFile(filepath.Join(dir, ".git", gitremote.MirrorLock), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := stopped.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	durabletest.WaitStopped(t, stopped.Process.Pid, true)
	start := time.Now()
	_, err = b.Heads(bg(t))
	if err == nil || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(stopped.Process.Pid)) {
		t.Fatalf("Heads while a stopped process holds the mirror lock = %v, want the step that resumes it", err)
	}
	if waited := time.Since(start); waited > timeout/2 {
		t.Fatalf("Heads waited %s for a stopped process", waited)
	}
}

// TestSyncStoppedWhileWaitedFor: a sync waiting for the mirror lock held by a cairn sync that
// was then stopped with Ctrl-Z waited for it for all its time (2 minutes by default, a tool
// call's claims held up as long) before saying to resume it; it now says so within a second.
func TestSyncStoppedWhileWaitedFor(t *testing.T) {
	const timeout = 10 * time.Second
	dir, _, _ := lockedClone(t, time.Time{})
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	d, err := durable.OpenDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(gitremote.MirrorLock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	host, _ := os.Hostname()
	rec, _ := json.Marshal(durable.Holder{PID: holder.Process.Pid, Command: "sleep", Since: time.Now(), Host: host})
	if err := os.WriteFile(filepath.Join(dir, ".git", gitremote.MirrorLock), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	// The holder is stopped once the sync waits for it.
	gitremote.OnMirrorWait(t, func() {
		if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
		}
		durabletest.WaitStopped(t, holder.Process.Pid, true)
	})
	start := time.Now()
	_, err = b.Heads(bg(t))
	if err == nil || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("Heads while the mirror lock's holder was stopped = %v, want the step that resumes it", err)
	}
	if waited := time.Since(start); waited > timeout/2 {
		t.Fatalf("Heads waited %s for a holder that was stopped", waited)
	}
}
