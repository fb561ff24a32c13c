package memory

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A file Cairn cannot read, renamed over MEMORY.md between the compare and the swap (here one
// larger than Cairn handles), is what the swap displaces into the temp file: it must go back to
// MEMORY.md, as the error says Cairn leaves it, not be removed with the temp file.
func TestUnreadableDisplacedFileGoesBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, []byte("# theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("# theirs, and a lot of it\n"), maxFile/20)
	swapHook = func(p string) {
		if p != path {
			return
		}
		swapHook = nil
		tmp := filepath.Join(dir, "model-tmp")
		if err := os.WriteFile(tmp, big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { swapHook = nil }()
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	if !IsUnavailable(err) {
		t.Fatalf("Record = %v, want it to give up on a file it cannot read", err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, big) {
		t.Errorf("MEMORY.md holds %d bytes (%v), want the other writer's %d", len(got), err, len(big))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(leftovers) > 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
}
