package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeedsYAML(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		event string
		want  string
	}{
		{"nothing", nil, EventSessionStart, ""},
		{"definition", []string{".claude/workflows/mine.md"}, EventStop, "defines workflows"},
		{"definition-at-start", []string{".claude/workflows/mine.md"}, EventSessionStart, "defines workflows"},
		{"not-markdown", []string{".claude/workflows/notes.txt", ".claude/workflows/sub.md/x"}, EventSessionStart, ""},
		{"milestones-at-start", []string{"documentation/milestones/_active/m1.md"}, EventSessionStart, "milestone files"},
		{"milestones-at-stop", []string{"documentation/milestones/_active/m1.md"}, EventStop, ""},
		{"milestones-done-only", []string{"documentation/milestones/_done/m1.md"}, EventSessionStart, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("---\n---\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := NeedsYAML(root, tc.event)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("NeedsYAML = %q, want %q", got, tc.want)
			}
		})
	}
}

// Without a cairn binary beside this one the handoff fails, says so, and returns, so the hook
// goes on in this process. (The handoff that works is tested in hooks/*/testdata/script.)
func TestHandOffWithoutCairnBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(exe), "cairn")); err == nil {
		t.Skip("a cairn binary sits beside the test binary: the handoff would replace this process")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return root
		}
		return ""
	}
	if note := HandOff(EventStop, getenv); note != "" {
		t.Fatalf("nothing to hand off, but HandOff said %q", note)
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "workflows", "mine.md"), []byte("---\nphases: [a]\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	note := HandOff(EventStop, getenv)
	for _, want := range []string{"defines workflows", "handing over to", "failed", "not read this time", "make build"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not say %q", note, want)
		}
	}
}
