package workflow_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// On Unix a backslash is a letter of a file name, not a separator: a file named
// `old\apex.md` (a zip made on Windows, unpacked as is) names no type "apex", so with no name
// line it neither overrides the built-in apex nor, broken, takes it down; its name is refused.
func TestFileTypeBackslashOnUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a backslash separates paths on Windows")
	}
	const p = `/p/.claude/workflows/old\apex.md`
	if got := workflow.FileType(p); got != `old\apex` {
		t.Errorf("FileType(%q) = %q, want the whole base name", p, got)
	}
	_, err := workflow.BuildDefinition(p, workflow.Definition{Phases: []string{"a", "b"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "rename the file") {
		t.Errorf("definition in %s: err %v, want its file name refused", p, err)
	}
	set, _ := workflow.LoadDefinitions(map[string][]byte{p: []byte("---\nphases: [\n")}, nil)
	if f := set.Broken("apex"); f != "" {
		t.Errorf("Broken(apex) = %q: a file of another name took the built-in down", f)
	}
}
