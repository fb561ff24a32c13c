//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A definition that is a symbolic link to a file that does not exist is listed by ls, so
// "no such file or directory" about it misleads: the person is told it is a link, to what,
// and the step. The other definitions load.
func TestDanglingDefinitionLinkIsNamed(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/workflows/other.md", "---\nname: other\nphases: [a, b]\n---\n")
	target := filepath.Join(e.project, "defs", "review.md")
	if err := os.Symlink(target, filepath.Join(e.project, ".claude", "workflows", "review.md")); err != nil {
		t.Fatal(err)
	}
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	want := "workflow definition .claude/workflows/review.md: not read: it is a symbolic link to " + target + ", which does not exist: point it at the definition file"
	if !strings.Contains(r.SystemMessage, want) {
		t.Errorf("system message %q, want it to contain %q", r.SystemMessage, want)
	}
	if _, err := e.open("s1").Start(engine.StartRequest{Type: "other", Context: "x"}); err != nil {
		t.Errorf("the other definition does not load: %v", err)
	}
}
