//go:build linux || darwin

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestDoctorMemoryTopicLeftAlone: a cairn-workflow.md Cairn leaves as it is (a FIFO, a
// directory, a symbolic link, a read-only file) keeps every workflow line out of auto-memory,
// and every transition says so; cairn doctor said "ok" for auto-memory all the same, as it
// looked at MEMORY.md alone. It fails the check with the memory's own step.
func TestDoctorMemoryTopicLeftAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lay  func(t *testing.T, topic string)
		fix  string
	}{
		{"fifo", func(t *testing.T, topic string) { noErr(t, syscall.Mkfifo(topic, 0o600)) }, "move or rename it; Cairn retries L2 lines after each turn"},
		{"directory", func(t *testing.T, topic string) { noErr(t, os.Mkdir(topic, 0o700)) }, "move or rename it; Cairn retries L2 lines after each turn"},
		{"link", func(t *testing.T, topic string) {
			real := filepath.Join(t.TempDir(), "cairn-workflow.md")
			noErr(t, os.WriteFile(real, []byte("x\n"), 0o600))
			noErr(t, os.Symlink(real, topic))
		}, "replace the link with a copy of the file it leads to; Cairn retries L2 lines after each turn"},
		{"read-only", func(t *testing.T, topic string) {
			noErr(t, os.WriteFile(topic, []byte("x\n"), 0o400))
		}, "make it writable (chmod u+w); Cairn retries L2 lines after each turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			noErr(t, os.MkdirAll(e.memoryDir(), 0o700))
			tc.lay(t, filepath.Join(e.memoryDir(), "cairn-workflow.md"))
			c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory topic file")
			if c == nil || c.OK || c.Fix != tc.fix || !strings.Contains(c.Detail, "cairn-workflow.md") {
				t.Fatalf("doctor says %+v, want the fix %q", c, tc.fix)
			}
		})
	}
	// A usable one, or none yet, passes.
	e := newEnv(t)
	if c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory topic file"); c == nil || !c.OK {
		t.Fatalf("no cairn-workflow.md yet: doctor says %+v", c)
	}
}

// TestDoctorMemoryLockLeftAlone: a FIFO or a directory where Cairn keeps its memory lock keeps
// every L2 line and learning out, and cairn doctor said "ok" for auto-memory. It fails a check
// of its own with the step.
func TestDoctorMemoryLockLeftAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory lock"); c == nil || !c.OK {
		t.Fatalf("no lock file yet: doctor says %+v", c)
	}
	noErr(t, os.MkdirAll(e.memoryDir(), 0o700))
	noErr(t, syscall.Mkfifo(filepath.Join(e.memoryDir(), ".cairn-memory.lock"), 0o600))
	c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "auto-memory lock")
	if c == nil || c.OK || c.Fix != "move or rename it; Cairn retries L2 lines after each turn" || !strings.Contains(c.Detail, ".cairn-memory.lock is a FIFO") {
		t.Fatalf("doctor says %+v", c)
	}
}
