package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// garbageSnapshot leaves a snapshot that is not JSON and no journal: the store sets it aside
// on the next read and says so in a notice.
func garbageSnapshot(t *testing.T, en *engine.Engine) {
	t.Helper()
	state := en.StateDir()
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStartOverQuarantinedSnapshotSaysSo: a start that finds a garbage snapshot (and no journal
// to rebuild it from) starts the new workflow, and says that the old snapshot was set aside.
func TestStartOverQuarantinedSnapshotSaysSo(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	garbageSnapshot(t, en)
	res := must(en.Start(engine.StartRequest{Type: "apex", Context: "after the damage"}))(t)
	if !containsAny(res.Warnings, "quarantine/workflow-state.json-") {
		t.Errorf("the start did not say the damaged snapshot was set aside: %q", res.Warnings)
	}
}
