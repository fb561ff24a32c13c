//go:build !windows

package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestDoctorStaleTempsStayInTheStateDirectory: a state subdirectory that is a symlink (a
// repository that commits one) leads out of the state directory, and the temp-named files
// where it points are not Cairn's: doctor neither lists them nor puts them in its rm.
func TestDoctorStaleTempsStayInTheStateDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "temps"}))(t)
	elsewhere := t.TempDir()
	theirs := filepath.Join(elsewhere, ".tmp-notes.txt")
	noErr(t, os.WriteFile(theirs, []byte("someone's notes"), 0o600))
	old := e.clock.Now().Add(-time.Hour)
	noErr(t, os.Chtimes(theirs, old, old))
	for _, sub := range []string{engine.KeptTasksDir, "logs"} {
		p := filepath.Join(en.StateDir(), sub)
		noErr(t, os.RemoveAll(p))
		noErr(t, os.Symlink(elsewhere, p))
	}
	if c := doctorCheck(en, engine.DoctorOptions{}, "stale temp files"); c == nil || !c.OK || strings.Contains(c.Fix+c.Detail, ".tmp-notes") {
		t.Errorf("doctor says %+v, want no temp file where a link points", c)
	}
}

// TestDoctorHardLinkedCheckpoint: a checkpoint with a second hard link is refused by a save
// (writing it would change the other file too), and the agent is told to have the user run
// cairn doctor. Doctor said every check was ok; it names the file and the step.
func TestDoctorHardLinkedCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "links"}))(t)
	must(en.SaveCheckpoint("plan", json.RawMessage(`{"step":1}`)))(t)
	cp := filepath.Join(en.StateDir(), "checkpoints", "plan.json")
	noErr(t, os.Link(cp, filepath.Join(t.TempDir(), "theirs.json")))
	if _, err := en.SaveCheckpoint("plan", json.RawMessage(`{"step":2}`)); err == nil {
		t.Fatal("a hard-linked checkpoint was written over")
	}
	c := doctorCheck(en, engine.DoctorOptions{}, "checkpoint and log files")
	if c == nil || c.OK || !strings.Contains(c.Detail, cp) || !strings.Contains(c.Detail, "hard link") || !strings.Contains(c.Fix, "out of the state directory") {
		t.Errorf("doctor says %+v, want the hard-linked checkpoint named with its step", c)
	}
}

// TestStaleSetReadsNoFIFO: a FIFO at the plugin's checksums or at a set's stamp (.checksums,
// .built-from) hung cairn doctor and every cairn command run from a stamped set, which compare
// them (StaleSet): opened for reading, a FIFO waits for a writer that never comes. It reads as
// a file that cannot be read, as the launcher's test -f has it.
func TestStaleSetReadsNoFIFO(t *testing.T) {
	t.Parallel()
	for _, fifo := range []string{"plugin/release/checksums.txt", "plugin/bin/.checksums", "plugin/bin/.built-from"} {
		t.Run(fifo, func(t *testing.T) {
			work := t.TempDir()
			root, bin := filepath.Join(work, "plugin"), filepath.Join(work, "plugin", "bin")
			noErr(t, os.MkdirAll(filepath.Join(root, "release"), 0o755))
			noErr(t, os.MkdirAll(bin, 0o755))
			noErr(t, os.WriteFile(filepath.Join(root, "release", "checksums.txt"), []byte("sums\n"), 0o644))
			noErr(t, os.WriteFile(filepath.Join(bin, ".checksums"), []byte("sums\n"), 0o644))
			p := filepath.Join(work, fifo)
			_ = os.Remove(p)
			noErr(t, syscall.Mkfifo(p, 0o600))
			done := make(chan string, 1)
			go func() { done <- engine.StaleSet(root, bin) }()
			select {
			case why := <-done:
				if fifo != "plugin/bin/.built-from" && why == "" {
					t.Errorf("StaleSet = \"\", want the set stale with a FIFO at %s", fifo)
				}
			case <-time.After(30 * time.Second): // a guard against the hang only
				t.Fatalf("StaleSet hangs on a FIFO at %s", fifo)
			}
		})
	}
}
