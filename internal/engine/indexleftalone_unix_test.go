//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A MEMORY.md Cairn leaves as it is (read-only, a FIFO) in a memory directory of a long path:
// the line's warning named the file whole before its step, and the report of the session
// start that expired the workflow, which cuts a warning at 320 characters, cut the step off.
func TestIndexLeftAloneOfALongPathKeepsItsStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, step string
		plant      func(t *testing.T, path string)
	}{
		{"read-only", "chmod u+w", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("# Mine\n"), 0o444); err != nil {
				t.Fatal(err)
			}
		}},
		{"a FIFO", "move or rename it", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.home, strings.Repeat("a", 200), strings.Repeat("b", 200))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			e.vars["CAIRN_MEMORY_DIR"] = dir
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c", TTL: "1h"}))(t)
			tc.plant(t, filepath.Join(dir, "MEMORY.md"))
			e.clock.Add(2 * time.Hour)
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			if !strings.Contains(strings.Join(r.Warnings, "\n"), "auto-memory line not written") {
				t.Fatalf("warnings %q: want the expiry's line said not written", r.Warnings)
			}
			if !strings.Contains(r.Report, tc.step) {
				t.Errorf("resume report:\n%s\nwant the step %q", r.Report, tc.step)
			}
		})
	}
}
