package memory

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A memory directory whose path holds a glob character ('[', '*', '?': from HOME or
// CLAUDE_CONFIG_DIR) has its temp files read as any other's. They were found by filepath.Glob
// on the path, which took the characters as a pattern: in m[1] it read m1's temp files (which
// sweepTemps would settle into m[1]'s files, or remove), and never m[1]'s own.
func TestTempsInADirectoryWithGlobCharacters(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-time.Hour)
	temp := func(dir string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, ".tmp-MEMORY.md-1") // an older Cairn's name, without the sums
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := temp(filepath.Join(base, "m[1]"))
	other := temp(filepath.Join(base, "m1"))
	if _, settled := KeptTemps(filepath.Dir(mine), time.Now()); settled != 1 {
		t.Errorf("KeptTemps of %s counted %d temp files to settle, want its own one", filepath.Dir(mine), settled)
	}
	sweepTemps(filepath.Dir(mine))
	if _, err := os.Stat(mine); err == nil {
		t.Errorf("%s is still there after the sweep", mine)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the sweep of m[1] removed another directory's temp file %s: %v", other, err)
	}
}
