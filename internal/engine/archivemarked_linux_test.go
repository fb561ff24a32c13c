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

// cairn archive whose move to archive/ failed (read-only there) had already recorded the
// workflow's end (the record marked archived, a revision a sync shares), yet said "nothing was
// archived, the workflow is as it was ... nothing was changed". It says the workflow is marked
// archived and why its move failed, and the next session start archives it, which it does.
func TestArchiveMarkedButNotMovedSaysWhatHappened(t *testing.T) {
	e, en := startApex(t)
	archive := filepath.Join(e.project, ".claude", "cairn", "archive")
	if err := os.MkdirAll(archive, 0o700); err != nil {
		t.Fatal(err)
	}
	unmount := durabletest.Mount(t, "tmpfs", archive, "tmpfs", syscall.MS_RDONLY, "size=64k,mode=0700", true)
	res, err := en.Archive("abandoned")
	if err != nil {
		t.Fatalf("archive: %v; want the workflow said marked archived, with why its move failed", err)
	}
	w := strings.Join(res.Warnings, "\n")
	if !res.Changed || !strings.Contains(res.Message, "marked archived") || strings.Contains(w, "nothing was changed") || strings.Contains(w, "as it was") ||
		!strings.Contains(w, "the directory "+archive+" is read-only") || !strings.HasSuffix(w, "; the next session start archives it once that is fixed") {
		t.Fatalf("archive said %q, warnings %q", res.Message, res.Warnings)
	}
	unmount()
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
	if r.WorkflowID != "" {
		t.Fatalf("the next session start left workflow %s active: %s", r.WorkflowID, r.Report)
	}
	if names, _ := filepath.Glob(filepath.Join(archive, "apex-*")); len(names) != 1 {
		t.Fatalf("archive/ holds %q, want the workflow", names)
	}
}
