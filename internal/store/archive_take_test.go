package store_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// dirTakeFS is a state directory where someone else makes the directory archive/<prefix>...
// (with a file of theirs in it) just after Cairn first looks at such a name.
type dirTakeFS struct {
	durable.FS
	prefix string
	taken  string
}

func (f *dirTakeFS) Lstat(name string) (os.FileInfo, error) {
	fi, err := f.FS.Lstat(name)
	if f.taken == "" && strings.HasPrefix(name, "archive/"+f.prefix) {
		f.taken = name
		if err := f.FS.Mkdir(name, 0o700); err != nil {
			panic(err)
		}
		if err := durable.WriteFile(f.FS, name+"/theirs.txt", []byte("theirs"), 0o600); err != nil {
			panic(err)
		}
	}
	return fi, err
}

// TestArchiveNeverTakesOverADirectory: an archive directory name taken between Cairn's choice
// of it and its mkdir is left to whoever took it, with what it holds, and the archive is made
// under the next name. Before, the mkdir failed and the undo removed that directory whole.
func TestArchiveNeverTakesOverADirectory(t *testing.T) {
	dir := t.TempDir()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f := &dirTakeFS{FS: d, prefix: wfID + "-"}
	s := mustOpen(t, dir, store.WithFS(f), store.WithClock(func() time.Time { return fixedNow }))
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	info, err := s.Archive("abandoned")
	if f.taken == "" {
		t.Fatal("the archive name was never looked at")
	}
	if b, err := durable.ReadFile(d, f.taken+"/theirs.txt", 1<<10); err != nil || string(b) != "theirs" {
		t.Fatalf("the directory made by someone else lost its file: %q %v", b, err)
	}
	if err != nil {
		t.Fatalf("archive: %v", err)
	}
	if want := strings.TrimPrefix(f.taken, "archive/") + "-2"; info.Dir != want {
		t.Fatalf("archived as %s, want %s", info.Dir, want)
	}
	if _, err := d.Lstat("archive/" + info.Dir + "/" + store.WorkflowFile); err != nil {
		t.Fatalf("the archive has no snapshot: %v", err)
	}
}
