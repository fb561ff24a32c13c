package engine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestSecondCopyNotRenamedIsSettledOnce: a seed's state file settled as a second copy of the
// workflow in a directory that cannot be written (a read-only mount) stays in place. The
// warning gave the rename's error and no step, and every later session start took the file
// for a second copy again and archived it once more. The warning says the next start renames
// it once that is fixed; later starts know it for the copy settled, and rename it once they
// can, at the first start after that whether or not a workflow is active then.
func TestSecondCopyNotRenamedIsSettledOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		newer bool // the seed file is the newer copy: it is put in the active slot
		end   bool // the active workflow is archived before the rename can be done
	}{{"archived", false, false}, {"made active", true, false}, {"archived, none active", false, true}, {"made active, then archived", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := startApex(t)
			seeds := filepath.Join(e.project, ".workflow-state")
			old, err := os.ReadFile("../store/migrate/testdata/seed004/audit-state.json")
			if err != nil {
				t.Fatal(err)
			}
			if tc.newer {
				old = bytes.Replace(old, []byte("2026-02-03T17:00:00Z"), []byte("2026-11-22T11:00:00Z"), 1)
				old = bytes.Replace(old, []byte(`"report", "status": "done"`), []byte(`"report", "status": "pending"`), 1)
			}
			os.MkdirAll(seeds, 0o700)
			os.WriteFile(filepath.Join(seeds, "audit-state.json"), old, 0o600)
			unmount := durabletest.Mount(t, seeds, seeds, "", syscall.MS_BIND, "", true)
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			w := strings.Join(r.Warnings, "\n")
			if !strings.Contains(strings.Join(r.Notices, "\n"), "two copies") || !strings.Contains(w, "read-only file system; the next session start renames it once that is fixed") {
				t.Fatalf("notices %q\nwarnings %q", r.Notices, r.Warnings)
			}
			if tc.end {
				must(e.open("s2").Archive("abandoned"))(t)
			}
			r = e.open("s3").Resume(engine.ResumeOptions{Apply: true})
			if strings.Contains(strings.Join(append(r.Notices, r.Warnings...), "\n"), "two copies") {
				t.Fatalf("the copy settled was settled again: notices %q\nwarnings %q", r.Notices, r.Warnings)
			}
			unmount()
			r = e.open("s4").Resume(engine.ResumeOptions{Apply: true})
			if _, err := os.Stat(filepath.Join(seeds, "audit-state.v1.json.bak")); err != nil || !strings.Contains(strings.Join(r.Notices, "\n"), "it is now kept as .workflow-state/audit-state.v1.json.bak") {
				t.Fatalf("not renamed once it could be (%v): notices %q\nwarnings %q", err, r.Notices, r.Warnings)
			}
		})
	}
}
