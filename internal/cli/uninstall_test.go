package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cairn uninstall --yes takes the memory directory's lock file out with Cairn's lines and
// files: it is Cairn's too, and was left there for good.
func TestUninstallRemovesTheMemoryLock(t *testing.T) {
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	lock := filepath.Join(p.memory, ".cairn-memory.lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the workflow's memory line left no lock file: %v", err)
	}
	mustRun(t, p, "", "uninstall", "--yes")
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after cairn uninstall --yes: %s: %v; want it removed", lock, err)
	}
}

// When Cairn's part of auto-memory could not be looked at or taken out, uninstall said
// "Auto-memory unavailable — learnings will not persist", the warning of a session's learning,
// which is not what an uninstall failed at. It says what failed, in the memory directory.
func TestUninstallMemoryFailureSaysWhatFailed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, index string)
		said  string
	}{
		{"MEMORY.md not looked at", func(t *testing.T, index string) {
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(index, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "auto-memory: reading MEMORY.md: "},
		{"Cairn's line not taken out", func(t *testing.T, index string) {
			if err := os.Chmod(index, 0o444); err != nil {
				t.Fatal(err)
			}
		}, "auto-memory: writing MEMORY.md: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newCLIProject(t)
			mustRun(t, p, "", "start", "apex", "uninstall suite")
			mustRun(t, p, "", "transition", "plan")
			tc.plant(t, filepath.Join(p.memory, "MEMORY.md"))
			_, out := p.run("", "uninstall", "--yes")
			if strings.Contains(out, "learnings will not persist") || !strings.Contains(out, tc.said) {
				t.Errorf("cairn uninstall --yes said:\n%s\nwant %q, and nothing of learnings", out, tc.said)
			}
		})
	}
}

// A read-only MEMORY.md (Cairn writes no file its owner made read-only) kept Cairn's line, and
// the step was "run cairn uninstall again to retry", which fails the same way. It gives the
// step that works; after it the same command takes the line out.
func TestUninstallOverAReadOnlyIndex(t *testing.T) {
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	index := filepath.Join(p.memory, "MEMORY.md")
	if err := os.Chmod(index, 0o444); err != nil {
		t.Fatal(err)
	}
	code, out := p.run("", "uninstall", "--yes")
	if code == 0 || strings.Contains(out, "to retry") || !strings.Contains(out, "make it writable (chmod u+w), then run cairn uninstall again") {
		t.Errorf("uninstall over a read-only MEMORY.md: exit %d\n%s", code, out)
	}
	if err := os.Chmod(index, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, "", "uninstall", "--yes")
	if b, err := os.ReadFile(index); err != nil || strings.Contains(string(b), "cairn-workflow.md") {
		t.Errorf("MEMORY.md after the uninstall: %q %v", b, err)
	}
}
