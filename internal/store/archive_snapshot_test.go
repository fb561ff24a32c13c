package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestArchiveNeverMovesTheSnapshotOverAFile: the active snapshot's move into its new archive
// directory never replaces a file someone else put there meanwhile, and recovery after a kill
// at that point never takes that file for the archived snapshot: the archive is undone,
// theirs is kept with a notice naming the directory, and the workflow stays active with its
// journal. Before, the rename replaced their file, and recovery moved the journal of the
// workflow, still active, into the directory beside it.
func TestArchiveNeverMovesTheSnapshotOverAFile(t *testing.T) {
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			dir := t.TempDir()
			if _, err := mustOpen(t, dir).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
				t.Fatal(err)
			}
			// Just before the active snapshot is moved into its new archive directory.
			f := &dropFS{file: store.WorkflowFile, at: func(name string) (string, bool) {
				return path.Dir(name), strings.HasPrefix(name, "archive/") && strings.HasSuffix(name, "/"+store.WorkflowFile)
			}}
			info, err := openDropped(t, dir, f, killed).ArchiveIf("completed", wfID)
			if err == nil || f.dropped == "" {
				t.Fatalf("archive: %+v %v (dropped %q), want it undone", info, err, f.dropped)
			}
			s := mustOpen(t, dir)
			res, err := s.UpdateWorkflow(setNext(wfID, "plan"))
			if err != nil || res.Revision != 2 {
				t.Fatalf("update after: %+v %v, want revision 2 of the workflow", res, err)
			}
			if j, err := s.ReadJournal(wfID); err != nil || len(j.Records) != 2 {
				t.Fatalf("journal: %d records, %v", len(j.Records), err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.dropped))); err != nil || !bytes.Equal(b, []byte("theirs")) {
				t.Fatalf("their %s was not kept: %q %v", f.dropped, b, err)
			}
			notices := append(info.Notices, res.Notices...)
			if !slices.ContainsFunc(notices, func(n store.Notice) bool { return n.Kind == "archive-left" && n.Path == path.Dir(f.dropped) }) {
				t.Fatalf("no notice names %s: %+v", path.Dir(f.dropped), notices)
			}
			if list, err := s.ListArchives(); err != nil || len(list) != 0 {
				t.Fatalf("archives %+v %v, want none", list, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "archive", "pending.json")); !os.IsNotExist(err) {
				t.Fatalf("archive/pending.json is still there: %v", err)
			}
		})
	}
}

// TestArchiveWritesNeverReplaceAFileInItsDirectory: a file an archive writes into its new
// directory (archive.json, an archived record, an adoption's copies) is never written over a
// file of that name someone else put there meanwhile: the archive is undone, theirs is kept,
// and a notice names the directory. Before, each was replaced.
func TestArchiveWritesNeverReplaceAFileInItsDirectory(t *testing.T) {
	for _, c := range []struct {
		file    string
		archive func(s *store.Store) (store.ArchiveInfo, error)
	}{
		{"archive.json", func(s *store.Store) (store.ArchiveInfo, error) { return s.ArchiveIf("completed", wfID) }},
		{store.WorkflowFile, func(s *store.Store) (store.ArchiveInfo, error) {
			return s.ArchiveRecord(record("incoming-1", 5, "plan"), "conflict", nil)
		}},
		{"journal.jsonl", func(s *store.Store) (store.ArchiveInfo, error) {
			info, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(2)), nil)
			return info, err
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			w := ourLine(t, mustOpen(t, dir), 3)
			f := &dropFS{file: c.file, at: func(name string) (string, bool) {
				return path.Dir(name), strings.HasPrefix(name, "archive/") && strings.HasPrefix(path.Base(name), durable.TempPrefix(c.file))
			}}
			info, err := c.archive(openDropped(t, dir, f, false))
			if err == nil || f.dropped == "" {
				t.Fatalf("archive: %+v %v (dropped %q), want it undone", info, err, f.dropped)
			}
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.dropped))); err != nil || !bytes.Equal(b, []byte("theirs")) {
				t.Fatalf("their %s was not kept: %q %v", f.dropped, b, err)
			}
			if !slices.ContainsFunc(info.Notices, func(n store.Notice) bool { return n.Kind == "archive-left" && n.Path == path.Dir(f.dropped) }) {
				t.Fatalf("no notice names %s: %+v", path.Dir(f.dropped), info.Notices)
			}
			s := mustOpen(t, dir)
			if now, err := s.ReadWorkflow(); err != nil || !bytes.Equal(now.Data, w.Data) {
				t.Fatalf("active after: %s %v, want the workflow as it was", now.Data, err)
			}
			if list, err := s.ListArchives(); err != nil || len(list) != 0 {
				t.Fatalf("archives %+v %v, want none", list, err)
			}
		})
	}
}

// TestRetentionLeavesADirectoryAnArchiveLeft: a directory an undone archive left because it
// held another's files (here their workflow-state.json, with Cairn's archive.json beside it),
// which its notice says was left as it is, is not an archive, and retention never removes it.
// Before, the next archive over the retention took it for the oldest archive and removed it.
func TestRetentionLeavesADirectoryAnArchiveLeft(t *testing.T) {
	dir := t.TempDir()
	if _, err := mustOpen(t, dir).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	f := &dropFS{file: store.WorkflowFile, at: func(name string) (string, bool) {
		return path.Dir(name), strings.HasPrefix(name, "archive/") && strings.HasSuffix(name, "/"+store.WorkflowFile)
	}}
	if _, err := openDropped(t, dir, f, false).ArchiveIf("completed", wfID); err == nil || f.dropped == "" {
		t.Fatalf("archive: %v (dropped %q), want it undone", err, f.dropped)
	}
	s := mustOpen(t, dir, store.WithRetention(1))
	for _, next := range []string{"", "wf-1"} { // wfID, still active, then wf-1
		if next != "" {
			if _, err := s.UpdateWorkflow(setNext(next, "plan")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Archive("completed"); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.dropped))); err != nil || !bytes.Equal(b, []byte("theirs")) {
		t.Fatalf("their %s was removed: %q %v", f.dropped, b, err)
	}
	if list, err := s.ListArchives(); err != nil || len(list) != 1 {
		t.Fatalf("archives %+v %v, want the newest only", list, err)
	}
}
