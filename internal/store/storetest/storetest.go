// Package storetest holds helpers for tests that set up a state directory's files by hand,
// and start the writers that race or are killed over one.
package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// UnplaceableArchive makes retention fail in the state directory stateDir: an archive index
// with a damaged line, and an archive it does not name. Where that archive belongs in the
// order is not known, so the next archive's retention removes nothing and says why (PruneErr).
func UnplaceableArchive(t testing.TB, stateDir string) {
	t.Helper()
	archive := filepath.Join(stateDir, "archive")
	other := filepath.Join(archive, "apex-20261101T000000Z-aaaa-20261101T000000.000Z")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"version":"2.0","workflow_id":"apex-20261101T000000Z-aaaa","revision":1,"type":"apex","state":"analyze","status":"completed"}`
	if err := os.WriteFile(filepath.Join(other, store.WorkflowFile), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(archive, "index.jsonl"), []byte("{\"dir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ReadRecord is the active workflow's record in the state directory stateDir, as the store
// reads it.
func ReadRecord(t testing.TB, stateDir string) *workflow.Record {
	t.Helper()
	st, err := store.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Record()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
