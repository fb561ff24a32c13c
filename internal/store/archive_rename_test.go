package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
)

// appearFS is a state directory where a file, content, appears at the first name that starts
// with prefix and ends with suffix that a rename is about to move something onto (someone
// else's write landing between Cairn's look and its rename), just before that rename; with
// onLook, also just after Cairn looks at that name (Lstat), whichever comes first.
type appearFS struct {
	durable.FS
	prefix, suffix string
	onLook         bool
	content        []byte
	appeared       string
}

func (f *appearFS) appear(newname string) {
	if f.appeared != "" || !strings.HasPrefix(newname, f.prefix) || !strings.HasSuffix(newname, f.suffix) {
		return
	}
	f.appeared = newname
	if err := durable.WriteFile(f.FS, newname, f.content, 0o600); err != nil {
		panic(err)
	}
}

func (f *appearFS) Lstat(name string) (os.FileInfo, error) {
	fi, err := f.FS.Lstat(name)
	if f.onLook {
		f.appear(name)
	}
	return fi, err
}

func (f *appearFS) Rename(oldname, newname string) error {
	f.appear(newname)
	return f.FS.Rename(oldname, newname)
}

func (f *appearFS) RenameNoReplace(oldname, newname string) error {
	f.appear(newname)
	return f.FS.RenameNoReplace(oldname, newname)
}

// TestArchiveJournalMoveNeverReplaces: the active journal follows its snapshot into the
// archive's directory by a rename that never replaces: a journal.jsonl someone put there after
// Cairn looked is kept, and so is the workflow's own journal, in quarantine/ with a notice.
// Before, the rename replaced theirs.
func TestArchiveJournalMoveNeverReplaces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cairn")
	clock := store.WithClock(func() time.Time { return fixedNow })
	if _, err := mustOpen(t, dir, clock).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(filepath.Join(dir, "journal", wfID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	f := &appearFS{FS: d, prefix: "archive/" + wfID + "-", suffix: "/journal.jsonl", content: []byte("theirs\n")}
	s := mustOpen(t, dir, store.WithFS(f), clock)
	info, _ := s.Archive("completed")
	if f.appeared == "" {
		t.Fatal("the journal was never moved")
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.appeared))); err != nil || string(b) != "theirs\n" {
		t.Fatalf("the journal.jsonl someone else put in %s was replaced: %q %v", info.Dir, b, err)
	}
	// The workflow's own journal is kept in quarantine/, not left in journal/, where a read
	// would rebuild the archived workflow from it as the active one.
	kept, _ := filepath.Glob(filepath.Join(dir, "quarantine", wfID+".jsonl-*"))
	if len(kept) != 1 {
		t.Fatalf("the workflow's own journal is not in quarantine/: %v", kept)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(b, ours) {
		t.Fatalf("the workflow's own journal was lost: %q %v", b, err)
	}
	if !slices.ContainsFunc(info.Notices, func(n store.Notice) bool { return n.Kind == "quarantined" && strings.Contains(n.Message, info.Dir) }) {
		t.Fatalf("no notice says where the journal went: %+v", info.Notices)
	}
	if w, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the archived workflow is active again: %+v %v", w, err)
	}
}

// TestReclaimJournalNeverReplaces: a journal brought back from an archive directory (what an
// older Cairn killed mid-archive left) never replaces one that appeared where it goes after
// Cairn looked: that one is the active workflow's, and the archive's stays where it is.
// Before, the rename replaced it.
func TestReclaimJournalNeverReplaces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cairn")
	s := mustOpen(t, dir)
	for _, st := range []string{"analyze", "plan"} {
		if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	jf := filepath.Join(dir, "journal", wfID+".jsonl")
	theirs, err := os.ReadFile(jf)
	if err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, "archive", wfID+"-20261123T101500.000Z")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(jf, filepath.Join(left, "journal.jsonl")); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	f := &appearFS{FS: d, prefix: "journal/", suffix: wfID + ".jsonl", content: theirs}
	if res, err := mustOpen(t, dir, store.WithFS(f)).UpdateWorkflow(setNext(wfID, "implement")); err != nil || res.Revision != 3 {
		t.Fatalf("update: %+v %v", res, err)
	}
	if f.appeared == "" {
		t.Fatal("the journal was never reclaimed")
	}
	if _, err := os.Lstat(filepath.Join(left, "journal.jsonl")); err != nil {
		t.Fatalf("the archive directory's journal was moved over the one that appeared: %v", err)
	}
	if b, err := os.ReadFile(jf); err != nil || !bytes.HasPrefix(b, theirs) {
		t.Fatalf("the journal that appeared was replaced: %q %v", b, err)
	}
}

// TestReclaimTakesOnlyTheWorkflowsOwnJournal: with the active journal missing, a journal in an
// archive directory of the same workflow without a snapshot is brought back only when it ends
// at the active snapshot (its revision, and its state where the journal records it): what an
// older Cairn's half-done archive left. Another line's journal, as a half-pruned conflict
// archive of the workflow leaves, is not taken for the workflow's own: the workflow goes on
// from its snapshot, not from that line's states, and that journal stays where it is.
func TestReclaimTakesOnlyTheWorkflowsOwnJournal(t *testing.T) {
	s, dir, otherDir := twoLines(t)
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	if err := os.Remove(jp); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "archive", "conflict-"+wfID+"-20261101T000000.000Z")
	if err := os.MkdirAll(half, 0o700); err != nil {
		t.Fatal(err)
	}
	theirs, _ := os.ReadFile(filepath.Join(otherDir, "journal", wfID+".jsonl"))
	if err := os.WriteFile(filepath.Join(half, "journal.jsonl"), theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := s.UpdateWorkflow(setNext(wfID, "d"))
	if err != nil || res.Revision != 4 || !bytes.Contains(res.Data, []byte(`"d"`)) {
		t.Fatalf("next change: revision %d %s (%v), want 4 from our revision 3", res.Revision, res.Data, err)
	}
	if b, _ := os.ReadFile(filepath.Join(half, "journal.jsonl")); !bytes.Equal(b, theirs) {
		t.Fatal("the other line's journal was moved")
	}

	// The workflow's own journal, left in a directory without a snapshot, still comes back.
	own := filepath.Join(dir, "archive", wfID+"-20261102T000000.000Z")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(jp, filepath.Join(own, "journal.jsonl")); err != nil {
		t.Fatal(err)
	}
	res, err = s.UpdateWorkflow(setNext(wfID, "e"))
	if err != nil || res.Revision != 5 {
		t.Fatalf("after the own journal was left in an archive directory: %+v %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(own, "journal.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("the workflow's own journal was not brought back: %v", err)
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Records) != 2 || j.Records[1].Revision != 5 {
		t.Fatalf("journal after the reclaim: %+v, %v; want revisions 4 and 5", j.Records, err)
	}
}
