package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// faultyCopy opens a copy of template in a new folder on a file system whose k-th operation
// fails (and every one after it, when persistent); done closes the store and the folder.
func faultyCopy(t *testing.T, template string, k int, persistent bool, opts ...store.Option) (s *store.Store, ff *durabletest.Faulty, dir string, done func()) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "cairn")
	durabletest.CopyTree(t, template, dir)
	d := openDir(t, dir)
	ff = &durabletest.Faulty{FS: durabletest.NoSync{FS: d}, FailAt: k, Persistent: persistent}
	s, err := store.Open(dir, append([]store.Option{store.WithFS(ff)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, ff, dir, func() { s.Close(); d.Close() }
}

// TestFaultInjection fails the k-th file system operation of a round of writes (a workflow
// transition, a checkpoint save, a log append, a document write, an archive) for every k, once
// and persistently, and checks after each run, with a clean file system, that every file holds
// the complete old or new version, that every write reported as done is there, and that the
// store still works.
func TestFaultInjection(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	{
		s := mustOpen(t, template)
		s.UpdateWorkflow(setNext(wfID, "analyze"))
		s.SaveCheckpoint("cp", []byte(`{"v":1}`))
		s.AppendLog("events", []byte(`{"n":1}`))
		s.Write("initiative", []byte(`{"v":1}`))
	}
	type outcome struct{ wf, cp, log, doc error }
	round := func(s *store.Store) outcome {
		var o outcome
		_, o.wf = s.UpdateWorkflow(setNext(wfID, "plan"))
		o.cp = s.SaveCheckpoint("cp", []byte(`{"v":2}`))
		o.log = s.AppendLog("events", []byte(`{"n":2}`))
		o.doc = s.Write("initiative", []byte(`{"v":2}`))
		return o
	}
	run := func(t *testing.T, k int, persistent bool) (*durabletest.Faulty, outcome, string) {
		s, ff, dir, done := faultyCopy(t, template, k, persistent)
		defer done()
		return ff, round(s), dir
	}
	ff, o, _ := run(t, 0, false)
	if o.wf != nil || o.cp != nil || o.log != nil || o.doc != nil {
		t.Fatalf("clean round failed: %+v", o)
	}
	n := ff.Ops()
	t.Logf("a round is %d operations", n)
	for _, persistent := range []bool{false, true} {
		for k := 1; k <= n; k++ {
			ff, o, dir := run(t, k, persistent)
			fail := func(format string, a ...any) {
				t.Helper()
				t.Fatalf("k=%d persistent=%v: "+format+"\n%s", append([]any{k, persistent}, append(a, strings.Join(ff.Trace(), "\n"))...)...)
			}
			s := openNoSync(t, dir)
			w, err := s.ReadWorkflow()
			if err != nil {
				fail("workflow unreadable: %v", err)
			}
			if w.Revision != 1 && w.Revision != 2 || revOf(t, w.Data) != w.Revision {
				fail("workflow revision %d", w.Revision)
			}
			if o.wf == nil && w.Revision != 2 {
				fail("acknowledged transition lost")
			}
			cp, err := s.LoadCheckpoint("cp")
			if err != nil || (string(cp) != `{"v":1}` && string(cp) != `{"v":2}`) || (o.cp == nil && string(cp) != `{"v":2}`) {
				fail("checkpoint %q (%v), save said %v", cp, err, o.cp)
			}
			l, err := s.ReadLog("events")
			if err != nil || len(l.Lines) < 1 || len(l.Lines) > 2 || l.Invalid != 0 || (o.log == nil && len(l.Lines) != 2) {
				fail("log %q torn %d (%v), append said %v", l.Lines, l.Torn, err, o.log)
			}
			doc, err := s.Read("initiative")
			if err != nil || (string(doc) != `{"v":1}` && string(doc) != `{"v":2}`) || (o.doc == nil && string(doc) != `{"v":2}`) {
				fail("document %q (%v), write said %v", doc, err, o.doc)
			}
			// And the store goes on working once the faults stop.
			res, err := s.UpdateWorkflow(setNext(wfID, "implement"))
			if err != nil || res.Revision != w.Revision+1 {
				fail("update after faults: %+v %v", res, err)
			}
			// The journal alone rebuilds exactly that state.
			os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte(`{"version":"2.0","worfklow`), 0o600)
			if rb, err := s.ReadWorkflow(); err != nil || !bytes.Equal(rb.Data, res.Data) {
				fail("rebuilt after faults: %s %v, want %s", rb.Data, err, res.Data)
			}
			if err := s.AppendLog("events", []byte(`{"n":3}`)); err != nil {
				fail("append after faults: %v", err)
			}
			if l2, _ := s.ReadLog("events"); l2.Torn != 0 || !bytes.Equal(l2.Lines[len(l2.Lines)-1], []byte(`{"n":3}`)) {
				fail("log after faults %q", l2.Lines)
			}
		}
	}
}

// TestFaultInjectionArchive fails each file system operation of an archive, of a completion
// and of an expiry (the final update, then the archive), of a replace (the archive, then the
// new workflow's first write) and of an archive whose retention prunes older archives, in turn,
// once and from there on (which is what a kill at that operation leaves), and checks after
// recovery that the workflow is either active with its journal or archived with its journal,
// never both, never neither; that an archive reported done left nothing active; that a failed
// one never claims to have kept what it moved; and that once the next archive has run, the
// index names exactly the archive directories there, each one whole.
func TestFaultInjectionArchive(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	{
		s := mustOpen(t, template)
		s.UpdateWorkflow(setNext(wfID, "analyze"))
	}
	// The same, with three older archives, for an archive with retention 2 to prune.
	crowded := filepath.Join(t.TempDir(), "crowded")
	durabletest.CopyTree(t, template, crowded)
	{
		s := mustOpen(t, crowded)
		for _, id := range []string{"apex-20261120T100000Z-aaaa", "apex-20261121T100000Z-bbbb", "apex-20261122T100000Z-cccc"} {
			if _, err := s.ArchiveRecord(record(id, 3, "done"), "completed", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The oldest as a prune killed inside its RemoveAll (one operation here) leaves it: the
	// snapshot unlinked, the rest still there. The next prune must finish it.
	half, _ := filepath.Glob(filepath.Join(crowded, "archive", "apex-20261120T100000Z-aaaa-*"))
	if len(half) != 1 {
		t.Fatalf("archives %v", half)
	}
	if err := os.Remove(filepath.Join(half[0], store.WorkflowFile)); err != nil {
		t.Fatal(err)
	}
	const newID = "debug-20261123T100000Z-dddd"
	ending := func(state, reason string) func(s *store.Store) error {
		return func(s *store.Store) error {
			if _, err := s.UpdateWorkflow(setNext(wfID, state)); err != nil {
				return err
			}
			_, err := s.Archive(reason)
			return err
		}
	}
	cases := []struct {
		name     string
		template string
		opts     []store.Option
		op       func(s *store.Store) error
		pruned   int // archives the clean run removes
	}{
		{"archive", template, nil, func(s *store.Store) error { _, err := s.Archive("completed"); return err }, 0},
		{"complete", template, nil, ending("done", "completed"), 0},
		{"expire", template, nil, ending("analyze", "expired"), 0},
		{"replace", template, nil, func(s *store.Store) error {
			if _, err := s.Archive("replaced"); err != nil {
				return err
			}
			_, err := s.UpdateWorkflow(setNext(newID, "troubleshoot"))
			return err
		}, 0},
		{"prune", crowded, []store.Option{store.WithRetention(2)}, func(s *store.Store) error {
			info, err := s.Archive("completed")
			if err == nil && len(info.Pruned) != 2 {
				return errors.New("pruned " + strings.Join(info.Pruned, ","))
			}
			return err
		}, 2},
	}
	// Cases whose clean runs make the same operations on the same files, the reason named
	// aside (complete and expire: the store archives either way), have the same fault points:
	// each distinct sequence is cut once.
	cut := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// One time for every faulty run, so that what two of them write is the same.
			at := time.Now()
			run := func(k int, persistent bool) (*durabletest.Faulty, string, error) {
				dir := filepath.Join(t.TempDir(), "cairn")
				durabletest.CopyTree(t, c.template, dir)
				ff := &durabletest.Faulty{FS: durabletest.NoSync{FS: openDir(t, dir)}, FailAt: k, Persistent: persistent}
				s, err := store.Open(dir, append([]store.Option{store.WithFS(ff), store.WithClock(func() time.Time { return at })}, c.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				return ff, dir, c.op(s)
			}
			ff, _, err := run(0, false)
			if err != nil {
				t.Fatal(err)
			}
			n := ff.Ops()
			t.Logf("%s is %d operations", c.name, n)
			ops := opSequence(ff.Trace())
			if same, ok := cut[ops]; ok {
				t.Logf("the same operations as %s: its fault points are %s's", same, same)
				return
			}
			cut[ops] = c.name
			// What the next archive does depends only on the files it finds: it is made once
			// for each state the fault points leave (see TestFaultInjectionCompaction).
			seen := map[string]bool{}
			for _, persistent := range []bool{false, true} {
				for k := 1; k <= n; k++ {
					ff, dir, aerr := run(k, persistent)
					left := treeState(t, dir)
					fail := func(format string, a ...any) {
						t.Helper()
						t.Fatalf("k=%d persistent=%v (it said %v): "+format+"\n%s", append(append([]any{k, persistent, aerr}, a...), strings.Join(ff.Trace(), "\n"))...)
					}
					s := openNoSync(t, dir, c.opts...)
					w, err := s.ReadWorkflow()
					if err != nil && !errors.Is(err, store.ErrNotFound) {
						fail("read after recovery: %v", err)
					}
					active := err == nil && w.ID == wfID
					if err == nil {
						if w.ID != wfID && (c.name != "replace" || w.ID != newID) {
							fail("%s is active", w.ID)
						}
						j, err := s.ReadJournal(w.ID)
						if err != nil || len(j.Records) == 0 || j.Records[len(j.Records)-1].Revision != w.Revision {
							fail("%s active at revision %d without its journal (%d records, %v)", w.ID, w.Revision, len(j.Records), err)
						}
					}
					list, lerr := s.ListArchives()
					if lerr != nil {
						fail("listing archives: %v", lerr)
					}
					indexed := map[string]bool{}
					for _, a := range list {
						indexed[a.Dir] = true
					}
					archived := 0
					entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
					for _, e := range entries {
						b, err := os.ReadFile(filepath.Join(dir, "archive", e.Name(), store.WorkflowFile))
						if err != nil {
							continue
						}
						_, j, err := s.ReadArchive(e.Name())
						if err != nil || len(j.Records) == 0 && strings.HasPrefix(e.Name(), wfID) || len(j.Records) > 0 && j.Records[len(j.Records)-1].Revision != revOf(t, b) {
							fail("%s archived without its journal (%d records, %v)", e.Name(), len(j.Records), err)
						}
						if !strings.HasPrefix(e.Name(), wfID) {
							continue
						}
						archived++
						// The archive in progress gets its index line from recovery, on the next write.
						if pend, _ := os.ReadFile(filepath.Join(dir, "archive", "pending.json")); !indexed[e.Name()] && !bytes.Contains(pend, []byte(e.Name())) {
							fail("the index lists %+v, not %s", list, e.Name())
						}
					}
					if active == (archived == 1) || archived > 1 {
						fail("active=%v, %d archives", active, archived)
					}
					if aerr == nil && active {
						fail("archive reported done but the workflow is active")
					}
					if aerr != nil && archived == 1 && strings.Contains(aerr.Error(), "was left as it was") {
						fail("the error claims what it wrote was left as it was, but the workflow was archived")
					}
					if seen[left] {
						s.Close()
						continue
					}
					seen[left] = true
					// The next archive cleans what a killed one left in archive/, and prunes
					// what a killed prune left.
					if active {
						_, err = s.Archive("completed")
					} else {
						_, err = s.ArchiveRecord(record("apex-20261122T173000Z-ffff", 1, "x"), "conflict", nil)
					}
					if err != nil {
						fail("the next archive: %v", err)
					}
					if tmps, _ := filepath.Glob(filepath.Join(dir, "archive", ".tmp-*")); len(tmps) > 0 {
						fail("temp files left in archive/: %v", tmps)
					}
					list, _ = s.ListArchives()
					indexed = map[string]bool{}
					for _, a := range list {
						indexed[a.Dir] = true
					}
					entries, _ = os.ReadDir(filepath.Join(dir, "archive"))
					dirs := 0
					for _, e := range entries {
						if !e.IsDir() {
							continue
						}
						dirs++
						if _, err := os.Stat(filepath.Join(dir, "archive", e.Name(), store.WorkflowFile)); err != nil {
							fail("a half-made or half-pruned archive directory %s is left", e.Name())
						}
						if !indexed[e.Name()] {
							fail("archive %s is not in the index %+v", e.Name(), list)
						}
					}
					if dirs != len(list) {
						fail("the index lists %d archives, archive/ holds %d", len(list), dirs)
					}
				}
			}
			t.Logf("%d fault points left %d different states", 2*n, len(seen))
		})
	}
}

// opSequence is a Faulty trace without what differs between two runs of the same steps: the
// temp files' random suffixes, the times and the reason in an archive directory's name.
func opSequence(trace []string) string {
	return archiveNamePart.ReplaceAllString(strings.Join(trace, "\n"), "")
}

var archiveNamePart = regexp.MustCompile(`-[0-9a-f]{12}\b|\d{8}T[\d.]+Z|archive/[a-z]+-`)

// An archive whose snapshot is in the archive directory is made, whatever finishing it (the
// journal's move, the index line) then meets. On a full disk the index line failed, and the
// archive said "cannot write archive/index.jsonl ...: the disk is full ...; the previous
// version was kept; free some space and try again", though the workflow was archived: and
// completing a workflow then warned that it stayed in the active slot. The archive is
// reported made, with a notice naming what is left and when it is done; the next write
// finishes it.
func TestArchiveCommittedThenDiskFull(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	if _, err := mustOpen(t, template).UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	s, ff, _, done := faultyCopy(t, template, 0, false)
	if _, err := s.Archive("completed"); err != nil {
		t.Fatal(err)
	}
	done()
	k := slices.IndexFunc(ff.Trace(), func(op string) bool { return strings.HasSuffix(op, " write archive/index.jsonl") })
	if k < 0 {
		t.Fatalf("no write of the index in %v", ff.Trace())
	}
	s, ff, dir, done := faultyCopy(t, template, k+1, false)
	ff.Err = syscall.ENOSPC
	info, err := s.Archive("completed")
	done()
	if err != nil {
		t.Fatalf("archive with its snapshot moved, index line refused: %v", err)
	}
	if len(info.Notices) != 1 || !strings.Contains(info.Notices[0].Message, "archived in archive/"+info.Dir) || !strings.Contains(info.Notices[0].Message, "no space left") {
		t.Fatalf("notices %+v: want one saying it is archived and what failed", info.Notices)
	}
	s = mustOpen(t, dir)
	if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("active workflow after the archive: %v", err)
	}
	if _, err := s.UpdateWorkflow(setNext("debug-20261123T100000Z-dddd", "troubleshoot")); err != nil {
		t.Fatal(err)
	}
	if list, err := s.ListArchives(); err != nil || len(list) != 1 || list[0].Dir != info.Dir {
		t.Fatalf("after the next write the index lists %+v (%v), want %s", list, err, info.Dir)
	}
}
