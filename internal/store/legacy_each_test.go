package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestEachSeedFileStandsAlone: on a first start with nothing active, a seed file that cannot
// be migrated (broken, foreign, a newer Cairn's) does not keep a later one from migrating: the
// first is left as it is with its notice, and the second is migrated in the same read; a
// no-create read says both. Before, the first one's notice was all, and the second waited
// for good (until the first was mended or moved).
func TestEachSeedFileStandsAlone(t *testing.T) {
	good := migrateTestdata(t, "seed004/audit-state.json")
	for name, first := range map[string]string{
		"broken":  `{"type":"APEX","phase":`,
		"foreign": `{"name":"shop","version":"1.0.0"}`,
		"newer":   `{"version":"3.0","workflow_id":"w-1","type":"apex","state":"plan"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
			root := filepath.Dir(filepath.Dir(dir))
			firstPath := filepath.Join(root, ".claude", "workflow-state.json")
			os.MkdirAll(filepath.Dir(firstPath), 0o700)
			os.WriteFile(firstPath, []byte(first), 0o600)
			seeds := filepath.Join(root, ".workflow-state")
			os.MkdirAll(seeds, 0o700)
			os.WriteFile(filepath.Join(seeds, "audit-state.json"), good, 0o600)

			w, err := mustOpen(t, dir, store.WithNoCreate()).ReadWorkflow()
			if !errors.Is(err, store.ErrNotFound) || len(w.Notices) != 2 ||
				w.Notices[0].Kind != "legacy-skipped" || w.Notices[0].Path != ".claude/workflow-state.json" ||
				w.Notices[1].Kind != "legacy-pending" || w.Notices[1].Path != ".workflow-state/audit-state.json" {
				t.Fatalf("no-create read: %+v %v, want the first skipped and the second pending", w.Notices, err)
			}

			w, err = mustOpen(t, dir).ReadWorkflow()
			if err != nil {
				t.Fatalf("the second seed file was not migrated: %+v %v", w.Notices, err)
			}
			if len(w.Notices) != 2 || w.Notices[0].Kind != "legacy-skipped" || w.Notices[0].Path != ".claude/workflow-state.json" ||
				w.Notices[1].Kind != "migrated" || w.Notices[1].Path != ".workflow-state/audit-state.json" {
				t.Fatalf("notices %+v, want the first skipped and the second migrated", w.Notices)
			}
			if msg := w.Notices[0].Message; !strings.Contains(msg, "left as it is") {
				t.Fatalf("%q", msg)
			}
			if b, _ := os.ReadFile(firstPath); string(b) != first {
				t.Fatal("the first seed file changed or moved")
			}
			if b, err := os.ReadFile(filepath.Join(seeds, "audit-state.v1.json.bak")); err != nil || !bytes.Equal(b, good) {
				t.Fatalf("the second seed file was not kept as its backup: %v", err)
			}
			// From now on the migrated workflow is active.
			if w2, err := mustOpen(t, dir).ReadWorkflow(); err != nil || w2.ID != w.ID || len(w2.Notices) != 0 {
				t.Fatalf("next read: %+v %v", w2, err)
			}
		})
	}
}
