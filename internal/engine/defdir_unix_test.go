//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A definition file that cannot be read for what it is (ls lists it) is told as that, with
// the step: "no such file or directory" about a link to a missing file, or "a symlink, FIFO,
// device or directory is in its place" about a FIFO, would leave the person guessing; one too
// large says by how much. The
// other definitions load.
func TestUnreadableDefinitionFileIsNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		place func(e *env, p string) error
		want  string
	}{
		{"dangling symlink", func(e *env, p string) error { return os.Symlink(filepath.Join(e.project, "defs", "review.md"), p) },
			"not read: it is a symbolic link to PROJECT/defs/review.md, which does not exist: point it at the definition file"},
		{"symlink to itself", func(e *env, p string) error { return os.Symlink("review.md", p) },
			"not read: it is a symbolic link to review.md, and the links from there lead round in a loop: point it at the definition file"},
		{"symlinks to each other", func(e *env, p string) error {
			if err := os.Symlink("review.md", filepath.Join(filepath.Dir(p), "loop.txt")); err != nil {
				return err
			}
			return os.Symlink("loop.txt", p)
		}, "not read: it is a symbolic link to loop.txt, and the links from there lead round in a loop: point it at the definition file"},
		{"fifo", func(e *env, p string) error { return syscall.Mkfifo(p, 0o644) },
			"not read: it is a FIFO, not a regular file: put the definition in a regular file of that name"},
		{"symlink to a directory", func(e *env, p string) error { return os.Symlink(filepath.Join(e.project, ".git"), p) },
			"not read: it is a directory, not a regular file: put the definition in a regular file of that name"},
		{"too large", func(e *env, p string) error {
			return os.WriteFile(p, []byte("---\nname: review\nphases: [a, b]\n---\n"+strings.Repeat("x", 300<<10)), 0o644)
		}, "not read: it is 307236 bytes, more than the 262144 a definition may have: shorten it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/workflows/other.md", "---\nname: other\nphases: [a, b]\n---\n")
			if err := tc.place(e, filepath.Join(e.project, ".claude", "workflows", "review.md")); err != nil {
				t.Fatal(err)
			}
			r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			want := "workflow definition .claude/workflows/review.md: " + strings.ReplaceAll(tc.want, "PROJECT", e.project)
			if !strings.Contains(r.SystemMessage, want) {
				t.Errorf("system message %q, want it to contain %q", r.SystemMessage, want)
			}
			if _, err := e.open("s1").Start(engine.StartRequest{Type: "other", Context: "x"}); err != nil {
				t.Errorf("the other definition does not load: %v", err)
			}
		})
	}
}

// .claude/workflows as a symbolic link that leads nowhere (its target missing, a submodule not
// checked out, or links in a loop) is told at session start with the link's target and the
// step, not as a raw system error nor, for a missing target, not at all (the project's own
// definitions, gates and all, silently gave way to the built-ins). The built-ins still load.
func TestDefinitionsDirectoryLinkThatLeadsNowhereIsShown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target, want string
	}{
		{"missing target", "../shared/workflows", "it is a symbolic link to ../shared/workflows, which does not exist"},
		{"loop", "workflows", "it is a symbolic link to workflows, and the links from there lead round in a loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/settings.json", "{}")
			if err := os.Symlink(tc.target, filepath.Join(e.project, ".claude", "workflows")); err != nil {
				t.Fatal(err)
			}
			r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			want := "reading workflow definitions in " + filepath.Join(e.project, ".claude", "workflows") + ": not read: " + tc.want + "; to use them, the user points it at the directory that holds the definitions"
			if !strings.Contains(r.SystemMessage, want) {
				t.Errorf("system message %q, want it to contain %q", r.SystemMessage, want)
			}
			if _, err := e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
				t.Errorf("the built-ins do not load: %v", err)
			}
		})
	}
}

// TestEditorLockFileIsNoDefinition: while Emacs edits .claude/workflows/rev.md it keeps a lock
// file beside it, .#rev.md, a symbolic link to "user@host.pid:boot" that leads nowhere. Every
// command, hook and session start warned "workflow definition .#rev.md: not read: it is a
// symbolic link to root@box.4242:1700000000, which does not exist: point it at the definition
// file" for as long as the file was open. It is not read, and nothing is said.
func TestEditorLockFileIsNoDefinition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/rev.md", "---\nphases: [draft, done]\n---\n")
	if err := os.Symlink("root@box.4242:1700000000", filepath.Join(e.project, ".claude", "workflows", ".#rev.md")); err != nil {
		t.Fatal(err)
	}
	en := e.open("s1")
	if c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions"); c == nil || !c.OK || !strings.Contains(c.Detail, "rev") {
		t.Fatalf("doctor says %+v, want ok with rev loaded", c)
	}
	if w := en.Warnings(); len(w) != 0 {
		t.Fatalf("warnings %q, want none for an editor's lock file", w)
	}
}

// .claude/workflows as a FIFO, or a symbolic link to a FIFO or a file, was told "is a file, not
// a directory", with the step for a definition copied there before the directory was made:
// what is there is named, with the link's target and the step that fits, and doctor's step is
// to make it a directory. The built-ins still load.
func TestDefinitionsDirectoryOfAnotherKindIsNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		place func(e *env, p string) error
		want  string
	}{
		{"fifo", func(_ *env, p string) error { return syscall.Mkfifo(p, 0o644) },
			"not read: it is a FIFO, not a directory; to use them, the user makes it a directory that holds the definitions"},
		{"symlink to a fifo", func(e *env, p string) error {
			if err := syscall.Mkfifo(filepath.Join(e.project, "pipe"), 0o644); err != nil {
				return err
			}
			return os.Symlink("../pipe", p)
		}, "not read: it is a symbolic link to ../pipe, which is a FIFO, not a directory; to use them, the user points it at the directory that holds the definitions"},
		{"symlink to a file", func(e *env, p string) error {
			e.write("notes.txt", "x")
			return os.Symlink("../notes.txt", p)
		}, "not read: it is a symbolic link to ../notes.txt, which is a file, not a directory; to use them, the user points it at the directory that holds the definitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/settings.json", "{}")
			dir := filepath.Join(e.project, ".claude", "workflows")
			if err := tc.place(e, dir); err != nil {
				t.Fatal(err)
			}
			r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			want := "reading workflow definitions in " + dir + ": " + tc.want
			if !strings.Contains(r.SystemMessage, want) {
				t.Errorf("system message %q, want it to contain %q", r.SystemMessage, want)
			}
			en := e.open("s1")
			if c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions"); c == nil || c.OK || !strings.Contains(c.Fix, "a directory this user can read") {
				t.Errorf("doctor says %+v, want the step that makes it a directory", c)
			}
			if _, err := en.Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
				t.Errorf("the built-ins do not load: %v", err)
			}
		})
	}
}
