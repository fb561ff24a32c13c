package durable_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
)

// renameNoReplaceCases checks a no-replace rename on fsys: it refuses a taken name of any
// kind, leaving both as they were, and moves to a free one, across directories too.
func renameNoReplaceCases(t *testing.T, fsys durable.FS, rename func(oldname, newname string) error) {
	t.Helper()
	put := func(name, content string) {
		t.Helper()
		if err := durable.WriteFile(fsys, name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	has := func(name, want string) {
		t.Helper()
		got, err := durable.ReadFile(fsys, name, 1<<10)
		if err != nil || string(got) != want {
			t.Fatalf("%s holds %q (%v), want %q", name, got, err, want)
		}
	}
	if err := fsys.Mkdir("sub", 0o700); err != nil {
		t.Fatal(err)
	}
	put("a", "moving")
	put("b.bak", "earlier backup")
	if err := fsys.Mkdir("dir.bak", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, taken := range []string{"b.bak", "dir.bak"} {
		if err := rename("a", taken); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("renaming onto %s: %v, want fs.ErrExist", taken, err)
		}
	}
	has("a", "moving")
	has("b.bak", "earlier backup")
	if err := rename("a", "sub/a.bak"); err != nil {
		t.Fatal(err)
	}
	has("sub/a.bak", "moving")
	if _, err := fsys.Lstat("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a is still there after its move: %v", err)
	}
	if err := rename("a", "c"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("renaming a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestRenameNoReplace(t *testing.T) {
	d, _ := mustDir(t)
	renameNoReplaceCases(t, d, func(o, n string) error { return durable.RenameNoReplace(d, o, n) })
}

func TestRenameNoReplaceSimFS(t *testing.T) {
	f := simfs.New()
	renameNoReplaceCases(t, f, func(o, n string) error { return durable.RenameNoReplace(f, o, n) })
}

// A dangling symlink is a taken name too: renaming onto it would replace the link.
func TestRenameNoReplaceDanglingLink(t *testing.T) {
	d, dir := mustDir(t)
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "b")); err != nil {
		t.Skip(err)
	}
	if err := durable.RenameNoReplace(d, "a", "b"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("renaming onto a dangling symlink: %v, want fs.ErrExist", err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "b")); err != nil || l != "nowhere" {
		t.Fatalf("the symlink is now %q (%v)", l, err)
	}
}

// The moved name and its old directory are synced, so the move survives a power loss.
func TestRenameNoReplaceSyncsBothDirectories(t *testing.T) {
	d, _ := mustDir(t)
	if err := d.Mkdir("sub", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := durable.WriteFile(d, "sub/a", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &durabletest.Faulty{FS: d}
	if err := durable.RenameNoReplace(f, "sub/a", "a.bak"); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 rename-noreplace sub/a -> a.bak", "2 syncdir .", "3 syncdir sub"}
	if got := f.Trace(); !slices.Equal(got, want) {
		t.Fatalf("operations %q, want %q", got, want)
	}
	f = &durabletest.Faulty{FS: d, FailAt: 2}
	if err := durable.RenameNoReplace(f, "a.bak", "sub/a"); !durable.IsNotDurable(err) {
		t.Fatalf("a failed directory sync after the move: %v, want a NotDurableError", err)
	}
}

// WriteFileNoReplace writes a free name durably, and on a taken one returns fs.ErrExist,
// leaves what is there and removes its temp file.
func TestWriteFileNoReplace(t *testing.T) {
	d, dir := mustDir(t)
	if err := durable.WriteFile(d, "b.bak", []byte("earlier backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.WriteFileNoReplace(d, "b.bak", []byte("new"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("writing onto a taken name: %v, want fs.ErrExist", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "b.bak")); err != nil || string(got) != "earlier backup" {
		t.Fatalf("the taken name now holds %q (%v)", got, err)
	}
	f := &durabletest.Faulty{FS: d}
	if err := durable.WriteFileNoReplace(f, "c.bak", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "c.bak")); err != nil || string(got) != "new" {
		t.Fatalf("c.bak holds %q (%v)", got, err)
	}
	if tr := f.Trace(); len(tr) < 2 || !strings.Contains(tr[len(tr)-2], "rename-noreplace") || !strings.HasSuffix(tr[len(tr)-1], "syncdir .") {
		t.Fatalf("operations %q: not a no-replace rename then a directory sync", tr)
	}
	names, err := d.ReadDirNames(".")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"b.bak", "c.bak"}; !slices.Equal(names, want) {
		t.Fatalf("directory holds %q, want %q (no temp file left)", names, want)
	}
}

// TestRemoveIfSame: the file looked at is removed; one put in its place since is kept, and
// leaves no temp file; a name gone already is no error.
func TestRemoveIfSame(t *testing.T) {
	fsys := simfs.New()
	put := func(content string) fs.FileInfo {
		t.Helper()
		if err := durable.WriteFile(fsys, "r.json", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		fi, err := fsys.Lstat("r.json")
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	seen := put("old")
	if removed, err := durable.RemoveIfSame(fsys, "r.json", seen); !removed || err != nil {
		t.Fatalf("the file looked at: removed %v, %v", removed, err)
	}
	if _, err := fsys.Lstat("r.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file looked at is still there: %v", err)
	}
	seen = put("old")
	put("new") // a writer's replace since the look
	if removed, err := durable.RemoveIfSame(fsys, "r.json", seen); removed || err != nil {
		t.Fatalf("a file put there since: removed %v, %v", removed, err)
	}
	if got, err := durable.ReadFile(fsys, "r.json", 1<<10); err != nil || string(got) != "new" {
		t.Errorf("r.json holds %q (%v), want the new file", got, err)
	}
	if names, _ := fsys.ReadDirNames("."); len(names) != 1 {
		t.Errorf("left %q, want r.json alone", names)
	}
	if err := fsys.Remove("r.json"); err != nil {
		t.Fatal(err)
	}
	if removed, err := durable.RemoveIfSame(fsys, "r.json", seen); removed || err != nil {
		t.Errorf("a name gone already: removed %v, %v", removed, err)
	}
}
