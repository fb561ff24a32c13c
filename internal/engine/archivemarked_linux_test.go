package engine_test

import (
	"strings"
	"testing"
)

// cairn archive whose move to archive/ failed (read-only there) had already recorded the
// workflow's end (the record marked archived, a revision a sync shares), yet said "nothing was
// archived, the workflow is as it was ... nothing was changed". It says the workflow is marked
// archived and why its move failed, and the next session start archives it, which it does.
func TestArchiveMarkedButNotMovedSaysWhatHappened(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	archive, unmount := readOnlyArchive(t, e)
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
	nextStartArchives(t, e, archive)
}
