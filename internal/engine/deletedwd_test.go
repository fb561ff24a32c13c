package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestOpenWithTheWorkingDirectoryDeleted: a process whose working directory was deleted (a
// hook started in a directory removed since) opens the state of the project an absolute
// CLAUDE_PROJECT_DIR names, which needs no working directory; before, it failed at getwd.
// Without such a project dir the failure is still said.
func TestOpenWithTheWorkingDirectoryDeleted(t *testing.T) {
	project, gone := t.TempDir(), t.TempDir()
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Getwd(); err == nil {
		t.Skip("getwd succeeds in a deleted directory here")
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": project, "HOME": t.TempDir()}
	e, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatalf("opening with CLAUDE_PROJECT_DIR=%s: %v", project, err)
	}
	defer e.Close()
	if e.ProjectRoot() != project {
		t.Errorf("project root %s, want %s", e.ProjectRoot(), project)
	}
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
		t.Errorf("start: %v", err)
	}
	env["CLAUDE_PROJECT_DIR"] = "project"
	if _, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }}); err == nil || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("a relative CLAUDE_PROJECT_DIR with no working directory: %v", err)
	}
}
