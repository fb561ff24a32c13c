//go:build unix

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/vars"
)

// A state directory open to others' writes that belongs to another user cannot be made
// private by this one: its chmod fails (EPERM), and so would the "chmod 700 it" the refusal
// used to give. The refusal says whose directory it is and the step that works. Run as root,
// which opens the directory as another user (nobody) in a child. The refusal says its own step
// (store.SaysStep), so that cairn adds no second one ("cairn doctor says what to fix").
func TestPrivateDirOfAnotherUser(t *testing.T) {
	childAsOther("CAIRN_TEST_OPEN_AS_OTHER", nil)
	base, asNobody := durabletest.AsNobody(t)
	dir := filepath.Join(base, "cairn")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	msg := asNobody("CAIRN_TEST_OPEN_AS_OTHER=" + dir)
	if want := "belongs to uid 0, not to this user (uid 65534)"; !strings.Contains(msg, want) || strings.HasSuffix(msg, "chmod 700 it") {
		t.Errorf("open as another user: %q; want whose it is (%q) and a step that works", msg, want)
	}
	if want := "sudo chown -R 65534 " + vars.Quote(dir); !strings.Contains(msg, want) {
		t.Errorf("open as another user: %q; want the step %q", msg, want)
	}
	if !strings.HasSuffix(msg, "\n(says its step)") {
		t.Errorf("open as another user: %q; want an error that says its own step", msg)
	}
}

// A state directory of this user's that holds files another user left (cairn run once with
// sudo leaves root's lock file and state, 0600): a write opens the lock file in place, which
// the file's owner refuses. The refusal said the state directory was "read-only or not
// writable" and that "the existing state can still be read", neither true, so a chmod of the
// directory was the step it suggested, which does not help; it now says whose the file (or
// the directory a new file goes in) is and the command that gives the state directory back.
func TestStateFilesOfAnotherUser(t *testing.T) {
	childAsOther("CAIRN_TEST_WRITE_AS_OTHER", func(s *store.Store) error {
		if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
			return err
		}
		return s.SaveCheckpoint("plan", []byte(`{}`))
	})
	base, asNobody := durabletest.AsNobody(t)
	for _, c := range []struct {
		name  string
		leave func(t *testing.T, dir string) // as root, what sudo leaves in dir
		file  string                         // the file the refusal names
	}{
		{"lock file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".lock-workflow"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ".lock-workflow"},
		{"a started workflow", startAsRoot, ".lock-workflow"},
		{"checkpoints directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "checkpoints"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "checkpoints"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			c.leave(t, dir)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			msg := asNobody("CAIRN_TEST_WRITE_AS_OTHER=" + dir)
			for _, want := range []string{
				filepath.Join(dir, c.file) + " belongs to uid 0, not to this user (uid 65534)",
				"nothing was changed",
				"sudo chown -R 65534 " + vars.Quote(dir),
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("a write as nobody: %q; want %q", msg, want)
				}
			}
			if strings.Contains(msg, "read-only") || strings.Contains(msg, "can still be read") {
				t.Errorf("a write as nobody: %q; the directory is writable", msg)
			}
		})
	}
}

// TestStateReadOfAnotherUser: state left by cairn run with sudo (root's files, 0600) in this
// user's state directory cannot be read by this user. The read said only "reading the
// workflow snapshot in DIR: openat workflow-state.json: permission denied", no step; it now
// says whose the file is and the command that gives the state directory back.
func TestStateReadOfAnotherUser(t *testing.T) {
	childAsOther("CAIRN_TEST_READ_AS_OTHER", func(s *store.Store) error {
		_, err := s.ReadWorkflow()
		return err
	})
	base, asNobody := durabletest.AsNobody(t)
	dir := filepath.Join(base, "cairn")
	startAsRoot(t, dir)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	msg := asNobody("CAIRN_TEST_READ_AS_OTHER=" + dir)
	for _, want := range []string{
		filepath.Join(dir, store.WorkflowFile) + " belongs to uid 0, not to this user (uid 65534)",
		"sudo chown -R 65534 " + vars.Quote(dir),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("a read as nobody: %q; want %q", msg, want)
		}
	}
}

// startAsRoot leaves in dir, as root, what cairn run with sudo leaves there: the directory
// (0700) if it is not there yet, and a started workflow (root's files, 0600).
func startAsRoot(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	defer s.Close()
	if _, err := s.UpdateWorkflow(setNext(wfID, "spec")); err != nil {
		t.Fatal(err)
	}
}

// childAsOther is, in the child durabletest.AsNobody starts (with env naming a state directory), the
// child's whole run: it opens the store there, runs op (nil: the open alone), prints the error
// and exits. In the parent (env unset) it returns.
func childAsOther(env string, op func(*store.Store) error) {
	dir := os.Getenv(env)
	if dir == "" {
		return
	}
	s, err := store.Open(dir)
	if err == nil {
		if op != nil {
			err = op(s)
		}
		s.Close()
	}
	fmt.Print(err)
	if store.SaysStep(err) {
		fmt.Print("\n(says its step)")
	}
	os.Exit(0)
}

// TestJournalDirectoryOfAnotherUser: a journal directory left by cairn run with sudo (root's,
// 0755) holding a journal of this user's: an archive's move of the journal, and every later
// write that needs it, was refused with "the state directory DIR is read-only or not writable
// (... permission denied)", though the state directory is writable, and with no step that
// helps (the journal file is this user's; its directory is not). It now says whose the
// directory is and the command that gives the state directory back.
func TestJournalDirectoryOfAnotherUser(t *testing.T) {
	childAsOther("CAIRN_TEST_JOURNAL_AS_OTHER", func(s *store.Store) error {
		info, err := s.ArchiveIf("abandoned", wfID)
		if err != nil {
			return err
		}
		for _, n := range info.Notices {
			fmt.Println(n.Message)
		}
		_, err = s.UpdateWorkflow(setNext("apex-20261122T180000Z-aaaa", "spec"))
		return err
	})
	base, asNobody := durabletest.AsNobody(t)
	dir := filepath.Join(base, "cairn")
	startAsRoot(t, dir)
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil || filepath.Base(p) == "journal" {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	msg := asNobody("CAIRN_TEST_JOURNAL_AS_OTHER=" + dir)
	for _, want := range []string{
		filepath.Join(dir, "journal") + " belongs to uid 0, not to this user (uid 65534)",
		"sudo chown -R 65534 " + vars.Quote(dir),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("as nobody: %q; want %q", msg, want)
		}
	}
	if strings.Contains(msg, "read-only") {
		t.Errorf("as nobody: %q; the state directory is writable", msg)
	}
}

// TestStateDirectoryOfAnotherUser: a state directory cairn run with sudo made (root's, 0700)
// could not be opened by this user, and every command, hook and tool said only "opening state
// directory DIR: open DIR: permission denied". It says whose it is and the command that gives
// it back.
func TestStateDirectoryOfAnotherUser(t *testing.T) {
	childAsOther("CAIRN_TEST_OPEN_AS_OTHER", nil)
	base, asNobody := durabletest.AsNobody(t)
	dir := filepath.Join(base, "cairn")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	msg := asNobody("CAIRN_TEST_OPEN_AS_OTHER=" + dir)
	for _, want := range []string{
		dir + " belongs to uid 0, not to this user (uid 65534)",
		"nothing was changed",
		"sudo chown -R 65534 " + vars.Quote(dir),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("an open as nobody: %q; want %q", msg, want)
		}
	}
}
