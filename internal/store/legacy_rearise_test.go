package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestSeedFileLeftInPlaceNotMigratedAgain: a seed's state file whose directory cannot be
// written is migrated and left in place; once that workflow is archived, the next read finds
// no active workflow, and beside a workflow started since it is no second copy of the state.
// Before, it migrated the seed file again: the workflow ended came back as the active one, in
// its old phase (or, beside a new one, was archived as a conflict at every session start).
func TestSeedFileLeftInPlaceNotMigratedAgain(t *testing.T) {
	dir, root, seed := seedProject(t, "seed001/apex-implement.json")
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow)), store.WithProjectFS(noWrites{openDir(t, root)}))
	w, err := s.ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", w.Notices, err)
	}
	if _, err := s.Archive("completed"); err != nil {
		t.Fatal(err)
	}
	for read := 1; read <= 2; read++ {
		again, err := s.ReadWorkflow()
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read %d after the archive: %s %+v %v; want no active workflow", read, again.ID, again.Notices, err)
		}
	}
	if _, err := s.UpdateWorkflow(setNext("apex-next", "analyze")); err != nil {
		t.Fatal(err)
	}
	if l, _, found := s.FindLegacy(); found {
		t.Fatalf("the seed file, migrated and archived, is taken for a second copy of the state: %s", l.Name)
	}
	if got, err := os.ReadFile(filepath.Join(root, ".claude", "workflow-state.json")); err != nil || string(got) != string(seed) {
		t.Fatalf("the seed file is not kept as it was: %v", err)
	}
}

// TestSeedFileLeftInPlaceOutlivesRetention: retention keeps the archive whose journal holds
// the migration of a seed file still in place (its directory cannot be written), however many
// archives come after it: removing it, as it did, left nothing on record of that migration,
// and the next read migrated the seed file again, bringing back the ended workflow.
func TestSeedFileLeftInPlaceOutlivesRetention(t *testing.T) {
	dir, root, _ := seedProject(t, "seed001/apex-implement.json")
	s := mustOpen(t, dir, store.WithClock(clockFrom(fixedNow)), store.WithRetention(1), store.WithProjectFS(noWrites{openDir(t, root)}))
	w, err := s.ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("migration: %+v %v", w.Notices, err)
	}
	seeded := w.ID
	if _, err := s.Archive("completed"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"apex-next", "apex-later"} {
		if _, err := s.UpdateWorkflow(setNext(id, "analyze")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Archive("completed"); err != nil {
			t.Fatal(err)
		}
	}
	if again, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after retention: %s %+v %v; want no active workflow", again.ID, again.Notices, err)
	}
	archives, err := s.ListArchives()
	if err != nil || len(archives) != 2 || archives[0].WorkflowID != "apex-later" || archives[1].WorkflowID != seeded {
		t.Fatalf("archives kept: %+v %v; want apex-later and %s", archives, err, seeded)
	}
}
