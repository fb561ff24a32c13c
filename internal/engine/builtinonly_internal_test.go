package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuiltinOnlyPassesOverStrayFiles: the session start's and status line's fast path (the
// built-ins, no YAML parsed) was given up for any file in .claude/workflows, a .DS_Store or a
// notes file included, and each such run listed, sorted and walked the whole directory (with
// 100,000 stray files, cairn status took over a second). It is given up only for a file the
// full load reads or warns about: NAME.md, or NAME.MD.
func TestBuiltinOnlyPassesOverStrayFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []string
		fast  bool
	}{
		{"none", nil, true},
		{"stray files", []string{".DS_Store", "notes.txt", "sub/x.md", ".#rev.md"}, true},
		{"a definition", []string{"notes.txt", "rev.md"}, false},
		{"a misnamed definition", []string{"REV.MD"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			en, _ := openS1(t)
			if err := os.MkdirAll(en.workflow, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				p := filepath.Join(en.workflow, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("---\nphases: [a, b]\n---\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := en.builtinOnly("apex") != nil; got != tc.fast {
				t.Errorf("files %q: fast path taken %v, want %v", tc.files, got, tc.fast)
			}
		})
	}
}
