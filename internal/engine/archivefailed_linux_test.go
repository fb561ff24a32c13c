package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A completion whose archive failed said "the completed workflow stays in the active slot for
// now", Cairn's inner word for a file, and nothing of what comes next. It says the workflow is
// completed and kept, and that the next session start archives it, which it does. It names
// the directory that refused (archive/), not the state directory.
func TestCompletedButNotArchivedSaysWhatHappens(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	archive, unmount := readOnlyArchive(t, e)
	res := must(en.CompleteByPerson("shipped"))(t)
	w := strings.Join(res.Warnings, "\n")
	// "nothing was archived, the workflow is as it was" is the store's word for a failed
	// archive; inside "completed and kept" it said the completion had not happened.
	if strings.Contains(w, "slot") || strings.Contains(w, "as it was") || strings.Contains(w, "nothing was archived") || !strings.HasPrefix(w, "the workflow is completed and kept, but archiving it failed: ") ||
		!strings.HasSuffix(w, "; the next session start archives it once that is fixed") {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	// The write's own words ("nothing was changed", "the state directory ... is read-only")
	// said the completion had not happened, and blamed the whole state directory when only
	// archive/ refused.
	if strings.Contains(w, "nothing was changed") || strings.Contains(w, "the state directory") || !strings.Contains(w, "the directory "+archive+" is read-only") {
		t.Fatalf("warnings: %q; want archive/ named read-only, and nothing said unchanged", res.Warnings)
	}
	unmount()
	nextStartArchives(t, e, archive)
}

// readOnlyArchive mounts a read-only file system on the project's archive/, so that moving
// the workflow there fails; unmount makes it writable again.
func readOnlyArchive(t *testing.T, e *env) (archive string, unmount func()) {
	t.Helper()
	archive = filepath.Join(e.project, ".claude", "cairn", "archive")
	if err := os.MkdirAll(archive, 0o700); err != nil {
		t.Fatal(err)
	}
	return archive, durabletest.Mount(t, "tmpfs", archive, "tmpfs", syscall.MS_RDONLY, "size=64k,mode=0700", true)
}

// nextStartArchives checks that the next session start archives the ended workflow that a
// failed move left in place, into archive.
func nextStartArchives(t *testing.T, e *env, archive string) {
	t.Helper()
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
	if r.WorkflowID != "" || !strings.Contains(r.Report, "nothing to resume; the last one ended") {
		t.Fatalf("the next session start: %+v", r)
	}
	if names, _ := filepath.Glob(filepath.Join(archive, "apex-*")); len(names) != 1 {
		t.Fatalf("archive/ holds %q, want the workflow", names)
	}
}
