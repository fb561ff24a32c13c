package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A file where the definitions directory belongs (a definition copied to .claude/workflows
// before the directory existed) is told at session start, as a broken definition file is,
// with the step that makes it read; the built-ins still load.
func TestDefinitionsDirectoryThatIsAFileIsShown(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/workflows", "---\nname: review\nphases: [draft, done]\n---\n")
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	want := filepath.FromSlash("workflow definition .claude/workflows: is a file, not a directory: Cairn reads definitions from .claude/workflows/NAME.md; make it a directory")
	if !strings.Contains(r.SystemMessage, want) || !strings.Contains(r.Report, want) {
		t.Errorf("not shown: system message %q, report:\n%s", r.SystemMessage, r.Report)
	}
	if _, err := e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
		t.Errorf("the built-ins do not load: %v", err)
	}
}
