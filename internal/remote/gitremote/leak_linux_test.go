package gitremote_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// procStat returns the state and session id of process pid from /proc, ok false when it is
// gone (a zombie counts as gone: it runs nothing and holds no connection).
func procStat(pid string) (session string, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])) // state ppid pgrp session ...
	if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
		return "", false
	}
	return f[3], true
}

// TestStalledTransportLeavesNothing: the program git runs to reach the remote (ssh, a remote
// helper) stalls, as on a half-open connection. The command's timeout must end it too, not
// only git, which would leave it running (and holding its connection) after the sync gave up;
// and it must run outside this process's session, so that it cannot open the user's terminal
// to ask for a passphrase or a host key while nobody is there to answer.
// A transport that ignores SIGTERM is killed once git has been waited for.
func TestStalledTransportLeavesNothing(t *testing.T) {
	for name, run := range map[string]string{"ends on SIGTERM": "exec sleep 600", "ignores SIGTERM": "trap '' TERM; exec sleep 600"} {
		t.Run(name, func(t *testing.T) { stalledTransport(t, run) })
	}
}

// stalledTransport checks that a timed-out Heads leaves no fake ssh running script.
func stalledTransport(t *testing.T, script string) {
	ctx := bg(t)
	self, ok := procStat("self")
	if !ok {
		t.Skip("no /proc")
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	ssh := filepath.Join(dir, "fake-ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\necho $$ >> '"+pids+"'\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSH_COMMAND", ssh)
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	// The timeout proves something only once git has started the transport: on a loaded
	// machine git may take longer than a short timeout to get that far (it is then killed
	// with nothing started), so the run is tried again with twice the time until it does.
	var sessions []string
	for timeout := 2 * time.Second; len(sessions) == 0; timeout *= 2 {
		if timeout > 2*time.Minute {
			t.Fatal("git never ran the fake ssh before the command's timeout")
		}
		b, err := gitremote.New(gitremote.Config{Dir: repo, Remote: "ssh://cairn.invalid/shared.git", Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := b.Heads(ctx); done <- err }()
		ended := false
		for len(sessions) == 0 && !ended {
			select {
			case err = <-done:
				ended = true
			case <-time.After(20 * time.Millisecond):
			}
			if data, _ := os.ReadFile(pids); len(data) > 0 {
				for _, pid := range strings.Fields(string(data)) {
					if s, ok := procStat(pid); ok {
						sessions = append(sessions, s)
					}
				}
			}
		}
		if !ended {
			err = <-done
		}
		if err == nil {
			t.Fatal("Heads through a stalled transport succeeded")
		}
		if len(sessions) == 0 {
			t.Logf("git had not run the fake ssh within %s: trying again with more time", timeout)
			os.Remove(pids)
		}
	}
	for _, s := range sessions {
		if s == self {
			t.Errorf("the transport runs in this process's session %s: it can prompt on the user's terminal", s)
		}
	}
	data, _ := os.ReadFile(pids)
	for _, pid := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(pid)
		if err != nil {
			t.Fatalf("the fake ssh wrote pid %q", pid)
		}
		// Killed, it is gone within moments; 30 s is for a loaded machine, and far short of
		// the 600 s the stalled transport would otherwise sleep.
		if !durabletest.WaitGone(n, 30*time.Second) {
			t.Errorf("the stalled transport (pid %s) outlived the command's timeout", pid)
			if p, err := os.FindProcess(n); err == nil {
				p.Kill()
			}
		}
	}
}

// TestKilledSyncEndsItsGit: a Cairn process killed while its git waited for a remote that does
// not answer (cairn-mcp killed with its client, kill -9 on cairn sync) left that git running,
// in a session of its own, holding its connection for good: one more with each process
// killed. git is now terminated as the process that started it dies. Over http, git's remote
// helper holds the connection and outlived git: it now ends once the command's time is out.
func TestKilledSyncEndsItsGit(t *testing.T) {
	if dir := os.Getenv("CAIRN_TEST_KILLED_SYNC"); dir != "" {
		// The process to be killed: Heads waits on the hung remote until then.
		b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Heads(bg(t))
		t.Fatalf("Heads through a remote that does not answer ended: %v", err)
	}
	for _, scheme := range []string{"git", "http"} {
		t.Run(scheme, func(t *testing.T) { killedSync(t, scheme) })
	}
}

// killedSync is TestKilledSyncEndsItsGit through a hung remote reached by scheme: over http,
// git's remote helper (git-remote-http) holds the connection, not git.
func killedSync(t *testing.T, scheme string) {
	hung := gittest.Hung(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", scheme+"://"+hung.Addr+"/shared.git")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledSyncEndsItsGit$")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_KILLED_SYNC="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); hung.Accepted() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatal("the sync's git never reached the remote")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// Ended, git closes its connection within moments; 30 s is for a loaded machine.
	for end := time.Now().Add(30 * time.Second); hung.Closed() < hung.Accepted(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the sync was killed, and its git still holds its connection to the remote")
		}
	}
}
