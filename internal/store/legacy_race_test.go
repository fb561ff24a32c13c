package store_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestRetireLegacyNeverOverwritesABackup: a backup that appears under the name Cairn picked
// for a seed file's original, between the pick and the rename, is kept, and the original
// goes to the next free name. Before, the rename replaced it: that earlier backup was lost.
func TestRetireLegacyNeverOverwritesABackup(t *testing.T) {
	dir, root, seed := seedProject(t, "seed001/apex-implement.json")
	pd := openDir(t, root)
	earlier := []byte("a backup made by someone else")
	fsys := &appearFS{FS: pd, prefix: ".claude/workflow-state.v1.json.bak", onLook: true, content: earlier}
	w, err := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow)), store.WithProjectFS(fsys)).ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", w.Notices, err)
	}
	if fsys.appeared != ".claude/workflow-state.v1.json.bak" {
		t.Fatal("the backup name was never looked at or renamed onto")
	}
	if got, err := os.ReadFile(filepath.Join(root, ".claude", "workflow-state.v1.json.bak")); err != nil || string(got) != string(earlier) {
		t.Fatalf("the earlier backup now holds %.40q (%v)", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(root, ".claude", "workflow-state.v1-2.json.bak")); err != nil || string(got) != string(seed) {
		t.Fatalf("the seed file's original is not kept under the next free name: %.40q (%v)", got, err)
	}
	if !strings.HasSuffix(w.Notices[0].Message, "the original is kept as .claude/workflow-state.v1-2.json.bak") {
		t.Fatalf("notice %q does not name where the original is", w.Notices[0].Message)
	}
	if _, err := os.Lstat(filepath.Join(root, ".claude", "workflow-state.json")); !os.IsNotExist(err) {
		t.Fatalf("the seed file is still in place: %v", err)
	}
}

// takeOnWriteFS creates the file take as Cairn starts writing it: after every look at the
// name, before the write lands.
type takeOnWriteFS struct {
	durable.FS
	take    string
	content []byte
	taken   bool
}

func (f *takeOnWriteFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if flag&os.O_CREATE != 0 && !f.taken && strings.HasPrefix(name, durable.TempPrefix(f.take)) {
		f.taken = true
		if err := durable.WriteFile(f.FS, f.take, f.content, 0o600); err != nil {
			return nil, err
		}
	}
	return f.FS.OpenFile(name, flag, perm)
}

// TestMigrateOwnNeverOverwritesABackup: a file made under the backup name Cairn picked for
// its own snapshot's original, between the look and the write, is kept, and the original
// goes to the next free name. Before, the write replaced it.
func TestMigrateOwnNeverOverwritesABackup(t *testing.T) {
	old := migrateTestdata(t, "schema1/record.json")
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.WorkflowFile), old, 0o600); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	earlier := []byte("a backup made by someone else")
	fsys := &takeOnWriteFS{FS: d, take: "workflow-state.v1.json.bak", content: earlier}
	w, err := mustOpen(t, dir, store.WithFS(fsys)).ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", w.Notices, err)
	}
	if !fsys.taken {
		t.Fatal("the backup was never written")
	}
	if got, err := os.ReadFile(filepath.Join(dir, "workflow-state.v1.json.bak")); err != nil || string(got) != string(earlier) {
		t.Fatalf("the earlier backup now holds %.40q (%v)", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "workflow-state.v1-2.json.bak")); err != nil || string(got) != string(old) {
		t.Fatalf("the original is not kept under the next free name: %.40q (%v)", got, err)
	}
	if !strings.HasSuffix(w.Notices[0].Message, "the original is kept as workflow-state.v1-2.json.bak") {
		t.Fatalf("notice %q does not name where the original is", w.Notices[0].Message)
	}
}
