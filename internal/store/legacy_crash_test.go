package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// killBeforeRename migrates the seed file rel (fixture, with seed 002's execution.json when
// exec is set) in a fresh project, then puts the state a kill between the migration's commit
// and the seed file's rename leaves: the workflow active, the seed file still in its place.
// It returns the state directory, the project root and the workflow as migrated.
func killBeforeRename(t *testing.T, fixture, rel, backup, exec string) (dir, root string, first store.Workflow) {
	t.Helper()
	old, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	root = filepath.Dir(filepath.Dir(dir))
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, old, 0o600)
	execPath := filepath.Join(root, "memory", "state", "execution.json")
	if exec != "" {
		b, err := os.ReadFile(exec)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(execPath, b, 0o600)
	}
	first, err = mustOpen(t, dir, store.WithClock(clockFrom(fixedNow))).ReadWorkflow()
	if err != nil || len(first.Notices) != 1 || first.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", first.Notices, err)
	}
	if err := os.Rename(filepath.Join(root, filepath.FromSlash(backup)), p); err != nil {
		t.Fatal(err)
	}
	if exec != "" {
		if err := os.Rename(filepath.Join(root, "memory", "state", "execution.v1.json.bak"), execPath); err != nil {
			t.Fatal(err)
		}
	}
	return dir, root, first
}

// TestLegacyKilledBeforeRename: a seed migration killed after its commit but before the seed
// file was renamed is finished by the next start: the seed file, which is the very file the
// active workflow was migrated from, is renamed to its backup name, and is not taken for a
// second copy competing with the active workflow. Before, FindLegacy reported it and the
// session start archived one of the two under a conflict name. This holds for a seed file
// with no times too, whose migration takes its times (and its id) from the clock.
func TestLegacyKilledBeforeRename(t *testing.T) {
	cases := []struct{ name, fixture, rel, backup, exec string }{
		{"seed001", "migrate/testdata/seed001/apex-implement.json", ".claude/workflow-state.json", ".claude/workflow-state.v1.json.bak", ""},
		{"seed001-no-times", "migrate/testdata/seed001/oneshot-minimal.json", ".claude/workflow-state.json", ".claude/workflow-state.v1.json.bak", ""},
		{"seed002", "migrate/testdata/seed002/implementation.json", "memory/state/phase.json", "memory/state/phase.v1.json.bak", "migrate/testdata/seed002/implementation.execution.json"},
		{"seed004", "migrate/testdata/seed004/audit-state.json", ".workflow-state/audit-state.json", ".workflow-state/audit-state.v1.json.bak", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, root, first := killBeforeRename(t, c.fixture, c.rel, c.backup, c.exec)
			old, _ := os.ReadFile(c.fixture)
			s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow.Add(3*time.Hour))))
			w, err := s.ReadWorkflow()
			if err != nil || w.ID != first.ID || w.Revision != first.Revision {
				t.Fatalf("read %s rev %d (%v), want %s rev %d", w.ID, w.Revision, err, first.ID, first.Revision)
			}
			l, n, ok := s.FindLegacy()
			if ok {
				t.Fatalf("the seed file the active workflow was migrated from is reported as a second copy: %s", l.Name)
			}
			if n == nil || n.Kind != "migrated" || n.Path != c.rel || !strings.Contains(n.Message, "still in place after its migration; it is now kept as "+c.backup+";") {
				t.Fatalf("finishing the rename was not said, or not where the original is: %+v", n)
			}
			if _, n, _ := s.FindLegacy(); n != nil {
				t.Fatalf("said again with nothing left to finish: %+v", n)
			}
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(c.rel))); !os.IsNotExist(err) {
				t.Fatalf("the seed file is still in place: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.backup))); err != nil || !bytes.Equal(b, old) {
				t.Fatalf("the original is not kept as %s: %v", c.backup, err)
			}
			if baks, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(c.backup[:len(c.backup)-len(".json.bak")])+"-*")); len(baks) != 0 {
				t.Fatalf("second backups: %v", baks)
			}
			if c.exec != "" {
				b, _ := os.ReadFile(c.exec)
				if got, err := os.ReadFile(filepath.Join(root, "memory", "state", "execution.v1.json.bak")); err != nil || !bytes.Equal(got, b) {
					t.Fatalf("execution.json not kept: %v", err)
				}
			}
			if as, _ := s.ListArchives(); len(as) != 0 {
				t.Fatalf("archived: %+v", as)
			}
			if j, _ := s.ReadJournal(first.ID); len(j.Records) != 1 {
				t.Fatalf("journal has %d lines, want the one migration", len(j.Records))
			}
		})
	}
}

// TestLegacyChangedAfterMigration: a seed file in the place of one already migrated but not
// the same (an older tool wrote it again) is still a second copy, reported and left in place.
func TestLegacyChangedAfterMigration(t *testing.T) {
	dir, root, _ := killBeforeRename(t, "migrate/testdata/seed001/apex-implement.json", ".claude/workflow-state.json", ".claude/workflow-state.v1.json.bak", "")
	p := filepath.Join(root, ".claude", "workflow-state.json")
	changed := []byte(`{"type":"APEX","phase":"test","lastUpdated":"2026-12-01T09:00:00Z"}`)
	os.WriteFile(p, changed, 0o600)
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow.Add(time.Hour))))
	if _, err := s.ReadWorkflow(); err != nil {
		t.Fatal(err)
	}
	if l, _, ok := s.FindLegacy(); !ok || l.Name != ".claude/workflow-state.json" {
		t.Fatalf("a changed seed file is not reported: %+v %v", l, ok)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, changed) {
		t.Fatal("the changed seed file was moved or rewritten")
	}
}

// TestLegacyRetireWaitsForTheMigration: a second session's FindLegacy, which sees the seed file
// still in place while the first session is between committing its migration and renaming
// the file (under the workflow lock), waits for that lock and leaves the rename to the
// migration: one rename, no error for the session migrating. Before, the second session
// renamed the file itself and the migrating session's own rename failed.
func TestLegacyRetireWaitsForTheMigration(t *testing.T) {
	const rel, backup = ".claude/workflow-state.json", ".claude/workflow-state.v1.json.bak"
	dir, root, _ := killBeforeRename(t, "migrate/testdata/seed001/apex-implement.json", rel, backup, "")
	// The first session, as migrateLegacy holds it: the lock, the seed file not yet renamed.
	d := openDir(t, dir)
	unlock, err := d.Lock(".lock-workflow", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir, store.WithLockWait(5*time.Second))
	done := make(chan error, 1)
	var found bool
	go func() {
		_, _, found = s.FindLegacy()
		done <- nil
	}()
	if durabletest.WaitLockWaiter(filepath.Join(dir, ".lock-workflow"), done) {
		t.Fatal("FindLegacy renamed the seed file without waiting for the migration holding the lock")
	}
	if err := os.Rename(filepath.Join(root, filepath.FromSlash(rel)), filepath.Join(root, filepath.FromSlash(backup))); err != nil {
		t.Fatalf("the migrating session's own rename: %v", err)
	}
	unlock()
	<-done
	if found {
		t.Fatal("FindLegacy reported a second copy")
	}
	if baks, _ := filepath.Glob(filepath.Join(root, ".claude", "workflow-state.v1*")); len(baks) != 1 {
		t.Fatalf("backups %v, want one", baks)
	}
}

// TestLegacySecondSeed004FileSeenSameStart: with two seed 004 files, a start that finishes the
// interrupted rename of the one the active workflow was migrated from goes on to the other,
// a second copy, in the same call. Before, it stopped at the rename, and the second copy
// (perhaps the newer workflow) stayed unseen for a whole session.
func TestLegacySecondSeed004FileSeenSameStart(t *testing.T) {
	dir, root, _ := killBeforeRename(t, "migrate/testdata/seed004/audit-state.json", ".workflow-state/audit-state.json", ".workflow-state/audit-state.v1.json.bak", "")
	other := migrateTestdata(t, "seed004/release-state.json")
	if err := os.WriteFile(filepath.Join(root, ".workflow-state", "release-state.json"), other, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow.Add(time.Hour))))
	l, n, ok := s.FindLegacy()
	if n == nil {
		t.Fatal("the finished rename of audit-state.json was not said")
	}
	if !ok || l.Name != ".workflow-state/release-state.json" {
		t.Fatalf("the second seed file was not reported: %+v %v", l.Name, ok)
	}
}

// TestLegacyUnreadableSeedHidesNoOther: a seed file that is not a workflow (not JSON) does not
// hide a second copy that is one behind it. Before, FindLegacy stopped at the first file.
func TestLegacyUnreadableSeedHidesNoOther(t *testing.T) {
	s, dir := newStore(t)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	seeds := filepath.Join(filepath.Dir(filepath.Dir(dir)), ".workflow-state")
	if err := os.MkdirAll(seeds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seeds, "a-state.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := migrateTestdata(t, "seed004/release-state.json")
	if err := os.WriteFile(filepath.Join(seeds, "release-state.json"), other, 0o600); err != nil {
		t.Fatal(err)
	}
	if l, _, ok := s.FindLegacy(); !ok || l.Name != ".workflow-state/release-state.json" {
		t.Fatalf("the seed file behind an unreadable one was not reported: %+v %v", l.Name, ok)
	}
	if b, _ := os.ReadFile(filepath.Join(seeds, "a-state.json")); string(b) != "{not json" {
		t.Fatal("the unreadable seed file was moved or changed")
	}
}
