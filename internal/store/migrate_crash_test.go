package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestMigrateOwnAfterKill: a migration of an older snapshot that was killed after its journal
// line (the commit point) but before the snapshot was replaced is finished by the next read,
// from the journal: the same workflow at the same revision, one journal line, the original
// kept once. Before, the next migration found the journal already at the record's revision
// and every read failed with a revision mismatch.
func TestMigrateOwnAfterKill(t *testing.T) {
	old := migrateTestdata(t, "schema1/record.json")
	s, dir := newStore(t)
	snap := filepath.Join(dir, store.WorkflowFile)
	os.WriteFile(snap, old, 0o600)
	first, err := s.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	// The kill: the journal line and the backup are on disk, the snapshot is still the old one.
	os.WriteFile(snap, old, 0o600)
	for run := 1; run <= 2; run++ {
		w, err := mustOpen(t, dir).ReadWorkflow()
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if w.ID != first.ID || w.Revision != first.Revision || !bytes.Equal(w.Data, first.Data) {
			t.Fatalf("run %d: got %s rev %d, want %s rev %d as migrated", run, w.ID, w.Revision, first.ID, first.Revision)
		}
		if want := map[int]string{1: "rolled-forward,migrated", 2: ""}[run]; kinds(w.Notices) != want {
			t.Fatalf("run %d: notices %+v, want %q", run, w.Notices, want)
		}
		if b, _ := os.ReadFile(snap); !bytes.Equal(b, first.Data) {
			t.Fatalf("run %d: snapshot not brought up to date: %s", run, b)
		}
		j, _ := s.ReadJournal(w.ID)
		if len(j.Records) != 1 {
			t.Fatalf("run %d: journal has %d lines, want the one migration", run, len(j.Records))
		}
		baks, _ := filepath.Glob(filepath.Join(dir, "workflow-state.v1*.json.bak"))
		if len(baks) != 1 {
			t.Fatalf("run %d: backups %v, want one", run, baks)
		}
		if b, _ := os.ReadFile(baks[0]); !bytes.Equal(b, old) {
			t.Fatalf("run %d: backup is not the original", run)
		}
	}
}

// TestMigrateOwnKilledBeforeCommit: a migration killed after its backup was written but before
// its journal line is done again by the next read, and the original is kept once, not once
// per attempt.
func TestMigrateOwnKilledBeforeCommit(t *testing.T) {
	old := migrateTestdata(t, "schema1/record.json")
	s, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, store.WorkflowFile), old, 0o600)
	os.WriteFile(filepath.Join(dir, "workflow-state.v1.json.bak"), old, 0o600)
	w, err := s.ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("%+v %v", w.Notices, err)
	}
	baks, _ := filepath.Glob(filepath.Join(dir, "workflow-state.v1*.json.bak"))
	if len(baks) != 1 {
		t.Fatalf("backups %v, want one", baks)
	}
	if b, _ := os.ReadFile(baks[0]); !bytes.Equal(b, old) {
		t.Fatal("backup is not the original")
	}
}

func kinds(ns []store.Notice) string {
	var k []string
	for _, n := range ns {
		k = append(k, n.Kind)
	}
	return strings.Join(k, ",")
}

// TestMigrateOwnRefused: an older snapshot that cannot be converted (a schema 1 record naming
// no current phase of a type with no definition) is refused by every read with the same error,
// which says why and the next step, and is left byte for byte, with no backup made.
func TestMigrateOwnRefused(t *testing.T) {
	old := []byte(`{"version":"1.0","workflow_id":"w-old","type":"custom","state":["plan"],"revision":3}`)
	_, dir := newStore(t)
	snap := filepath.Join(dir, store.WorkflowFile)
	os.WriteFile(snap, old, 0o600)
	var first string
	for run := 1; run <= 2; run++ {
		_, err := mustOpen(t, dir).ReadWorkflow()
		if err == nil {
			t.Fatalf("run %d: read an unconvertible snapshot", run)
		}
		msg := err.Error()
		if !strings.Contains(msg, "could not be migrated") || !strings.Contains(msg, "no current phase") || !strings.Contains(msg, "correct it by hand") {
			t.Fatalf("run %d: %q does not say why and what to do", run, msg)
		}
		if run == 1 {
			first = msg
		} else if msg != first {
			t.Fatalf("run 2 said %q, run 1 %q", msg, first)
		}
		if b, _ := os.ReadFile(snap); !bytes.Equal(b, old) {
			t.Fatalf("run %d: the snapshot changed: %s", run, b)
		}
		if baks, _ := filepath.Glob(filepath.Join(dir, "*.bak")); len(baks) != 0 {
			t.Fatalf("run %d: backups made: %v", run, baks)
		}
	}
}

// TestMigrateOwnNoTimesAfterKill: an older snapshot with no id and no time of its own, its
// migration killed after the journal line, is finished as the same workflow by a later read.
// Before, the id came from the clock: the later read migrated it again under a new id, and
// the first migration's journal was left behind, belonging to no workflow.
func TestMigrateOwnNoTimesAfterKill(t *testing.T) {
	old := []byte(`{"version":"1.0","type":"oneshot","state":"implement","revision":1}`)
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	os.MkdirAll(dir, 0o700)
	snap := filepath.Join(dir, store.WorkflowFile)
	os.WriteFile(snap, old, 0o600)
	first, err := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow))).ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(snap, old, 0o600) // the kill: the journal line is on disk, the snapshot is not
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow.Add(2*time.Hour))))
	w, err := s.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != first.ID || w.Revision != first.Revision {
		t.Fatalf("got %s rev %d, want %s rev %d as first migrated", w.ID, w.Revision, first.ID, first.Revision)
	}
	if js, _ := filepath.Glob(filepath.Join(dir, "journal", "*.jsonl")); len(js) != 1 {
		t.Fatalf("journals %v, want the one migration's", js)
	}
}
