package cli_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cairn uninstall --yes takes the memory directory's lock file out with Cairn's lines and
// files: it is Cairn's too, and was left there for good.
func TestUninstallRemovesTheMemoryLock(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, index string)
		said  string
	}{
		{"MEMORY.md not looked at", func(t *testing.T, index string) {
			// Larger than Cairn reads (a directory there holds no line, and is passed over).
			if err := os.Truncate(index, 5<<20); err != nil {
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
			t.Parallel()
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
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	index := filepath.Join(p.memory, "MEMORY.md")
	if err := os.Chmod(index, 0o444); err != nil {
		t.Fatal(err)
	}
	// Without --yes it says the step too, not that --yes removes it, which fails.
	if code, out := p.run("", "uninstall"); code != 0 || !strings.Contains(out, "Nothing was removed: auto-memory: writing MEMORY.md: "+index+" is read-only; Cairn leaves it as it is; make it writable (chmod u+w), then cairn uninstall --yes removes it all.") {
		t.Errorf("uninstall (no --yes) over a read-only MEMORY.md: exit %d\n%s", code, out)
	}
	// --json's dry run carries the same next step, for a script to follow.
	if code, out := p.run("", "uninstall", "--json"); code != 0 || !strings.Contains(out, `"next": "auto-memory: writing MEMORY.md: `+index+` is read-only; Cairn leaves it as it is; make it writable (chmod u+w), then cairn uninstall --yes removes it all"`) {
		t.Errorf("uninstall --json (no --yes) over a read-only MEMORY.md: exit %d\n%s", code, out)
	}
	code, out := p.run("", "uninstall", "--yes")
	if code == 0 || strings.Contains(out, "to retry") || !strings.Contains(out, "make it writable (chmod u+w), then run cairn uninstall again") {
		t.Errorf("uninstall over a read-only MEMORY.md: exit %d\n%s", code, out)
	}
	if err := os.Chmod(index, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, "", "uninstall", "--yes")
	// It held only Cairn's line, so it goes with it.
	if b, err := os.ReadFile(index); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MEMORY.md after the uninstall: %q %v", b, err)
	}
}

// A MEMORY.md that is a symbolic link (a ~/.claude kept in dotfiles), which Cairn leaves as it
// is, kept Cairn's line and cairn-workflow.md, and uninstall said "Removed." (or "Nothing of
// Cairn's to remove here.") with exit 0. It says what is left and the step that works; after
// it the same command takes them out.
func TestUninstallOverALinkedIndex(t *testing.T) {
	t.Parallel()
	for _, withState := range []bool{true, false} {
		t.Run(fmt.Sprintf("state %t", withState), func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			mustRun(t, p, "", "start", "apex", "uninstall suite")
			mustRun(t, p, "", "transition", "plan")
			if !withState {
				mustRun(t, p, "", "uninstall", "--yes", "--with-state")
				if err := os.Mkdir(p.memory, 0o700); err != nil { // it went, empty
					t.Fatal(err)
				}
			}
			index := filepath.Join(p.memory, "MEMORY.md")
			kept := filepath.Join(p.base, "dotfiles", "MEMORY.md")
			if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
				t.Fatal(err)
			}
			ours := "- [Cairn workflow](cairn-workflow.md) — Active APEX workflow\n"
			if err := os.WriteFile(kept, []byte("- the user's own line\n"+ours), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.memory, "cairn-workflow.md"), []byte("---\nname: cairn-workflow\n---\n- line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(index)
			if err := os.Symlink(kept, index); err != nil {
				t.Fatal(err)
			}
			// The step names the file the link leads to, and keeps the link (the person's
			// dotfiles): replacing it with a copy would end their setup. Without --yes it is the
			// step too, not "--yes removes it", which would fail.
			step := "take the lines linking cairn-workflow.md and cairn-learning-*.md out of " + kept + " (the link stays), then "
			if code, out := p.run("", "uninstall"); !strings.Contains(out, step) || strings.Contains(out, "--yes removes it.") {
				t.Errorf("uninstall (no --yes) over a linked MEMORY.md: exit %d\n%s", code, out)
			}
			code, out := p.run("", "uninstall", "--yes")
			if code == 0 || strings.Contains(out, "Removed.") || strings.Contains(out, "Nothing of Cairn's") ||
				!strings.Contains(out, step+"run cairn uninstall again") {
				t.Errorf("uninstall over a linked MEMORY.md: exit %d\n%s", code, out)
			}
			if err := os.WriteFile(kept, []byte("- the user's own line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mustRun(t, p, "", "uninstall", "--yes")
			if b, err := os.ReadFile(index); err != nil || string(b) != "- the user's own line\n" {
				t.Errorf("MEMORY.md after the uninstall: %q %v", b, err)
			}
			if fi, err := os.Lstat(index); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link MEMORY.md was not kept: %v %v", fi, err)
			}
			if _, err := os.Stat(filepath.Join(p.memory, "cairn-workflow.md")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("cairn-workflow.md after the uninstall: %v", err)
			}
		})
	}
}

// With Cairn's line and file taken out of auto-memory by hand (or a workflow's line by its
// end), uninstall had no memory lines or files to remove, and left Cairn's lock and its record
// of the learnings it wrote in the memory directory for good, saying "Removed." (the memory mark
// went) or "Nothing of Cairn's to remove here.". Both go now; the person's MEMORY.md stays.
func TestUninstallTakesOutCairnsMemoryBookkeeping(t *testing.T) {
	t.Parallel()
	for _, twice := range []bool{false, true} {
		name := "the memory mark there"
		if twice {
			name = "nothing else"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			mustRun(t, p, "", "start", "apex", "uninstall suite")
			mustRun(t, p, "", "transition", "plan")
			index := filepath.Join(p.memory, "MEMORY.md")
			if err := os.WriteFile(index, []byte("- my own note\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(p.memory, "cairn-workflow.md")); err != nil {
				t.Fatal(err)
			}
			record := filepath.Join(p.memory, ".cairn-written.json")
			if err := os.WriteFile(record, []byte(`{"learnings":{"cairn-learning-gone.md":"00"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if twice {
				// The mark goes first, leaving a plan with nothing in it.
				if err := os.Remove(filepath.Join(p.root, ".claude", "cairn", "l2-mark.json")); err != nil {
					t.Fatal(err)
				}
			}
			lock := filepath.Join(p.memory, ".cairn-memory.lock")
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("the workflow's memory line left no lock file: %v", err)
			}
			mustRun(t, p, "", "uninstall", "--yes")
			for _, f := range []string{record, lock} {
				if _, err := os.Lstat(f); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("after cairn uninstall --yes: %s: %v; want it removed", f, err)
				}
			}
			if b, err := os.ReadFile(index); err != nil || string(b) != "- my own note\n" {
				t.Errorf("MEMORY.md became %q (%v)", b, err)
			}
		})
	}
}

// The memory directory Cairn made for its line stayed behind, empty, after cairn uninstall
// --yes. It goes when nothing is left in it; one holding anything else, or reached through a
// symbolic link, stays.
func TestUninstallRemovesAnEmptyMemoryDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, p *cliProject) // after Cairn wrote there
		gone  bool
	}{
		{"only Cairn's", func(*testing.T, *cliProject) {}, true},
		{"a memory of the user's", func(t *testing.T, p *cliProject) {
			if err := os.WriteFile(filepath.Join(p.memory, "user.md"), []byte("mine\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			if err := os.Remove(p.memory); err != nil {
				t.Fatal(err)
			}
			mustRun(t, p, "", "start", "apex", "uninstall suite")
			mustRun(t, p, "", "transition", "plan")
			tc.plant(t, p)
			mustRun(t, p, "", "uninstall", "--yes")
			if _, err := os.Lstat(p.memory); errors.Is(err, fs.ErrNotExist) != tc.gone {
				t.Errorf("after cairn uninstall --yes: %s: %v; want gone %t", p.memory, err, tc.gone)
			}
		})
	}
	// A linked memory directory: the link stays, and the directory it leads to.
	p := newCLIProject(t)
	real := filepath.Join(p.base, "real-memory")
	if err := os.Rename(p.memory, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p.memory); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	mustRun(t, p, "", "uninstall", "--yes")
	if _, err := os.Stat(p.memory); err != nil {
		t.Errorf("a linked memory directory after cairn uninstall --yes: %v; want the link and its directory kept", err)
	}
}

// A MEMORY.md that is a directory (or a FIFO: uninstall_fifo_unix_test.go) holds no line of
// Cairn's, yet uninstall refused all of auto-memory over it: cairn-workflow.md stayed, with
// exit 1 and "move or rename it, then run cairn uninstall again". It removes Cairn's files and
// the rest, says what it left, and exits 0.
func TestUninstallOverAnIndexThatIsADirectory(t *testing.T) {
	t.Parallel()
	uninstallOverOddIndex(t, func(t *testing.T, index string) {
		if err := os.Mkdir(index, 0o700); err != nil {
			t.Fatal(err)
		}
	}, "a directory")
}

func uninstallOverOddIndex(t *testing.T, plant func(t *testing.T, index string), kind string) {
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "uninstall suite")
	mustRun(t, p, "", "transition", "plan")
	index := filepath.Join(p.memory, "MEMORY.md")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	plant(t, index)
	topic := filepath.Join(p.memory, "cairn-workflow.md")
	if code, out := p.run("", "uninstall"); code != 0 || !strings.Contains(out, "    file cairn-workflow.md") {
		t.Errorf("uninstall (no --yes) over a MEMORY.md that is %s: exit %d; want cairn-workflow.md shown\n%s", kind, code, out)
	}
	code, out := p.run("", "uninstall", "--yes")
	if code != 0 || !strings.Contains(out, "Removed.") || !strings.Contains(out, index+" is "+kind+", not a regular file, so it holds no line of Cairn's: left as it is") {
		t.Errorf("uninstall --yes over a MEMORY.md that is %s: exit %d\n%s", kind, code, out)
	}
	if _, err := os.Lstat(topic); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cairn-workflow.md after the uninstall: %v; want it removed", err)
	}
	if _, err := os.Lstat(index); err != nil {
		t.Errorf("MEMORY.md after the uninstall: %v; want it left as it is", err)
	}
}
