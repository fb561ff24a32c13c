package memory

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file Cairn cannot read, renamed over MEMORY.md between the compare and the swap (here one
// larger than Cairn handles), is what the swap displaces into the temp file: it must go back to
// MEMORY.md, as the error says Cairn leaves it, not be removed with the temp file.
func TestUnreadableDisplacedFileGoesBack(t *testing.T) {
	dir, path := theirs(t, "# theirs\n")
	big := bytes.Repeat([]byte("# theirs, and a lot of it\n"), maxFile/20)
	swapHook = func(p string) {
		if p != path {
			return
		}
		swapHook = nil
		renameOver(t, path, func(tmp string) error { return os.WriteFile(tmp, big, 0o644) })
	}
	defer func() { swapHook = nil }()
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	if !IsUnavailable(err) {
		t.Fatalf("Record = %v, want it to give up on a file it cannot read", err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, big) {
		t.Errorf("MEMORY.md holds %d bytes (%v), want the other writer's %d", len(got), err, len(big))
	}
	noTempLeft(t, dir)
}

// A symlink renamed over MEMORY.md between the compare and the swap is left alone, as one
// that was there before the read is: it goes back to MEMORY.md, not out with the temp file
// while Cairn writes its edit of the linked file's content in its place.
func TestDisplacedSymlinkGoesBack(t *testing.T) {
	dir, path := theirs(t, "# theirs\n")
	const notes = "# notes, linked\n"
	target := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(target, []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	swapHook = func(p string) {
		if p != path {
			return
		}
		swapHook = nil
		renameOver(t, path, func(tmp string) error { return os.Symlink("notes.md", tmp) })
	}
	defer func() { swapHook = nil }()
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	if !IsUnavailable(err) {
		t.Errorf("Record = %v, want it to leave the symlink alone", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("MEMORY.md is no longer the symlink: %v, %v", fi, err)
	}
	if got := readFile(t, target); got != notes {
		t.Errorf("the linked file holds %q, want %q", got, notes)
	}
	noTempLeft(t, dir)
}

// A symlink renamed over MEMORY.md between the swap and the hand-back of a busy displaced
// file is a newer write too: it stays, and the busy file goes.
func TestHandBackLeavesANewerSymlink(t *testing.T) {
	dir, path := theirs(t, "# theirs\n")
	w := writing
	defer func() { writing = w }()
	writing = func(p string) (bool, bool) {
		if !strings.HasPrefix(filepath.Base(p), ".tmp-"+IndexFile) {
			return w(p)
		}
		writing = w
		renameOver(t, path, func(tmp string) error { return os.Symlink("notes.md", tmp) })
		return true, true
	}
	if err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed"); !IsUnavailable(err) {
		t.Errorf("Record = %v, want it to leave the symlink alone", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("MEMORY.md is no longer the symlink: %v, %v", fi, err)
	}
	noTempLeft(t, dir)
}

// A writer that removes MEMORY.md between the compare and the swap (after one whose content
// the swap displaced and handed back): the file must not become an empty one nobody can read.
func TestRemovalBeforeTheSwap(t *testing.T) {
	dir, path := theirs(t, "# theirs 0\n")
	calls := 0
	swapHook = func(p string) {
		if p != path {
			return
		}
		calls++ // odd calls write, even ones remove
		if calls%2 == 1 {
			if err := os.WriteFile(path, fmt.Appendf(nil, "# theirs %d\n", calls), 0o644); err != nil {
				t.Error(err)
			}
		} else if err := os.Remove(path); err != nil {
			t.Error(err)
		}
	}
	defer func() { swapHook = nil }()
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	swapHook = nil
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() == 0 || fi.Size() == 0 {
		t.Fatalf("MEMORY.md is %v, %d bytes", fi.Mode(), fi.Size())
	}
	if got := readFile(t, path); !strings.HasSuffix(got, "plan completed\n") {
		t.Errorf("MEMORY.md = %q, want Cairn's line as its edit left it", got)
	}
	noTempLeft(t, dir)
}

// theirs is a memory directory whose MEMORY.md another writer left holding content.
func theirs(t *testing.T, content string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// renameOver replaces path as another writer does: create makes the new file beside it, and
// a rename puts it in place.
func renameOver(t *testing.T, path string, create func(tmp string) error) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "model-new")
	if err := create(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
