//go:build linux || darwin

package memory

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFootprintIndexLeft: a MEMORY.md that is no regular file holds no line of Cairn's and is
// left as it is; uninstall goes on with Cairn's files and says which it left, and how.
func TestFootprintIndexLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		said string
	}{
		{"a directory", func(t *testing.T, p string) { must(t, os.Mkdir(p, 0o700)) }, "is a directory"},
		{"a FIFO", func(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o600)) }, "FIFO"},
		{"a link to a directory", func(t *testing.T, p string) {
			d := filepath.Join(t.TempDir(), "elsewhere")
			must(t, os.Mkdir(d, 0o700))
			must(t, os.Symlink(d, p))
		}, "symbolic link"},
		{"a link to a FIFO", func(t *testing.T, p string) {
			f := filepath.Join(t.TempDir(), "fifo")
			must(t, syscall.Mkfifo(f, 0o600))
			must(t, os.Symlink(f, p))
		}, "symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			must(t, m.Record("Active APEX workflow: analyze completed, planning x"))
			p := filepath.Join(dir, IndexFile)
			must(t, os.Remove(p))
			tc.make(t, p)
			fp, err := m.Footprint()
			if err != nil {
				t.Fatalf("footprint: %v", err)
			}
			if len(fp.Lines) != 0 || len(fp.Files) != 1 || fp.Files[0] != TopicFile {
				t.Errorf("lines %q files %q: want no line and the topic file", fp.Lines, fp.Files)
			}
			if !strings.HasPrefix(fp.IndexLeft, p+" ") || !strings.Contains(fp.IndexLeft, tc.said) || strings.Contains(fp.IndexLeft, "leaves it") {
				t.Errorf("IndexLeft %q: want %s named as %q", fp.IndexLeft, p, tc.said)
			}
		})
	}
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLinkToNoFileGetsNoCopyStep: a memory file that is a symbolic link to a device, a FIFO
// or a directory was refused as a link, with the step "replace the link with a copy of the
// file it leads to": a copy of /dev/zero fills the disk, one of a FIFO waits for ever, and a
// directory is no file. It is said for what the link leads to, and no copy is asked for.
func TestLinkToNoFileGetsNoCopyStep(t *testing.T) {
	for _, tc := range []struct{ name, target, said string }{
		{"a device", "/dev/zero", "symbolic link to a device"},
		{"a FIFO", "fifo", "symbolic link to a FIFO"},
		{"a directory", "dir", "symbolic link to a directory"},
	} {
		for _, file := range []string{IndexFile, TopicFile} {
			t.Run(tc.name+" "+file, func(t *testing.T) {
				m, dir := newTestMemory(t)
				must(t, os.MkdirAll(dir, 0o700))
				target := tc.target
				switch target {
				case "fifo":
					target = filepath.Join(t.TempDir(), "fifo")
					must(t, syscall.Mkfifo(target, 0o600))
				case "dir":
					target = t.TempDir()
				}
				must(t, os.Symlink(target, filepath.Join(dir, file)))
				err := m.Record("Active APEX workflow: analyze completed, planning x")
				if !LeftAlone(err) || !strings.Contains(err.Error(), tc.said) || strings.Contains(LeftAloneStep(err), "copy") {
					t.Errorf("Record: %v\nstep %q: want it said as a %s and no copy asked for", err, LeftAloneStep(err), tc.said)
				}
			})
		}
	}
}

// TestLockInTheWayGivesTheStep: a directory, a FIFO or a link where Cairn keeps its memory lock
// kept every L2 line and learning out for good, said as "the memory lock … cannot be taken"
// with no step, and retried after every turn. It is a file Cairn leaves as it is, with the
// step that lets Cairn write again.
func TestLockInTheWayGivesTheStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p string) error
		said string
	}{
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is a FIFO"},
		{"a link to a device", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a symbolic link to a device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			must(t, os.MkdirAll(dir, 0o700))
			p := filepath.Join(dir, LockFile)
			must(t, tc.make(p))
			err := m.Record("Active APEX workflow: analyze completed, planning x")
			if !LeftAlone(err) || !strings.Contains(err.Error(), p+" "+tc.said) || LeftAloneStep(err) != "move or rename it" {
				t.Errorf("Record: %v (step %q): want %s said as it is, with the step", err, LeftAloneStep(err), p)
			}
			if err := m.LockLeftAlone(); !LeftAlone(err) {
				t.Errorf("LockLeftAlone: %v", err)
			}
		})
	}
}
