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
