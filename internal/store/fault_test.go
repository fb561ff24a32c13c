package store_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/fsx"
	"github.com/cairn-dev/cairn/internal/store"
)

// copyTree copies a state directory (no fsync needed: it is only a test fixture).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		out.Close()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
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
	run := func(t *testing.T, k int, persistent bool) (*fsx.Faulty, outcome, string) {
		dir := filepath.Join(t.TempDir(), "cairn")
		copyTree(t, template, dir)
		d, err := fsx.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		ff := &fsx.Faulty{FS: d, FailAt: k, Persistent: persistent}
		s, err := store.Open(dir, store.WithFS(ff))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
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
			s := mustOpen(t, dir)
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

// TestFaultInjectionArchive fails each file system operation of an archive, and of a
// completion (the final update, then the archive), in turn, once and from there on (which is
// what a kill at that operation leaves), and checks after recovery that the workflow is either
// active with its journal or archived with its journal, never both, never neither; that an
// archive reported done left nothing active; and that a failed one never claims to have kept
// what it moved.
func TestFaultInjectionArchive(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	{
		s := mustOpen(t, template)
		s.UpdateWorkflow(setNext(wfID, "analyze"))
	}
	ops := map[string]func(s *store.Store) error{
		"archive": func(s *store.Store) error { _, err := s.Archive("completed"); return err },
		"complete": func(s *store.Store) error {
			if _, err := s.UpdateWorkflow(setNext(wfID, "done")); err != nil {
				return err
			}
			_, err := s.Archive("completed")
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			run := func(k int, persistent bool) (*fsx.Faulty, string, error) {
				dir := filepath.Join(t.TempDir(), "cairn")
				copyTree(t, template, dir)
				d, _ := fsx.OpenDir(dir)
				defer d.Close()
				ff := &fsx.Faulty{FS: d, FailAt: k, Persistent: persistent}
				s, err := store.Open(dir, store.WithFS(ff))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				return ff, dir, op(s)
			}
			ff, _, err := run(0, false)
			if err != nil {
				t.Fatal(err)
			}
			n := ff.Ops()
			for _, persistent := range []bool{false, true} {
				for k := 1; k <= n; k++ {
					ff, dir, aerr := run(k, persistent)
					fail := func(format string, a ...any) {
						t.Helper()
						t.Fatalf("k=%d persistent=%v (archive said %v): "+format+"\n%s", append(append([]any{k, persistent, aerr}, a...), strings.Join(ff.Trace(), "\n"))...)
					}
					s := mustOpen(t, dir)
					w, err := s.ReadWorkflow()
					active := err == nil
					if err != nil && !errors.Is(err, store.ErrNotFound) {
						fail("read after recovery: %v", err)
					}
					if active {
						j, err := s.ReadJournal(wfID)
						if err != nil || len(j.Records) == 0 || j.Records[len(j.Records)-1].Revision != w.Revision {
							fail("active at revision %d without its journal (%d records, %v)", w.Revision, len(j.Records), err)
						}
					}
					archived := 0
					entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
					for _, e := range entries {
						b, err := os.ReadFile(filepath.Join(dir, "archive", e.Name(), store.WorkflowFile))
						if err != nil {
							continue
						}
						archived++
						_, j, err := s.ReadArchive(e.Name())
						if err != nil || len(j.Records) == 0 || j.Records[len(j.Records)-1].Revision != revOf(t, b) {
							fail("archived without its journal (%d records, %v)", len(j.Records), err)
						}
						if list, _ := s.ListArchives(); len(list) != 1 || list[0].Dir != e.Name() {
							fail("the index lists %+v", list)
						}
					}
					if active == (archived == 1) || archived > 1 {
						fail("active=%v, %d archives", active, archived)
					}
					if aerr == nil && active {
						fail("archive reported done but the workflow is active")
					}
					if aerr != nil && archived == 1 && strings.Contains(aerr.Error(), "previous version was kept") {
						fail("the error claims the previous version was kept, but the workflow was archived")
					}
					// The next archive cleans what a killed one left in archive/.
					if active {
						_, err = s.Archive("completed")
					} else {
						_, err = s.ArchiveRecord(record("apex-20261122T173000Z-ffff", 1, "x"), "conflict")
					}
					if err != nil {
						fail("the next archive: %v", err)
					}
					if tmps, _ := filepath.Glob(filepath.Join(dir, "archive", ".tmp-*")); len(tmps) > 0 {
						fail("temp files left in archive/: %v", tmps)
					}
					entries, _ = os.ReadDir(filepath.Join(dir, "archive"))
					for _, e := range entries {
						if _, err := os.Stat(filepath.Join(dir, "archive", e.Name(), store.WorkflowFile)); e.IsDir() && err != nil {
							fail("a half-made archive directory %s is left", e.Name())
						}
					}
				}
			}
		})
	}
}
