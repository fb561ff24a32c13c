package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
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
	d := openDir(t, dir)
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

// takeThenKillFS is a state directory where someone else makes the directory archive/<prefix>...
// with an archive.json of theirs in it (a person copying an archive back, archive.json first)
// just as Cairn makes a directory of that name, and the process is then killed: every
// operation from there on fails (ff, the Faulty wrapped around it, fails them).
type takeThenKillFS struct {
	durable.FS
	prefix string
	ff     *durabletest.Faulty
	taken  string
}

func (f *takeThenKillFS) take(name string) {
	if f.taken != "" || !strings.HasPrefix(name, "archive/"+f.prefix) {
		return
	}
	f.taken = name
	if err := f.FS.Mkdir(name, 0o700); err != nil {
		panic(err)
	}
	if err := durable.WriteFile(f.FS, name+"/archive.json", []byte(`{"theirs":true}`), 0o600); err != nil {
		panic(err)
	}
	f.ff.FailAt = f.ff.Ops() + 1
}

func (f *takeThenKillFS) Mkdir(name string, perm fs.FileMode) error {
	f.take(name)
	return f.FS.Mkdir(name, perm)
}

func (f *takeThenKillFS) RenameNoReplace(oldname, newname string) error {
	f.take(newname)
	return f.FS.RenameNoReplace(oldname, newname)
}

// TestRecoveryKeepsADirectoryTakenBeforeTheMarkerMovedOn: an archive killed after it found its
// directory's name taken, before archive/pending.json named the next one, leaves a marker
// naming a directory that is not Cairn's; recovery must leave that directory and what it holds
// alone. Before, recovery took it for the half-made archive (it held only archive.json) and
// removed it whole.
func TestRecoveryKeepsADirectoryTakenBeforeTheMarkerMovedOn(t *testing.T) {
	for _, adopt := range []bool{false, true} {
		t.Run(fmt.Sprintf("adopt=%v", adopt), func(t *testing.T) {
			dir := t.TempDir()
			clock := store.WithClock(func() time.Time { return fixedNow })
			if _, err := mustOpen(t, dir, clock).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
				t.Fatal(err)
			}
			d := openDir(t, dir)
			f := &takeThenKillFS{FS: d, prefix: wfID + "-"}
			if adopt {
				f.prefix = "conflict-" + f.prefix
			}
			f.ff = &durabletest.Faulty{FS: f, Persistent: true}
			s := mustOpen(t, dir, store.WithFS(f.ff), clock)
			var err error
			if adopt {
				line := []store.LineRecord{{Revision: 1, Event: store.Event{Kind: "start"}, Snapshot: record(wfID, 1, "plan")}}
				_, _, err = s.AdoptLine("conflict", store.LineOf(line), nil)
			} else {
				_, err = s.Archive("abandoned")
			}
			if f.taken == "" || err == nil {
				t.Fatalf("the archive's directory was not taken (%q) or the kill not seen: %v", f.taken, err)
			}
			// A new process, after the kill.
			rs := mustOpen(t, dir, clock)
			if _, err := rs.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
				t.Fatalf("update after the kill: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.taken), "archive.json")); err != nil || string(b) != `{"theirs":true}` {
				t.Fatalf("the directory someone else made, %s, lost its archive.json: %q %v", f.taken, b, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "archive", "pending.json")); !os.IsNotExist(err) {
				t.Fatalf("archive/pending.json is still there: %v", err)
			}
		})
	}
}

// TestOlderMarkerNeverRemovesAnUnprovenDirectory: archive/pending.json as Cairn wrote it before
// its marker said whether the archive's directory was made (no "made" member) proves nothing
// about a directory of that name, which another may have made: recovery leaves the directory as
// it is, with a notice naming it, and the workflow goes on as it was. An archive such a marker
// names that is whole (the snapshot moved into it) is still finished.
func TestOlderMarkerNeverRemovesAnUnprovenDirectory(t *testing.T) {
	const name = wfID + "-20261123T101500.000Z"
	cases := []struct {
		name  string
		mark  string
		files []string
	}{
		{"archive", `{"dir":%q,"workflow_id":%q,"active":true}`, []string{"archive.json"}},
		{"record", `{"dir":%q,"workflow_id":%q,"active":false}`, []string{"archive.json", ".tmp-workflow-state.json-1234"}},
		{"adopt", `{"dir":%q,"workflow_id":%q,"active":false,"adopt":{"seq":7,"revision":7,"state":"done"}}`,
			[]string{"archive.json", store.WorkflowFile, "journal.jsonl"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, taken := cutShort(t, name, c.mark, c.files...)
			s := mustOpen(t, dir)
			res, err := s.UpdateWorkflow(setNext(wfID, "plan"))
			if err != nil || res.Revision != 2 {
				t.Fatalf("update: %+v %v", res, err)
			}
			for _, f := range c.files {
				if b, err := os.ReadFile(filepath.Join(taken, f)); err != nil || string(b) != "theirs "+f {
					t.Fatalf("%s in the directory the marker names was not kept: %q %v", f, b, err)
				}
			}
			if !slices.ContainsFunc(res.Notices, func(n store.Notice) bool { return strings.Contains(n.Message, "archive/"+name) }) {
				t.Fatalf("no notice names archive/%s: %+v", name, res.Notices)
			}
			if _, err := os.Lstat(filepath.Join(dir, "archive", "pending.json")); !os.IsNotExist(err) {
				t.Fatalf("archive/pending.json is still there: %v", err)
			}
		})
	}
	t.Run("whole", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "cairn")
		if _, err := mustOpen(t, dir).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
			t.Fatal(err)
		}
		arch := filepath.Join(dir, "archive", name)
		if err := os.MkdirAll(arch, 0o700); err != nil {
			t.Fatal(err)
		}
		meta := fmt.Sprintf(`{"dir":%q,"workflow_id":%q,"reason":"completed","at":"2026-11-23T10:15:00Z","revision":1}`, name, wfID)
		if err := os.WriteFile(filepath.Join(arch, "archive.json"), []byte(meta), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, store.WorkflowFile), filepath.Join(arch, store.WorkflowFile)); err != nil {
			t.Fatal(err)
		}
		mark := fmt.Sprintf(`{"dir":%q,"workflow_id":%q,"active":true}`, name, wfID)
		if err := os.WriteFile(filepath.Join(dir, "archive", "pending.json"), []byte(mark), 0o600); err != nil {
			t.Fatal(err)
		}
		s := mustOpen(t, dir)
		if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read after recovery: %v, want no active workflow", err)
		}
		_, j, err := s.ReadArchive(name)
		if err != nil || len(j.Records) != 1 {
			t.Fatalf("the archive's journal: %d records, %v", len(j.Records), err)
		}
		if list, err := s.ListArchives(); err != nil || len(list) != 1 || list[0].Dir != name {
			t.Fatalf("index %+v %v", list, err)
		}
	})
}

// cutShort makes a state directory where workflow wfID is active at revision 1 and an archive
// was cut short: archive/pending.json is mark (a format given the directory's name and wfID)
// and archive/<name> holds files, each saying "theirs <file>". It returns the state directory
// and archive/<name>.
func cutShort(t *testing.T, name, mark string, files ...string) (dir, taken string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "cairn")
	if _, err := mustOpen(t, dir).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	taken = filepath.Join(dir, "archive", name)
	if err := os.MkdirAll(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(taken, f), []byte("theirs "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "archive", "pending.json"), fmt.Appendf(nil, mark, name, wfID), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, taken
}

// markFailFS is a state directory where someone else makes the directory archive/<prefix>...
// (with a file of theirs in it) just as Cairn starts writing archive/pending.json, whose write
// then fails (a full disk).
type markFailFS struct {
	durable.FS
	prefix string
	taken  string
}

func (f *markFailFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if f.taken == "" && strings.HasPrefix(name, "archive/"+durable.TempPrefix("pending.json")) {
		f.taken = "archive/" + f.prefix + "20261122T173000.000Z"
		if err := f.FS.Mkdir(f.taken, 0o700); err != nil {
			panic(err)
		}
		if err := durable.WriteFile(f.FS, f.taken+"/archive.json", []byte(`{"theirs":true}`), 0o600); err != nil {
			panic(err)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.FS.OpenFile(name, flag, perm)
}

// TestFailedArchiveUndoesOnlyWhatItMade: an archive that fails before its directory is made
// (its marker cannot be written) removes nothing on its way out: a directory of the chosen name
// that someone else made meanwhile is left with what it holds. Before, the undo removed the
// directory of that name whole.
func TestFailedArchiveUndoesOnlyWhatItMade(t *testing.T) {
	dir := t.TempDir()
	clock := store.WithClock(func() time.Time { return fixedNow })
	if _, err := mustOpen(t, dir, clock).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	f := &markFailFS{FS: d, prefix: wfID + "-"}
	s := mustOpen(t, dir, store.WithFS(f), clock)
	if _, err := s.Archive("abandoned"); err == nil || f.taken == "" {
		t.Fatalf("archive: %v (taken %q), want the marker's write to fail", err, f.taken)
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.taken), "archive.json")); err != nil || string(b) != `{"theirs":true}` {
		t.Fatalf("the directory someone else made, %s, lost its archive.json: %q %v", f.taken, b, err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID {
		t.Fatalf("the workflow is not active as it was: %+v %v", w, err)
	}
}

// dropFS is a state directory where someone else puts a file of theirs, file (a path under
// an archive directory), into the archive directory an operation is making, as it opens or
// renames to the name at picks out (at returns that directory); with ff set (openDropped), the
// process is then killed: every operation after that one fails.
type dropFS struct {
	durable.FS
	at      func(name string) (dir string, ok bool)
	file    string
	ff      *durabletest.Faulty
	dropped string
}

func (f *dropFS) drop(name string) {
	dir, ok := f.at(name)
	if f.dropped != "" || !ok {
		return
	}
	f.dropped = dir + "/" + f.file
	if err := f.FS.Mkdir(path.Dir(f.dropped), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		panic(err)
	}
	if err := durable.WriteFile(f.FS, f.dropped, []byte("theirs"), 0o600); err != nil {
		panic(err)
	}
	if f.ff != nil {
		f.ff.FailAt = f.ff.Ops() + 1
	}
}

func (f *dropFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f.drop(name)
	return f.FS.OpenFile(name, flag, perm)
}

func (f *dropFS) Rename(oldname, newname string) error {
	f.drop(newname)
	return f.FS.Rename(oldname, newname)
}

func (f *dropFS) RenameNoReplace(oldname, newname string) error {
	f.drop(newname)
	return f.FS.RenameNoReplace(oldname, newname)
}

// openDropped opens a store on the state directory dir through f, killed after the drop when
// killed.
func openDropped(t *testing.T, dir string, f *dropFS, killed bool, opts ...store.Option) *store.Store {
	t.Helper()
	f.FS = openDir(t, dir)
	var fsys durable.FS = f
	if killed {
		f.ff = &durabletest.Faulty{FS: f, Persistent: true}
		fsys = f.ff
	}
	return mustOpen(t, dir, append(opts, store.WithFS(fsys))...)
}

// whileCopyingJournal picks out an adoption's write of its journal copy.
func whileCopyingJournal(name string) (string, bool) {
	if strings.HasPrefix(name, "archive/conflict-") && strings.Contains(name, "/"+durable.TempPrefix("journal.jsonl")) {
		return path.Dir(name), true
	}
	return "", false
}

// TestAdoptRecoveryKeepsWhatItDidNotWrite: an adoption killed before its commit point is undone
// by recovery, which removes its archive directory only when that holds nothing but the copies
// the adoption writes there: a file someone else put in it meanwhile keeps the directory, and a
// notice names it. Before, recovery removed the directory whole.
func TestAdoptRecoveryKeepsWhatItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	if _, err := mustOpen(t, dir).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	f := &dropFS{at: whileCopyingJournal, file: "theirs.txt"}
	s := openDropped(t, dir, f, true)
	line := []store.LineRecord{{Revision: 1, Event: store.Event{Kind: "start"}, Snapshot: record(wfID, 1, "plan")}}
	if _, _, err := s.AdoptLine("conflict", store.LineOf(line), nil); err == nil || f.dropped == "" {
		t.Fatalf("adopt: %v (dropped %q), want it killed while writing its copies", err, f.dropped)
	}
	rs := mustOpen(t, dir)
	res, err := rs.UpdateWorkflow(setNext(wfID, "implement"))
	if err != nil || res.Revision != 2 || !bytes.Contains(res.Data, []byte(`"implement"`)) {
		t.Fatalf("update after the kill: %+v %v, want revision 2 of our line", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.dropped))); err != nil || string(b) != "theirs" {
		t.Fatalf("the file someone else put in the adoption's directory was removed: %q %v", b, err)
	}
	if !slices.ContainsFunc(res.Notices, func(n store.Notice) bool { return n.Kind == "archive-left" && n.Path == path.Dir(f.dropped) }) {
		t.Fatalf("no notice names %s: %+v", path.Dir(f.dropped), res.Notices)
	}
}

// TestArchiveSaysWhatItsRecoveryLeft: an archive that first settles another archive cut short
// (an earlier Cairn's marker naming a directory it cannot prove its own) says, in its
// ArchiveInfo's notices, that it left that directory: the marker is gone after, so no later
// read says it again. Before, ArchiveIf and ReplaceWorkflow dropped their locked read's
// notices and ArchiveRecord its recovery's.
func TestArchiveSaysWhatItsRecoveryLeft(t *testing.T) {
	const name = wfID + "-20261101T101500.000Z"
	for _, c := range []struct {
		name    string
		archive func(s *store.Store) (store.ArchiveInfo, error)
	}{
		{"ArchiveIf", func(s *store.Store) (store.ArchiveInfo, error) { return s.ArchiveIf("completed", wfID) }},
		{"ArchiveRecord", func(s *store.Store) (store.ArchiveInfo, error) {
			return s.ArchiveRecord(record("incoming-1", 5, "plan"), "conflict", nil)
		}},
		{"ReplaceWorkflow", func(s *store.Store) (store.ArchiveInfo, error) {
			info, _, err := s.ReplaceWorkflow(record("incoming-1", 1, "plan"), "conflict", store.Event{Kind: "migrated"}, nil)
			return info, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := cutShort(t, name, `{"dir":%q,"workflow_id":%q,"active":true}`, "archive.json")
			info, err := c.archive(mustOpen(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(info.Notices, func(n store.Notice) bool { return n.Kind == "archive-left" && n.Path == "archive/"+name }) {
				t.Fatalf("no notice names archive/%s: %+v", name, info.Notices)
			}
		})
	}
}

// TestAdoptNeverLeavesOurSegmentsUnderTheAdoptedLine: when the adoption's archive directory
// already holds sealed segments (someone else's), our own cannot follow our copy there; the
// adoption is then undone, at once or by recovery after a kill, with theirs kept and a notice
// naming the directory, and ours stays active with its whole journal. Before, the adoption went
// on with our sealed segments left in journal/, where their revisions shadowed the adopted
// line's own (history read ours); and killed, its recovery failed every later write with "both
// kept".
func TestAdoptNeverLeavesOurSegmentsUnderTheAdoptedLine(t *testing.T) {
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			dir := t.TempDir()
			opts := []store.Option{store.WithJournalCompaction(1)}
			const ourN = 70
			ours := ourLine(t, mustOpen(t, dir, opts...), ourN)
			if segs, _ := filepath.Glob(filepath.Join(dir, "journal", "*.sealed", "*")); len(segs) == 0 {
				t.Fatal("no sealed segments")
			}
			f := &dropFS{at: whileCopyingJournal, file: "journal.sealed/1.jsonl"}
			line := theirLine(2)
			if _, _, err := openDropped(t, dir, f, killed, opts...).AdoptLine("conflict", store.LineOf(line), nil); err == nil || f.dropped == "" {
				t.Fatalf("adopt: %v (dropped %q), want it undone", err, f.dropped)
			}
			rs := mustOpen(t, dir, opts...)
			res, err := rs.UpdateWorkflow(setNext(wfID, "after"))
			if err != nil || res.Revision != ours.Revision+1 {
				t.Fatalf("update after: %+v %v, want revision %d of our line", res, err, ours.Revision+1)
			}
			if j, err := rs.ReadJournal(wfID); err != nil || len(j.Records) != ourN+1 {
				t.Fatalf("our journal reads %d records (%v), want %d", len(j.Records), err, ourN+1)
			}
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.dropped))); err != nil || string(b) != "theirs" {
				t.Fatalf("their segment %s was not kept: %q %v", f.dropped, b, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "archive", "pending.json")); !os.IsNotExist(err) {
				t.Fatalf("archive/pending.json is still there: %v", err)
			}
		})
	}
}
