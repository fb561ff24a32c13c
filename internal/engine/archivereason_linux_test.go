package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// `cairn archive abandoned` cut short between marking the workflow archived and moving it to
// the archive (a kill -9; here the move refused) left no trace of its reason: a one-word
// reason is the archive's status, not a note, so the next session start archived the
// workflow as "archived", and the same command run again then said there was no active
// workflow. The reason given is the archive's status whichever finishes it, and the retry
// says the archive was made.
func TestArchiveCutShortKeepsItsReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		finish func(t *testing.T, e *env) string // what is said
		said   string
	}{
		{"session start", func(t *testing.T, e *env) string {
			return e.open("s2").Resume(engine.ResumeOptions{Apply: true}).Report
		}, "the last one ended"},
		{"retry", func(t *testing.T, e *env) string {
			return must(e.open("s1").Archive("abandoned"))(t).Message
		}, "archived workflow"},
		// cairn expire said "is archived, not active; nothing to expire" and left it in the slot.
		{"expire", func(t *testing.T, e *env) string {
			return must(e.open("cli").ExpireTTL(false))(t).Message
		}, "so it is archived now in archive/"},
		{"session start, then retry", func(t *testing.T, e *env) string {
			e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			return must(e.open("s1").Archive("abandoned"))(t).Message
		}, "was already archived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			_, unmount := readOnlyArchive(t, e)
			res := must(en.Archive("abandoned"))(t)
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "moving it to the archive failed") {
				t.Fatalf("archive into a read-only archive/: %+v", res)
			}
			// The reason given is said with the end on record, as a free-text reason is.
			if !strings.Contains(res.Message, "marked archived: abandoned") {
				t.Errorf("archive into a read-only archive/ said %q, want its reason", res.Message)
			}
			unmount()
			said := tc.finish(t, e)
			st := must(store.Open(en.StateDir()))(t)
			defer st.Close()
			archives, _, err := st.RecentArchives(1)
			if err != nil || len(archives) != 1 || archives[0].Reason != "abandoned" {
				t.Fatalf("%q; archives %+v, %v: want the workflow archived as abandoned", said, archives, err)
			}
			if !strings.Contains(said, tc.said) {
				t.Errorf("said %q, want %q", said, tc.said)
			}
		})
	}
}
