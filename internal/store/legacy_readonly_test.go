package store_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// noWrites is a state directory whose lock can be taken (its lock file is there, and the
// directory's mode, not a read-only mount, keeps writes out) but where nothing can be written.
type noWrites struct{ durable.FS }

func erofs(op, name string) error { return &fs.PathError{Op: op, Path: name, Err: syscall.EROFS} }

func (n noWrites) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, erofs("open", name)
	}
	return n.FS.OpenFile(name, flag, perm)
}
func (noWrites) Rename(o, _ string) error          { return erofs("rename", o) }
func (noWrites) RenameNoReplace(o, _ string) error { return erofs("rename", o) }
func (noWrites) Remove(name string) error          { return erofs("remove", name) }
func (noWrites) RemoveAll(name string) error       { return erofs("remove", name) }
func (noWrites) Mkdir(name string, _ fs.FileMode) error {
	return erofs("mkdir", name)
}

// TestOlderSnapshotInReadOnlyStateDir: an older record in the snapshot of a state directory
// that cannot be written is read, migrated in memory, with a notice that says it was not
// written and the one step that has it written; nothing in the directory changes. Once the
// directory can be written, the next read migrates it on disk as ever, keeping the original.
// Before, the read failed on the lock (or on writing the backup) and the workflow could not
// be resumed at all.
func TestOlderSnapshotInReadOnlyStateDir(t *testing.T) {
	old := migrateTestdata(t, "schema1/record.json")
	for name, wrap := range map[string]func(durable.FS) durable.FS{
		"no-lock":   func(d durable.FS) durable.FS { return readOnly{d} },
		"no-writes": func(d durable.FS) durable.FS { return noWrites{d} },
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
			mustOpen(t, dir) // makes the directory
			snap := filepath.Join(dir, store.WorkflowFile)
			if err := os.WriteFile(snap, old, 0o600); err != nil {
				t.Fatal(err)
			}
			d := openDir(t, dir)
			ro := mustOpen(t, dir, store.WithFS(wrap(d)))
			var id string
			for read := 1; read <= 2; read++ {
				w, err := ro.ReadWorkflow()
				if err != nil {
					t.Fatalf("read %d: %v", read, err)
				}
				if !bytes.Contains(w.Data, []byte(`"version":"2.0"`)) || w.ID == "" || w.Revision < 1 {
					t.Fatalf("read %d: not migrated: %s %d %s", read, w.ID, w.Revision, w.Data)
				}
				if id != "" && w.ID != id {
					t.Fatalf("read %d: id %s, was %s", read, w.ID, id)
				}
				id = w.ID
				if len(w.Notices) != 1 || w.Notices[0].Path != store.WorkflowFile {
					t.Fatalf("read %d: notices %+v, want one about the snapshot", read, w.Notices)
				}
				msg := w.Notices[0].Message
				for _, want := range []string{"written by an older Cairn", "in memory", "cannot be written", "make the state directory writable"} {
					if !strings.Contains(msg, want) {
						t.Fatalf("read %d: %q does not say %q", read, msg, want)
					}
				}
			}
			if b, _ := os.ReadFile(snap); !bytes.Equal(b, old) {
				t.Fatal("the snapshot changed")
			}
			if baks, _ := filepath.Glob(filepath.Join(dir, "*.bak")); len(baks) != 0 {
				t.Fatalf("backups written: %v", baks)
			}
			if _, err := os.Stat(filepath.Join(dir, "journal", id+".jsonl")); !os.IsNotExist(err) {
				t.Fatalf("a journal was written: %v", err)
			}
			// Writable again: migrated on disk, the original kept, the same workflow.
			w, err := mustOpen(t, dir).ReadWorkflow()
			if err != nil || w.ID != id || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
				t.Fatalf("writable: %+v %v", w, err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "workflow-state.v1.json.bak")); err != nil || !bytes.Equal(b, old) {
				t.Fatalf("original not kept: %v", err)
			}
		})
	}
}

// TestSeedFileWithReadOnlyStateDir: a seed's state file in a project whose state directory
// cannot be written is read and migrated in memory, as an older snapshot there is, with a
// notice saying nothing was written and the one step; the seed file is left as it is. Once
// the directory can be written, the next read migrates it and keeps the original. Before, the
// read failed on the lock, saying that "the existing state can still be read" while none was.
func TestSeedFileWithReadOnlyStateDir(t *testing.T) {
	old := migrateTestdata(t, "seed001/apex-implement.json")
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	mustOpen(t, dir)
	seed := filepath.Join(filepath.Dir(dir), "workflow-state.json")
	if err := os.WriteFile(seed, old, 0o600); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	ro := mustOpen(t, dir, store.WithFS(readOnly{d}))
	var id string
	for read := 1; read <= 2; read++ {
		w, err := ro.ReadWorkflow()
		if err != nil {
			t.Fatalf("read %d: %v", read, err)
		}
		if !bytes.Contains(w.Data, []byte(`"version":"2.0"`)) || (id != "" && w.ID != id) {
			t.Fatalf("read %d: %s %s", read, w.ID, w.Data)
		}
		id = w.ID
		if len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-pending" || w.Notices[0].Path != ".claude/workflow-state.json" {
			t.Fatalf("read %d: notices %+v", read, w.Notices)
		}
		for _, want := range []string{"written by an older Cairn", "in memory", "cannot be written", "make the state directory writable"} {
			if !strings.Contains(w.Notices[0].Message, want) {
				t.Fatalf("read %d: %q does not say %q", read, w.Notices[0].Message, want)
			}
		}
	}
	if b, _ := os.ReadFile(seed); !bytes.Equal(b, old) {
		t.Fatal("the seed file changed or moved")
	}
	if _, err := os.Stat(filepath.Join(dir, store.WorkflowFile)); !os.IsNotExist(err) {
		t.Fatalf("a snapshot was written: %v", err)
	}
	w, err := mustOpen(t, dir).ReadWorkflow()
	if err != nil || w.ID != id || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("writable: %+v %v", w, err)
	}
}
