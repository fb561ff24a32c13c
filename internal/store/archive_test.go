package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

func TestArchiveMovesWorkflowAndKeepsNewestN(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(3), store.WithClock(clockFrom(fixedNow)))
	if _, err := s.Archive("completed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("archive with nothing active: %v", err)
	}
	reasons := []string{"completed", "expired", "replaced", "conflict", "completed"}
	var infos []store.ArchiveInfo
	for i, reason := range reasons {
		id := fmt.Sprintf("apex-2026112%dT173000Z-00%d", i, i)
		s.UpdateWorkflow(setNext(id, "analyze"))
		s.UpdateWorkflow(setNext(id, "plan"))
		info, err := s.Archive(reason)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
		if info.WorkflowID != id || info.Reason != reason || info.Revision != 2 {
			t.Fatalf("info %+v", info)
		}
		wantPrefix := id + "-"
		if reason == "conflict" {
			wantPrefix = "conflict-" + id + "-"
		}
		if !strings.HasPrefix(info.Dir, wantPrefix) {
			t.Fatalf("dir %s, want prefix %s", info.Dir, wantPrefix)
		}
		if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("still active after archive: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "journal", id+".jsonl")); !os.IsNotExist(err) {
			t.Fatalf("journal left behind: %v", err)
		}
		snap, j, err := s.ReadArchive(info.Dir)
		if err != nil || revOf(t, snap) != 2 || len(j.Records) != 2 {
			t.Fatalf("archived content: %v, %d records", err, len(j.Records))
		}
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != 3 {
		t.Fatalf("list %+v %v", list, err)
	}
	for i, a := range list {
		want := infos[len(infos)-1-i]
		if a.Dir != want.Dir || a.Reason != want.Reason || !a.At.Equal(want.At) {
			t.Errorf("list[%d] = %+v, want %+v", i, a, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
	dirs := 0
	for _, e := range entries {
		if e.IsDir() {
			dirs++
		}
	}
	if dirs != 3 {
		t.Fatalf("%d archive dirs kept, want 3", dirs)
	}
	for _, old := range infos[:2] {
		if _, err := os.Stat(filepath.Join(dir, "archive", old.Dir)); !os.IsNotExist(err) {
			t.Errorf("%s not pruned", old.Dir)
		}
	}
}

// ArchiveIf archives the active workflow only when it is the one named: an operation that
// committed a workflow's end must not archive the next one another process started meanwhile.
func TestArchiveIfLeavesAnotherWorkflow(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveIf("completed", "another-id"); !errors.Is(err, store.ErrNotActive) {
		t.Fatalf("ArchiveIf of a workflow that is not the active one: %v, want ErrNotActive", err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Fatalf("the active workflow after a refused ArchiveIf: %q, %v; want %s in place", w.ID, err, wfID)
	}
	if list, err := s.ListArchives(); err != nil || len(list) != 0 {
		t.Fatalf("archives after a refused ArchiveIf: %+v, %v", list, err)
	}
	if info, err := s.ArchiveIf("completed", wfID); err != nil || info.WorkflowID != wfID {
		t.Fatalf("ArchiveIf of the active workflow: %+v, %v", info, err)
	}
}

// An index that cannot be read is an error, never an empty list: "no archives" would be a
// wrong answer (show would say an archived id does not exist, sync that nothing ended).
func TestListArchivesSaysTheIndexIsUnreadable(t *testing.T) {
	s, dir := newStore(t)
	if err := os.MkdirAll(filepath.Join(dir, "archive", "index.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListArchives()
	if err == nil {
		t.Fatalf("ListArchives = %+v, nil; want an error for an index that is a directory", list)
	}
	if want := "reading the archive index in " + dir; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "index.jsonl") {
		t.Fatalf("error %q does not say %q and name the index", err, want)
	}
}

func TestRetentionNeverTouchesActiveWorkflowOrForeignFiles(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1), store.WithClock(clockFrom(fixedNow)))
	s.UpdateWorkflow(setNext("old-1", "plan"))
	s.Archive("completed")
	s.UpdateWorkflow(setNext("old-2", "plan"))
	s.Archive("expired")
	os.WriteFile(filepath.Join(dir, "archive", "notes.txt"), []byte("mine"), 0o600)
	os.Mkdir(filepath.Join(dir, "archive", "my-stuff"), 0o700)
	s.UpdateWorkflow(setNext("active-1", "plan"))
	if _, err := s.ArchiveRecord(record("incoming-1", 5, "plan"), "conflict", nil); err != nil {
		t.Fatal(err)
	}
	w, err := s.ReadWorkflow()
	if err != nil || w.ID != "active-1" {
		t.Fatalf("active workflow touched: %+v %v", w, err)
	}
	for _, keep := range []string{"notes.txt", "my-stuff"} {
		if _, err := os.Stat(filepath.Join(dir, "archive", keep)); err != nil {
			t.Errorf("%s removed", keep)
		}
	}
	list, _ := s.ListArchives()
	if len(list) != 1 || list[0].WorkflowID != "incoming-1" || !strings.HasPrefix(list[0].Dir, "conflict-incoming-1-") {
		t.Fatalf("list %+v", list)
	}
}

// TestListArchivesDoesNotScanArchiveDir plants 200 archive directories (40 times what retention keeps) and checks that
// neither ListArchives nor ReadWorkflow lists archive/.
func TestListArchivesDoesNotScanArchiveDir(t *testing.T) {
	_, dir := newStore(t)
	// Far more than retention keeps: the trace, not the time, shows archive/ is not listed.
	n := 200
	for i := 0; i < n; i++ {
		a := filepath.Join(dir, "archive", fmt.Sprintf("wf-%05d-%s", i, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Second).Format("20060102T150405.000Z")))
		if err := os.MkdirAll(a, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a, store.WorkflowFile), record(fmt.Sprintf("wf-%05d", i), 1, "plan"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := openDir(t, dir)
	ff := &durabletest.Faulty{FS: d}
	s := mustOpen(t, dir, store.WithFS(ff))
	s.UpdateWorkflow(setNext(wfID, "plan"))
	if _, err := s.ReadWorkflow(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListArchives(); err != nil {
		t.Fatal(err)
	}
	for _, op := range ff.Trace() {
		if strings.Contains(op, "readdir archive") {
			t.Fatalf("a read path listed archive/: %s", op)
		}
	}
	// Archiving is a write path: it applies retention once, down to the newest 5 (the archives
	// the index lacked count as older than the one just made).
	if _, err := s.Archive("completed"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
	if len(entries) != store.DefaultRetention+1 { // + index.jsonl
		t.Fatalf("%d entries after retention", len(entries))
	}
	list, _ := s.ListArchives()
	if len(list) != store.DefaultRetention || list[0].WorkflowID != wfID {
		t.Fatalf("list %+v", list)
	}
}

// TestHalfDoneArchiveOfOlderCairnIsUndone: Cairn before the archive marker moved the journal
// into the archive first; a kill before the snapshot followed left the workflow active
// without its journal. The next locked read brings the journal back.
func TestHalfDoneArchiveOfOlderCairnIsUndone(t *testing.T) {
	s, dir := newStore(t)
	s.UpdateWorkflow(setNext(wfID, "analyze"))
	s.UpdateWorkflow(setNext(wfID, "plan"))
	half := filepath.Join(dir, "archive", wfID+"-20261122T180000.000Z")
	os.MkdirAll(half, 0o700)
	if err := os.Rename(filepath.Join(dir, "journal", wfID+".jsonl"), filepath.Join(half, "journal.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(setNext(wfID, "implement")); err != nil {
		t.Fatal(err)
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Records) != 3 || len(j.Problems) != 0 {
		t.Fatalf("journal after recovery: %d records %v %v", len(j.Records), j.Problems, err)
	}
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 3 {
		t.Fatalf("rebuilt: %d %v", w.Revision, err)
	}
}

// TestRetentionKeepsTheNewArchiveWhateverTheClock is issue 13's reproduction: archives whose
// directory names carry a future stamp (a fast clock, a copied project) must not make the
// archive just written the "oldest". Retention follows the index's order and says what it
// removed.
func TestRetentionKeepsTheNewArchiveWhateverTheClock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  time.Time
		rename func(dir, name string) string
	}{
		{"renamed to 2027", fixedNow, func(dir, name string) string { return strings.Replace(name, "2026", "2027", 1) }},
		{"clock ran fast", fixedNow.AddDate(1, 0, 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := clockFrom(tc.start)
			s, dir := newStore(t, store.WithClock(func() time.Time { return now() }))
			for i := range 5 {
				s.UpdateWorkflow(setNext(fmt.Sprintf("old-%d", i), "plan"))
				info, err := s.Archive("completed")
				if err != nil {
					t.Fatal(err)
				}
				if tc.rename != nil {
					old := filepath.Join(dir, "archive", info.Dir)
					if err := os.Rename(old, filepath.Join(dir, "archive", tc.rename(dir, info.Dir))); err != nil {
						t.Fatal(err)
					}
				}
			}
			now = clockFrom(fixedNow) // the clock is right again: earlier than every archive
			s.UpdateWorkflow(setNext("apex-x", "plan"))
			info, err := s.Archive("completed")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "archive", info.Dir, store.WorkflowFile)); err != nil {
				t.Fatalf("the archive just made was removed: %v", err)
			}
			if len(info.Pruned) != 1 || !strings.HasPrefix(info.Pruned[0], "old-0-") {
				t.Fatalf("pruned %v, want the oldest, old-0", info.Pruned)
			}
			list, _ := s.ListArchives()
			if len(list) != store.DefaultRetention || list[0].Dir != info.Dir {
				t.Fatalf("list %+v", list)
			}
		})
	}
}

func TestRecentArchivesReadsTheIndexTail(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(100), store.WithClock(clockFrom(fixedNow)))
	var made []string
	for i := range 7 {
		s.UpdateWorkflow(setNext(fmt.Sprintf("wf-%d", i), "plan"))
		info, err := s.Archive("completed")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, info.Dir)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "archive", "index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"dir":"torn`)
	f.Close()
	for _, tc := range []struct {
		n    int
		want int
		more bool
	}{{2, 2, true}, {7, 7, false}, {10, 7, false}, {0, 7, false}} {
		got, more, err := s.RecentArchives(tc.n)
		if err != nil || len(got) != tc.want || more != tc.more {
			t.Fatalf("n=%d: %d archives, more %v, %v", tc.n, len(got), more, err)
		}
		for i, a := range got {
			if a.Dir != made[len(made)-1-i] || a.Type != "apex" || a.Phase != "plan" {
				t.Fatalf("n=%d: [%d] = %+v", tc.n, i, a)
			}
		}
	}
}

// TestReclaimNeverReplacesAJournal: an archive directory of the active workflow holding a
// journal without a snapshot (what an older Cairn's half-done archive left, or a prune cut
// short) gives its journal back only when the active one is missing. An active journal that
// is there but holds no readable line is kept as it is, and the workflow does not jump to the
// other journal's states.
func TestReclaimNeverReplacesAJournal(t *testing.T) {
	s, dir, otherDir := twoLines(t)
	half := filepath.Join(dir, "archive", wfID+"-20261101T000000.000Z")
	os.MkdirAll(half, 0o700)
	theirs, _ := os.ReadFile(filepath.Join(otherDir, "journal", wfID+".jsonl"))
	os.WriteFile(filepath.Join(half, "journal.jsonl"), theirs, 0o600)
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	damaged := []byte("a damaged line\n")
	os.WriteFile(jp, damaged, 0o600)

	res, err := s.UpdateWorkflow(setNext(wfID, "d"))
	if err != nil || res.Revision != 4 || !bytes.Contains(res.Data, []byte(`"d"`)) {
		t.Fatalf("next change: revision %d %s (%v), want 4", res.Revision, res.Data, err)
	}
	if b, _ := os.ReadFile(jp); !bytes.HasPrefix(b, damaged) {
		t.Fatalf("the active journal was replaced: %.100s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(half, "journal.jsonl")); !bytes.Equal(b, theirs) {
		t.Fatal("the archived journal was moved")
	}
}

// TestRetentionWaitsOnADamagedIndex: when archive/index.jsonl has a damaged line, the archive
// directories it does not name may be the ones that line named, the newest ones included, so
// where they belong in the order is not known. Retention then removes nothing and says why,
// instead of taking them for the oldest and removing the newest archives; the index is left as
// it is.
func TestRetentionWaitsOnADamagedIndex(t *testing.T) {
	for _, tt := range []struct {
		name string
		// damage changes the index's lines (the five archives', oldest first).
		damage func(lines [][]byte)
		want   string
	}{
		{"the newest two", func(lines [][]byte) {
			// One cut short, one no longer naming its directory.
			lines[3] = append(lines[3][:20:20], '\n')
			lines[4] = bytes.Replace(lines[4], []byte(`"dir"`), []byte(`"dXr"`), 1)
		}, "has 2 damaged lines, so the place in the order of archives of the 2 archive directories it does not name is not known"},
		{"the newest", func(lines [][]byte) {
			lines[4] = append(lines[4][:20:20], '\n')
		}, "has 1 damaged line, so the place in the order of archives of the 1 archive directory it does not name is not known"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := newStore(t, store.WithRetention(5), store.WithClock(clockFrom(fixedNow)))
			var made []string
			for i := range 5 {
				s.UpdateWorkflow(setNext(fmt.Sprintf("wf-%d", i), "plan"))
				info, err := s.Archive("completed")
				if err != nil || len(info.Pruned) != 0 {
					t.Fatalf("archive %d: %+v %v", i, info, err)
				}
				made = append(made, info.Dir)
			}
			ip := filepath.Join(dir, "archive", "index.jsonl")
			b, _ := os.ReadFile(ip)
			lines := bytes.SplitAfter(b, []byte("\n"))
			tt.damage(lines)
			damaged := bytes.Join(lines, nil)
			os.WriteFile(ip, damaged, 0o600)

			s.UpdateWorkflow(setNext("wf-5", "plan"))
			info, err := s.Archive("completed")
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Pruned) != 0 || info.PruneErr == nil || !strings.Contains(info.PruneErr.Error(), tt.want) {
				t.Fatalf("pruned %v, prune error %v: want nothing removed and why (%q)", info.Pruned, info.PruneErr, tt.want)
			}
			for _, d := range append(made, info.Dir) {
				if _, err := os.Stat(filepath.Join(dir, "archive", d, store.WorkflowFile)); err != nil {
					t.Fatalf("archive %s: %v", d, err)
				}
			}
			if b, _ := os.ReadFile(ip); !bytes.HasPrefix(b, damaged) {
				t.Fatal("the damaged index was rewritten")
			}
		})
	}
}

// TestRetentionLeavesADirectoryWithoutASnapshotAlone: an index line whose directory is gone
// is not pointed at a directory of the same workflow id that holds no snapshot (a journal an
// older Cairn's half-done archive left, which reclaimJournal gives back): it is no archive, so
// it is neither listed nor removed by retention.
func TestRetentionLeavesADirectoryWithoutASnapshotAlone(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1), store.WithClock(clockFrom(fixedNow)))
	s.UpdateWorkflow(setNext("wf-a", "plan"))
	gone, err := s.Archive("completed")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "archive", gone.Dir)); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "archive", "wf-a-20261101T000000.000Z")
	os.MkdirAll(half, 0o700)
	journal := []byte("the only copy of a journal\n")
	if err := os.WriteFile(filepath.Join(half, "journal.jsonl"), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	s.UpdateWorkflow(setNext("wf-b", "plan"))
	info, err := s.Archive("completed")
	if err != nil || info.PruneErr != nil {
		t.Fatalf("archive: %+v %v", info, err)
	}
	if b, err := os.ReadFile(filepath.Join(half, "journal.jsonl")); err != nil || !bytes.Equal(b, journal) {
		t.Fatalf("the directory without a snapshot lost its journal: %q %v (pruned %v)", b, err, info.Pruned)
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != 1 || list[0].Dir != info.Dir {
		t.Fatalf("list %+v %v, want only %s", list, err, info.Dir)
	}
}

// removeFailFS fails removing anything under archive/ with err, as a disk that stops taking
// metadata changes does.
type removeFailFS struct {
	durable.FS
	err error
}

func (r removeFailFS) RemoveAll(name string) error {
	if strings.HasPrefix(name, "archive/") {
		return &os.PathError{Op: "removeall", Path: name, Err: r.err}
	}
	return r.FS.RemoveAll(name)
}

// TestReplaceWorkflowStandsWhenPruneFails: retention failing after ReplaceWorkflow committed
// the replacement does not report the replacement as failed (its callers would say the old
// workflow is still active, and keep the copy that replaced it to settle again): the error is
// the archive's PruneErr, as for every other archive.
func TestReplaceWorkflowStandsWhenPruneFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	{
		s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow)))
		if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Archive("completed"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateWorkflow(setNext("debug-20261123T100000Z-dddd", "x")); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	d := openDir(t, dir)
	s := mustOpen(t, dir, store.WithRetention(1), store.WithClock(clockFrom(fixedNow.Add(time.Hour))),
		store.WithFS(removeFailFS{d, syscall.ENOSPC}))
	info, res, err := s.ReplaceWorkflow(record("apex-20261124T100000Z-eeee", 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
	if err != nil {
		t.Fatalf("ReplaceWorkflow: %v, want the replacement to stand with the prune's error in PruneErr", err)
	}
	if !res.Changed || res.ID != "apex-20261124T100000Z-eeee" || !errors.Is(info.PruneErr, syscall.ENOSPC) {
		t.Fatalf("result %+v, prune error %v", res, info.PruneErr)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != "apex-20261124T100000Z-eeee" {
		t.Fatalf("active after: %s %v", w.ID, err)
	}
}

// Ten or more archives made in one millisecond are named -2, -3, ... -10, -11 after the first:
// with the index lost, its rebuild puts them in that order (numerically, not as strings).
func TestLostIndexRebuildOrdersSuffixesNumerically(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(100), store.WithClock(func() time.Time { return fixedNow }))
	var made []string
	for i := range 12 {
		if i == 11 {
			if err := os.Remove(filepath.Join(dir, "archive", "index.jsonl")); err != nil {
				t.Fatal(err)
			}
		}
		s.UpdateWorkflow(setNext(wfID, "analyze"))
		info, err := s.Archive("completed")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, info.Dir)
	}
	if !strings.HasSuffix(made[11], "-12") {
		t.Fatalf("the last archive is %s, want a -12 suffix", made[11])
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != len(made) {
		t.Fatalf("list %+v %v", list, err)
	}
	for i, a := range list {
		if want := made[len(made)-1-i]; a.Dir != want {
			t.Errorf("list[%d] = %s, want %s", i, a.Dir, want)
		}
	}
}

// twoLines opens two stores holding two lines of workflow wfID: s at revision 3 (states a, b,
// c), and in otherDir one at revision 5 (x … zzz), for the tests that hand that line's journal
// to s.
func twoLines(t *testing.T) (s *store.Store, dir, otherDir string) {
	t.Helper()
	s, dir = newStore(t)
	other, otherDir := newStore(t)
	for _, st := range []string{"a", "b", "c"} {
		if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []string{"x", "y", "z", "zz", "zzz"} {
		if _, err := other.UpdateWorkflow(setNext(wfID, st)); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir, otherDir
}

// TestRetentionKeepsANewerCairnsIndexMembers: the index lines retention writes back keep the
// members a newer Cairn wrote that this one has no field for, as every document Cairn reads
// and writes back does. Before, the first archive that removed an older one rewrote the index
// from the fields it knew, and they were lost.
func TestRetentionKeepsANewerCairnsIndexMembers(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(2), store.WithClock(clockFrom(fixedNow)))
	for i := range 2 {
		s.UpdateWorkflow(setNext(fmt.Sprintf("wf-%d", i), "plan"))
		if _, err := s.Archive("completed"); err != nil {
			t.Fatal(err)
		}
	}
	ip := filepath.Join(dir, "archive", "index.jsonl")
	b, err := os.ReadFile(ip)
	if err != nil {
		t.Fatal(err)
	}
	const newer = `,"pinned":{"by":"a newer Cairn"}}`
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[1] = append(bytes.TrimSuffix(lines[1], []byte("}\n")), newer+"\n"...)
	if err := os.WriteFile(ip, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	s.UpdateWorkflow(setNext("wf-2", "plan"))
	info, err := s.Archive("completed")
	if err != nil || len(info.Pruned) != 1 || info.PruneErr != nil {
		t.Fatalf("archive: %+v %v, want one older archive removed", info, err)
	}
	b, _ = os.ReadFile(ip)
	if got := bytes.SplitAfter(b, []byte("\n")); len(got) < 2 || !bytes.Equal(got[0], lines[1]) {
		t.Fatalf("index after retention:\n%s\nwant its first line to be, as the newer Cairn wrote it:\n%s", b, lines[1])
	}
}

// TestRetentionSaysWhenTheIndexIsTooLarge: an archive/index.jsonl over 16 MiB (archive_retention
// set very high, or lines a newer Cairn made long) cannot be read, so retention cannot know the
// order of the archives and removes none. It did that silently, at every archive from then on;
// it now says so, and how to let retention go on.
func TestRetentionSaysWhenTheIndexIsTooLarge(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1), store.WithClock(clockFrom(fixedNow)))
	for i, id := range []string{"wf-a", "wf-b"} {
		if _, err := s.UpdateWorkflow(setNext(id, "analyze")); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			index := filepath.Join(dir, "archive", "index.jsonl")
			b, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index, append([]byte(strings.Repeat(" ", 17<<20)+"\n"), b...), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		info, err := s.Archive("completed")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		if len(info.Pruned) != 0 || info.PruneErr == nil ||
			!strings.Contains(info.PruneErr.Error(), "too large") ||
			!strings.Contains(info.PruneErr.Error(), filepath.Join(dir, "archive", "index.jsonl")+": "+store.IndexTooLargeStep) {
			t.Fatalf("retention with an index too large to read: pruned %v, %v", info.Pruned, info.PruneErr)
		}
	}
	// The step it gives works: with the index moved out, the next archive prunes again.
	if err := os.Rename(filepath.Join(dir, "archive", "index.jsonl"), filepath.Join(t.TempDir(), "index.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(setNext("wf-c", "analyze")); err != nil {
		t.Fatal(err)
	}
	info, err := s.Archive("completed")
	if err != nil || info.PruneErr != nil || len(info.Pruned) != 2 {
		t.Fatalf("retention with the index moved out: pruned %v, %v, %v", info.Pruned, info.PruneErr, err)
	}
	archives, err := s.ListArchives()
	if err != nil || len(archives) != 1 || archives[0].WorkflowID != "wf-c" {
		t.Fatalf("archives listed after: %+v, %v", archives, err)
	}
}

// TestRetentionKeepsArchivesAnOldIndexLacks: archive/index.jsonl put back from a backup lacks
// the lines of the archives made since. Retention took every archive the index does not name
// for older than every one it names, and so removed the newest archives first, keeping the
// oldest. An unlisted archive now takes its place among the listed ones by its time.
func TestRetentionKeepsArchivesAnOldIndexLacks(t *testing.T) {
	s, dir, made := archiveOverAnOldIndex(t, nil)
	for _, d := range made[1:] {
		if _, err := os.Stat(filepath.Join(dir, "archive", d, store.WorkflowFile)); err != nil {
			t.Errorf("archive %s: %v", d, err)
		}
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != 3 || list[0].Dir != made[3] || list[1].Dir != made[2] || list[2].Dir != made[1] {
		t.Fatalf("list %+v %v, want %v newest first", list, err, made[1:])
	}
}

// archiveOverAnOldIndex makes four archives under a retention of three, the index put back
// before the last from a backup that names the first two only, and edit (if not nil) run then
// with the archive dir and the archives made so far. The last archive must prune the oldest.
func archiveOverAnOldIndex(t *testing.T, edit func(archives string, made []string)) (s *store.Store, dir string, made []string) {
	t.Helper()
	s, dir = newStore(t, store.WithRetention(3), store.WithClock(clockFrom(fixedNow)))
	ip := filepath.Join(dir, "archive", "index.jsonl")
	var backup []byte
	for i := range 4 {
		if i == 2 {
			backup, _ = os.ReadFile(ip)
		}
		if i == 3 {
			if err := os.WriteFile(ip, backup, 0o600); err != nil { // the backup put back
				t.Fatal(err)
			}
			if edit != nil {
				edit(filepath.Join(dir, "archive"), made)
			}
		}
		s.UpdateWorkflow(setNext(fmt.Sprintf("wf-%d", i), "plan"))
		info, err := s.Archive("completed")
		if err != nil || info.PruneErr != nil {
			t.Fatalf("archive %d: %+v %v", i, info, err)
		}
		made = append(made, info.Dir)
		if i == 3 && (len(info.Pruned) != 1 || info.Pruned[0] != made[0]) {
			t.Fatalf("pruned %v, want the oldest archive, %s", info.Pruned, made[0])
		}
	}
	return s, dir, made
}

// TestRetentionKeepsReadingTheIndexItWrites: with an archive_retention whose archives' lines
// hold more than the index can be read at (16 MiB; here lowered), retention wrote an index it
// could not read back, and from then on removed nothing; moving the index out, the step it
// gave, only had the next archive write one as large. The oldest lines now leave out the
// summary their archives' records keep: every line stays, retention goes on, and a listing
// still shows each archive's context.
func TestRetentionKeepsReadingTheIndexItWrites(t *testing.T) {
	const keep = 40
	store.SetMaxIndex(t, 16<<10)
	// No power is cut: its 45 archives need no fsyncs.
	s, dir := newStore(t, noSync, store.WithRetention(keep), store.WithClock(clockFrom(fixedNow)))
	context := strings.Repeat("a long context ", 70) // 300 characters of it in every index line
	var made []string
	for i := range keep + 5 {
		id := fmt.Sprintf("wf-%d", i)
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
			doc, _ := json.Marshal(map[string]any{"version": "2.0", "workflow_id": id, "type": "apex",
				"state": "plan", "status": "active", "revision": 1, "context": context})
			return doc, store.Event{Kind: "transition"}, nil
		}); err != nil {
			t.Fatal(err)
		}
		info, err := s.Archive("completed")
		if err != nil || info.PruneErr != nil {
			t.Fatalf("archive %d: %v, retention: %v", i, err, info.PruneErr)
		}
		made = append(made, info.Dir)
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != keep {
		t.Fatalf("%d archives listed, %v; want the newest %d", len(list), err, keep)
	}
	for i, a := range list {
		if want := made[len(made)-1-i]; a.Dir != want {
			t.Fatalf("list[%d] = %s, want %s", i, a.Dir, want)
		}
		if rec, err := s.ReadArchiveRecord(a.Dir); a.Context == "" && (err != nil || !bytes.Contains(rec, []byte(context))) {
			t.Fatalf("archive %s: its context is neither in its index line nor in its record (%v)", a.Dir, err)
		}
	}
	if list[0].Context == "" {
		t.Fatalf("the newest archive's line lost its summary: %+v", list[0])
	}
	if fi, err := os.Stat(filepath.Join(dir, "archive", "index.jsonl")); err != nil || fi.Size() > 16<<10 {
		t.Fatalf("index: %v, %v", fi, err)
	}
}

// TestRetentionTrustsAnUnlistedArchivesNameOverItsArchiveJSON: an archive directory the
// index does not name took its time and workflow id from its archive.json, which a copy (one
// archive's archive.json put in another, a directory copied and renamed) makes another
// archive's: retention placed the newest archive among the oldest and removed it first, and
// the index then named it as another workflow's, so cairn show of its own id did not find it.
// What its name and snapshot say, checked when it was found, now stand.
func TestRetentionTrustsAnUnlistedArchivesNameOverItsArchiveJSON(t *testing.T) {
	for name, edit := range map[string]func(own, oldest []byte) []byte{
		"another's copied": func(_, oldest []byte) []byte { return oldest },
		"its time a year back": func(own, _ []byte) []byte {
			return bytes.Replace(own, []byte(`"at":"2026-`), []byte(`"at":"2025-`), 1)
		},
	} {
		t.Run(name, func(t *testing.T) { retentionWithArchiveJSON(t, edit) })
	}
}

func retentionWithArchiveJSON(t *testing.T, edit func(own, oldest []byte) []byte) {
	s, _, made := archiveOverAnOldIndex(t, func(archives string, made []string) {
		oldest, err := os.ReadFile(filepath.Join(archives, made[0], "archive.json"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(archives, made[2], "archive.json")
		own, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(edit(own, oldest), own) {
			t.Fatalf("archive.json not changed: %s", own)
		}
		if err := os.WriteFile(p, edit(own, oldest), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	list, err := s.ListArchives()
	if err != nil || len(list) != 3 || list[1].Dir != made[2] || list[1].WorkflowID != "wf-2" {
		t.Fatalf("list %+v %v, want %s second, of wf-2", list, err, made[2])
	}
}

// TestReplaceWorkflowRefusedLeavesTheActiveOne: a replacement the store refuses (a secret, a
// record it cannot read, an event detail of a secret's shape) is refused before the active
// workflow is archived. Before, the active one was archived first, and the refusal left no
// workflow active.
func TestReplaceWorkflowRefusedLeavesTheActiveOne(t *testing.T) {
	key := secrettest.Shapes()[0].Text
	secret, _ := json.Marshal(map[string]any{"version": "2.0", "workflow_id": "apex-20261124T100000Z-eeee",
		"type": "apex", "state": "plan", "status": "active", "revision": 1, "context": key})
	for name, c := range map[string]struct {
		rec []byte
		ev  store.Event
	}{
		"secret":        {secret, store.Event{Kind: "migrated"}},
		"no id":         {[]byte(`{"version":"2.0","state":"plan","revision":1}`), store.Event{Kind: "migrated"}},
		"secret detail": {record("apex-20261124T100000Z-eeee", 1, "plan"), store.Event{Kind: "migrated", Detail: "from " + key}},
		"bad kind":      {record("apex-20261124T100000Z-eeee", 1, "plan"), store.Event{Kind: "a b"}},
	} {
		s, _ := newStore(t, noSync)
		if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
			t.Fatal(err)
		}
		info, _, err := s.ReplaceWorkflow(c.rec, "conflict", c.ev, nil)
		if err == nil || info.Dir != "" {
			t.Errorf("%s: archived %q, err %v; want it refused with nothing archived", name, info.Dir, err)
		}
		if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
			t.Errorf("%s: active after: %q %v, want %s", name, w.ID, err, wfID)
		}
	}
}

// mkdirFailFS fails making a directory under archive/ with err.
type mkdirFailFS struct {
	durable.FS
	err error
}

func (m mkdirFailFS) Mkdir(name string, perm fs.FileMode) error {
	if strings.HasPrefix(name, "archive/") {
		return &os.PathError{Op: "mkdir", Path: name, Err: m.err}
	}
	return m.FS.Mkdir(name, perm)
}

// TestReplaceWorkflowNotArchivedSaysNoArchive: a replacement whose archive of the active
// workflow fails (its directory cannot be made: a full disk) returns no archive directory, so
// its caller does not say the active workflow was archived: it is active still.
func TestReplaceWorkflowNotArchivedSaysNoArchive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	if _, err := mustOpen(t, dir, noSync).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir, store.WithFS(mkdirFailFS{durabletest.NoSync{FS: openDir(t, dir)}, syscall.ENOSPC}))
	info, _, err := s.ReplaceWorkflow(record("apex-20261124T100000Z-eeee", 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
	if err == nil || info.Dir != "" {
		t.Errorf("archived %q, err %v; want an error and no archive", info.Dir, err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Errorf("active after: %q %v, want %s", w.ID, err, wfID)
	}
}

// moveUnknownFS fails the active workflow's move into its archive and the look that would say
// whether it moved, as a disk that stops answering does.
type moveUnknownFS struct{ durable.FS }

func (m moveUnknownFS) RenameNoReplace(from, to string) error {
	if from == store.WorkflowFile {
		return &os.PathError{Op: "rename", Path: from, Err: syscall.EIO}
	}
	return m.FS.RenameNoReplace(from, to)
}

func (m moveUnknownFS) Lstat(name string) (fs.FileInfo, error) {
	if strings.HasPrefix(name, "archive/") && strings.HasSuffix(name, "/"+store.WorkflowFile) {
		return nil, &os.PathError{Op: "lstat", Path: name, Err: syscall.EIO}
	}
	return m.FS.Lstat(name)
}

// TestReplaceWorkflowMoveUnknownSaysWhere: a replacement whose archive of the active workflow
// may have moved it (the move failed and whether it happened could not be looked at) names no
// archive, as none is sure, and its error says where the workflow may be. Before, the error
// said the workflow's file was left as it was, and its caller, that nothing moved.
func TestReplaceWorkflowMoveUnknownSaysWhere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	if _, err := mustOpen(t, dir, noSync).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir, store.WithFS(moveUnknownFS{durabletest.NoSync{FS: openDir(t, dir)}}))
	info, _, err := s.ReplaceWorkflow(record("apex-20261124T100000Z-eeee", 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
	if err == nil || info.Dir != "" || strings.Contains(err.Error(), "left as it was") || !strings.Contains(err.Error(), "archived in archive/conflict-") {
		t.Errorf("archive %q, err %v; want an error saying where it may be, and no archive", info.Dir, err)
	}
}

// TestReplaceWorkflowJournalInTheWayLeavesTheActiveOne: a replacement whose journal's place
// holds something other than a file (a directory here, a FIFO alike) is refused before the
// active workflow is archived. Before, the active one was archived first, and the refusal left
// no workflow active.
func TestReplaceWorkflowJournalInTheWayLeavesTheActiveOne(t *testing.T) {
	s, dir := newStore(t, noSync)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	const id = "apex-20261124T100000Z-eeee"
	if err := os.MkdirAll(filepath.Join(dir, "journal", id+".jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	info, _, err := s.ReplaceWorkflow(record(id, 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
	if err == nil || info.Dir != "" {
		t.Errorf("archived %q, err %v; want it refused with nothing archived", info.Dir, err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Errorf("active after: %q %v, want %s", w.ID, err, wfID)
	}
}

// TestReplaceWorkflowJournalTailLeavesTheActiveOne: a replacement whose id has a journal with
// lines already (an older Cairn's, a cut archive's) that its revision does not follow is
// refused before the active workflow is archived. Before, the archive ran first and the
// revision mismatch that followed left no workflow active.
func TestReplaceWorkflowJournalTailLeavesTheActiveOne(t *testing.T) {
	s, dir := newStore(t, noSync)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	const id = "apex-20261124T100000Z-eeee"
	other, odir := newStore(t, noSync)
	for _, state := range []string{"analyze", "plan"} {
		if _, err := other.UpdateWorkflow(setNext(id, state)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(odir, "journal", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "journal", id+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	info, _, err := s.ReplaceWorkflow(record(id, 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
	if !errors.Is(err, store.ErrRevision) || info.Dir != "" {
		t.Errorf("archived %q, err %v; want it refused with nothing archived", info.Dir, err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Errorf("active after: %q %v, want %s", w.ID, err, wfID)
	}
	// A replacement that follows the journal's lines is taken.
	if _, _, err := s.ReplaceWorkflow(record(id, 3, "plan"), "conflict", store.Event{Kind: "migrated"}, nil); err != nil {
		t.Errorf("a replacement at revision 3: %v", err)
	}
}
