package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestPowerLoss cuts the power at every operation of a sequence of writes starting from an
// empty state directory (two rounds of transition, checkpoint save, log append and document
// write) on a simulated file system that keeps only what was fsynced. After each reboot every
// item must be at a version no older than the last one acknowledged and no newer than the last
// one attempted, complete, and the store must go on working. A missing file or directory fsync
// anywhere on these paths fails this test.
func TestPowerLoss(t *testing.T) {
	dir := t.TempDir()
	const rounds = 2
	type state struct{ acked, tried [4]int } // workflow, checkpoint, log, document
	run := func(f *simfs.FS) state {
		var st state
		s, err := store.Open(dir, store.WithFS(f))
		if err != nil {
			return st
		}
		defer s.Close()
		for v := 1; v <= rounds; v++ {
			steps := []func() error{
				func() error { _, err := s.UpdateWorkflow(setNext(wfID, fmt.Sprint("s", v))); return err },
				func() error { return s.SaveCheckpoint("cp", []byte(fmt.Sprintf(`{"v":%d}`, v))) },
				func() error { return s.AppendLog("events", []byte(fmt.Sprintf(`{"v":%d}`, v))) },
				func() error { return s.Write("initiative", []byte(fmt.Sprintf(`{"v":%d}`, v))) },
			}
			for i, step := range steps {
				st.tried[i] = v
				if step() == nil {
					st.acked[i] = v
				}
			}
		}
		return st
	}
	version := func(doc []byte) int {
		var m struct{ V int }
		json.Unmarshal(doc, &m)
		return m.V
	}
	clean := simfs.New()
	run(clean)
	n := clean.Ops()
	for k := 1; k <= n+1; k++ {
		f := simfs.New()
		f.CrashAt = k
		st := run(f)
		rs, err := store.Open(dir, store.WithFS(f.Recover()))
		if err != nil {
			t.Fatal(err)
		}
		var got [4]int
		if w, err := rs.ReadWorkflow(); err == nil {
			got[0] = int(w.Revision)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("crash at %d: workflow: %v", k, err)
		}
		if b, err := rs.LoadCheckpoint("cp"); err == nil {
			got[1] = version(b)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("crash at %d: checkpoint: %v", k, err)
		}
		if l, err := rs.ReadLog("events"); err == nil {
			if l.Invalid != 0 {
				t.Fatalf("crash at %d: %d invalid log lines", k, l.Invalid)
			}
			for i, line := range l.Lines {
				if version(line) != i+1 {
					t.Fatalf("crash at %d: log line %d is %s", k, i, line)
				}
			}
			got[2] = len(l.Lines)
		}
		if b, err := rs.Read("initiative"); err == nil {
			got[3] = version(b)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("crash at %d: document: %v", k, err)
		}
		for i, what := range []string{"workflow", "checkpoint", "log", "document"} {
			if got[i] < st.acked[i] || got[i] > st.tried[i] {
				t.Fatalf("crash at %d of %d: %s is at version %d; acknowledged %d, attempted %d", k, n, what, got[i], st.acked[i], st.tried[i])
			}
		}
		if _, err := rs.UpdateWorkflow(setNext(wfID, "after")); err != nil {
			t.Fatalf("crash at %d: update after reboot: %v", k, err)
		}
		rs.Close()
	}
	t.Logf("%d crash points checked", n+1)
}

// TestPowerLossArchive cuts the power at every operation of an Archive: the workflow is
// never lost (still active, or archived, or, since the simulation does not make a
// cross-directory rename atomic as a journaling file system does, briefly both), and an
// acknowledged archive leaves it archived and no longer active.
func TestPowerLossArchive(t *testing.T) {
	dir := t.TempDir()
	run := func(f *simfs.FS, crashAt int) error {
		s, err := store.Open(dir, store.WithFS(f), store.WithRetention(1))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		archivedThenActive(t, s)
		if crashAt > 0 {
			f.CrashAt = f.Ops() + crashAt
		}
		_, err = s.Archive("completed")
		return err
	}
	clean := simfs.New()
	if err := run(clean, 0); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for k := 1; ; k++ {
		f := simfs.New()
		aerr := run(f, k)
		if !f.Crashed() {
			break // k is past the archive's last operation
		}
		checked++
		rec := f.Recover()
		rs, err := store.Open(dir, store.WithFS(rec))
		if err != nil {
			t.Fatal(err)
		}
		w, err := rs.ReadWorkflow()
		active := err == nil && w.ID == wfID
		archived := false
		names, _ := rec.ReadDirNames("archive")
		for _, d := range names {
			if snap, _, err := rs.ReadArchive(d); err == nil && revOf(t, snap) == 1 && strings.HasPrefix(d, wfID) {
				archived = true
			}
		}
		if !active && !archived {
			t.Fatalf("crash at %d: the workflow is lost (archive said %v)", k, aerr)
		}
		if aerr == nil && (active || !archived) {
			t.Fatalf("crash at %d: acknowledged archive but active=%v archived=%v", k, active, archived)
		}
		rs.Close()
	}
	crashPointsChecked(t, checked, 20, "an archive")
}

// crashPointsChecked fails the test when fewer than least crash points of what were checked
// (the operation no longer writes what the test means to cut), and logs how many were.
func crashPointsChecked(t *testing.T, checked, least int, what string) {
	t.Helper()
	if checked < least {
		t.Fatalf("only %d crash points in %s", checked, what)
	}
	t.Logf("%d crash points checked", checked)
}

// TestArchiveStateDirSyncFails: the state directory's sync fails with EIO from the snapshot's
// move into the archive on, so that move is not durable. The archive was reported done, with no
// word of it, and moved the journal after the snapshot durably: after a power loss the
// workflow was active again with its history in the archive and none of its own. An archive
// whose move is not confirmed now fails saying so, and the workflow keeps its journal until
// the move is confirmed.
func TestArchiveStateDirSyncFails(t *testing.T) {
	dir := t.TempDir()
	sim := simfs.New()
	f := &durabletest.DirSyncFails{FS: sim, Dir: "."}
	s, err := store.Open(dir, store.WithFS(f))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	archivedThenActive(t, s)
	f.Fails.Store(1 << 20)
	_, aerr := s.Archive("completed")
	rs := mustOpen(t, dir, store.WithFS(sim.Recover()))
	defer rs.Close()
	w, err := rs.ReadWorkflow()
	if err != nil || w.ID != wfID {
		t.Fatalf("after a power loss the workflow is not active (%v), though no sync made its move durable", err)
	}
	if aerr == nil || !strings.Contains(aerr.Error(), "may be active again") {
		t.Errorf("the archive said %v, and after a power loss the workflow is active again", aerr)
	}
	if j, err := rs.ReadJournal(wfID); err != nil || len(j.Records) == 0 {
		t.Errorf("after a power loss the workflow is active without its journal: %v", err)
	}
}

// archivedThenActive archives a workflow old-1 (archive/ is then there) and starts wfID, the
// active workflow the power loss tests archive.
func archivedThenActive(t *testing.T, s *store.Store) {
	t.Helper()
	for _, id := range []string{"old-1", wfID} {
		if _, err := s.UpdateWorkflow(setNext(id, "plan")); err != nil {
			t.Fatal(err)
		}
		if id == wfID {
			break
		}
		if _, err := s.Archive("completed"); err != nil {
			t.Fatal(err)
		}
	}
}
