package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestMigrateOwnKilledBeforeCommit: a migration killed after its backup was written but before
// its journal line is done again by the next read, and the original is kept once, not once
// per attempt.
func TestMigrateOwnKilledBeforeCommit(t *testing.T) {
	old, err := os.ReadFile("migrate/testdata/schema1/record.json")
	if err != nil {
		t.Fatal(err)
	}
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
