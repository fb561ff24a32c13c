package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestWatchInotifyLimits: cairn watch in a user namespace whose inotify limit is 0 (the limits
// are per user namespace, so nothing outside it is touched). The kernel reports the watch limit
// as ENOSPC, whose text is "no space left on device": watch said that, and a person went to
// free disk space. It names the limit instead, and what to do.
func TestWatchInotifyLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ sysctl, want string }{
		{"max_inotify_watches", "limit on inotify watches is reached (fs.inotify.max_user_watches; the disk is not full)"},
		{"max_inotify_instances", "limit on inotify instances (fs.inotify.max_user_instances)"},
	} {
		t.Run(tc.sysctl, func(t *testing.T) {
			t.Parallel()
			dir, env := project(t)
			run(t, dir, env, "start", "apex", "work")
			cmd := watchUnderLimit(t, dir, env, tc.sysctl, 0)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Skipf("no user namespace with its own inotify limits here: %v %s", err, &stderr)
			}
			if exit.ExitCode() == 99 {
				t.Skipf("this kernel's user namespaces have no inotify limits of their own: %s", &stderr)
			}
			got := stderr.String()
			if exit.ExitCode() != 3 || strings.Contains(got, "no space left") || !strings.Contains(got, tc.want) ||
				!strings.HasSuffix(got, "; close a program that watches many files or raise the limit, then run cairn watch again\n") {
				t.Errorf("exit %d, stderr %q: want 3 and %q, what to do, and no full disk", exit.ExitCode(), got, tc.want)
			}
		})
	}
}

// TestWatchSaysCheckpointsAreNotWatched: with room for two inotify watches (the state
// directory and the one above it), the checkpoints directory could not be watched, and watch
// said nothing: checkpoint saves were never shown and nobody knew why. It says so, with the
// limit and what to do.
func TestWatchSaysCheckpointsAreNotWatched(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "work")
	run(t, dir, env, "checkpoint", "save", "plan", "{}")
	cmd := watchUnderLimit(t, dir, env, "max_inotify_watches", 2)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("no user namespace here: %v", err)
	}
	// The first line is printed once the watches are made (or refused).
	first, readErr := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() == 99 {
		t.Skipf("this kernel's user namespaces have no inotify limits of their own: %s", &stderr)
	}
	if readErr != nil {
		t.Skipf("watch printed nothing in a user namespace (%v, %v): %s", readErr, err, &stderr)
	}
	want := "checkpoints (checkpoint saves are not shown): the system's limit on inotify watches is reached"
	if got := stderr.String(); err != nil || !strings.Contains(got, want) || !strings.Contains(got, "raise the limit") {
		t.Errorf("first line %q, exit %v, stderr %q: want 0 and %q", first, err, got, want)
	}
}

// watchUnderLimit is cairn watch in dir, in a user namespace of its own (the inotify limits
// are per user namespace, so nothing outside it is touched) whose sysctl, one of
// /proc/sys/user's inotify limits, is set to limit first; exit 99 says it could not be.
func watchUnderLimit(t *testing.T, dir string, env []string, sysctl string, limit int) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("cairn")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "echo "+strconv.Itoa(limit)+" > /proc/sys/user/"+sysctl+` || exit 99; exec "$0" watch`, bin)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
	return cmd
}
