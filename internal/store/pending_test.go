package store_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// failOpenFS fails opening one file with err: fs.ErrPermission as a file without read
// permission is refused to a user who is not root, syscall.EIO as a failing disk does.
type failOpenFS struct {
	durable.FS
	name string
	err  error
}

func (d failOpenFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if name == d.name {
		return nil, &fs.PathError{Op: "open", Path: name, Err: d.err}
	}
	return d.FS.OpenFile(name, flag, perm)
}

// TestUnreadablePendingIsSetAside: an archive/pending.json that cannot be read as Cairn's
// marker (a directory, a FIFO, no permission, not JSON) does not stop every locked operation:
// it is moved to quarantine/ whole, with a notice, and the operation goes on.
func TestUnreadablePendingIsSetAside(t *testing.T) {
	for _, kind := range []string{"directory", "fifo", "no permission", "not json"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cairn")
			{
				s := mustOpen(t, dir)
				if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			pend := filepath.Join(dir, "archive", "pending.json")
			os.MkdirAll(filepath.Dir(pend), 0o700)
			var err error
			switch kind {
			case "directory":
				if err = os.Mkdir(pend, 0o700); err == nil {
					err = os.WriteFile(filepath.Join(pend, "kept"), []byte("x"), 0o600)
				}
			case "fifo":
				err = mkfifo(pend)
			default:
				err = os.WriteFile(pend, []byte("{not json"), 0o600)
			}
			if err != nil {
				t.Skip(err)
			}
			d := openDir(t, dir)
			var fsys durable.FS = d
			if kind == "no permission" {
				fsys = failOpenFS{d, "archive/pending.json", fs.ErrPermission}
			}
			s := mustOpen(t, dir, store.WithFS(fsys))
			done := make(chan struct{})
			var res store.Result
			go func() { res, err = s.UpdateWorkflow(setNext(wfID, "plan")); close(done) }()
			select {
			case <-done:
			case <-timeout():
				t.Fatal("the update hangs on archive/pending.json")
			}
			if err != nil {
				t.Fatalf("update with %s for archive/pending.json: %v", kind, err)
			}
			var q string
			for _, n := range res.Notices {
				if n.Kind == "quarantined" {
					q = n.Path
				}
			}
			if !strings.HasPrefix(q, "quarantine/pending.json-") {
				t.Fatalf("notices %+v, want archive/pending.json quarantined", res.Notices)
			}
			if _, err := os.Lstat(filepath.Join(dir, q)); err != nil {
				t.Fatalf("the quarantined copy: %v", err)
			}
			if _, err := os.Lstat(pend); !os.IsNotExist(err) {
				t.Fatalf("archive/pending.json is still there: %v", err)
			}
			if kind == "directory" {
				if b, err := os.ReadFile(filepath.Join(dir, q, "kept")); err != nil || string(b) != "x" {
					t.Fatalf("the directory's contents were not kept: %q, %v", b, err)
				}
			}
			if w, err := s.ReadWorkflow(); err != nil || revOf(t, w.Data) != 2 {
				t.Fatalf("after: %s, %v", w.Data, err)
			}
		})
	}
}

// TestPendingIOErrorStillReads: an I/O error reading archive/pending.json is not set aside (the
// marker may well be Cairn's, and a later operation finishes its archive), but a read must not
// fail on it. With the snapshot there, the workflow is read as it stands, with a notice naming
// the marker; without it, the error is an *UnreadableError, which listings show as a workflow
// on record that cannot be read rather than failing whole.
func TestPendingIOErrorStillReads(t *testing.T) {
	for _, snapshot := range []bool{true, false} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cairn")
			{
				s := mustOpen(t, dir)
				if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			os.MkdirAll(filepath.Join(dir, "archive"), 0o700)
			mark := fmt.Sprintf(`{"dir":"%s-20261123T101500.000Z","workflow_id":%q,"active":true}`, wfID, wfID)
			if err := os.WriteFile(filepath.Join(dir, "archive", "pending.json"), []byte(mark), 0o600); err != nil {
				t.Fatal(err)
			}
			if !snapshot {
				if err := os.Remove(filepath.Join(dir, store.WorkflowFile)); err != nil {
					t.Fatal(err)
				}
			}
			d := openDir(t, dir)
			s := mustOpen(t, dir, store.WithFS(failOpenFS{d, "archive/pending.json", syscall.EIO}))
			w, err := s.ReadWorkflow()
			if !snapshot {
				var unr *store.UnreadableError
				if !errors.As(err, &unr) || !slices.Contains(unr.IDs, wfID) || !strings.Contains(err.Error(), "archive/pending.json") {
					t.Fatalf("ReadWorkflow without a snapshot: %T %v, want an *UnreadableError naming archive/pending.json and %s", err, err, wfID)
				}
				return
			}
			if err != nil || w.ID != wfID || revOf(t, w.Data) != 1 {
				t.Fatalf("ReadWorkflow: %s, %v", w.Data, err)
			}
			if !slices.ContainsFunc(w.Notices, func(n store.Notice) bool {
				return n.Path == "archive/pending.json" && strings.Contains(n.Message, "I/O error")
			}) {
				t.Fatalf("no notice about archive/pending.json: %+v", w.Notices)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "archive", "pending.json")); err != nil || string(b) != mark {
				t.Fatalf("the marker was not left as it was: %q %v", b, err)
			}
		})
	}
}

// lstatFailFS fails every Lstat under dir, and every no-replace rename into it (which looks
// the name up first), with err, as a directory whose entries the disk can no longer read does.
type lstatFailFS struct {
	durable.FS
	dir string
	err error
}

func (l lstatFailFS) Lstat(name string) (fs.FileInfo, error) {
	if strings.HasPrefix(name, l.dir+"/") {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: l.err}
	}
	return l.FS.Lstat(name)
}

func (l lstatFailFS) RenameNoReplace(oldname, newname string) error {
	if strings.HasPrefix(newname, l.dir+"/") {
		return &fs.PathError{Op: "rename", Path: newname, Err: l.err}
	}
	return l.FS.RenameNoReplace(oldname, newname)
}

// TestQuarantineNameErrorDoesNotHang: finding a free name in quarantine/ for a damaged
// snapshot stops at an error other than "not there" (an I/O error, no permission) and says it,
// instead of trying names forever under the workflow lock; the damaged file is left in place.
func TestQuarantineNameErrorDoesNotHang(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cairn")
	{
		s := mustOpen(t, dir)
		if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "quarantine"), 0o700); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	s := mustOpen(t, dir, store.WithFS(lstatFailFS{d, "quarantine", syscall.EIO}))
	var err error
	done := make(chan struct{})
	go func() { _, err = s.ReadWorkflow(); close(done) }()
	select {
	case <-done:
	case <-timeout():
		t.Fatal("ReadWorkflow hangs looking for a free name in quarantine/")
	}
	if err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("ReadWorkflow: %v, want the I/O error", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, store.WorkflowFile)); string(b) != "garbage" {
		t.Fatalf("the damaged snapshot was not left in place: %q", b)
	}
}
