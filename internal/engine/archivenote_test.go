package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// An archive's reason lives only in the journal (cairn history), whose event detail holds
// 1,024 bytes: a reason it could not keep whole is refused before anything changes, with
// the most that fits, never archived with the reason dropped and the whole of it printed
// back as if kept. One that fits is kept whole.
func TestArchiveReasonKeptOrRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, reason string
		refused      string // "" when archived
	}{
		{"a line", "superseded by the v2 plan, see notes/v2.md", ""},
		{"500 characters", strings.Repeat("r", 500), ""},
		{"501 characters", strings.Repeat("r", 501), "the reason is 501 characters, the most is 500; nothing was changed"},
		{"100 KB", strings.Repeat("word ", 20_000), "the reason is 99999 characters, the most is 500; nothing was changed"},
		{"wide characters past the journal's room", strings.Repeat("漢", 400), "the reason is 400 characters, the most the journal keeps of these is 316; nothing was changed"},
		{"wide characters that fit", strings.Repeat("漢", 316), ""},
		{"escaped characters past the journal's room", strings.Repeat("<", 300), "the reason is 300 characters, the most the journal keeps of these is 158; nothing was changed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "archive me", WorkflowID: "apex-1"}))(t)
			res, err := en.Archive(tt.reason)
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) || strings.Contains(err.Error(), tt.reason[:20]) {
					t.Fatalf("Archive = %+v, %v; want a refusal saying %q, the reason not repeated", res, err, tt.refused)
				}
				if st := must(en.Snapshot())(t); st.WorkflowID != "apex-1" {
					t.Fatalf("after a refusal the active workflow is %q", st.WorkflowID)
				}
				evs := must(en.History("apex-1"))(t)
				if len(evs) != 1 {
					t.Fatalf("after a refusal the journal holds %d events, want the start only", len(evs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			evs := must(en.History("apex-1"))(t)
			var d struct{ Note string }
			if last := evs[len(evs)-1]; last.Kind != "archive" || json.Unmarshal(last.Detail, &d) != nil || d.Note != tt.reason {
				t.Fatalf("the journal's last event %s %s does not keep the reason whole", last.Kind, last.Detail)
			}
		})
	}
}

// A move's note within its 500 characters that takes more than the journal's event holds
// (wide characters, < > & escaped) keeps its start in the journal, cut with "…", rather than
// nothing: the record keeps only its last 50 history entries, so after them cairn history is
// where the note is read.
func TestMoveNoteKeptInTheJournal(t *testing.T) {
	t.Parallel()
	for _, note := range []string{strings.Repeat("漢", 500), strings.Repeat("a<b ", 125)} {
		_, en := startApex(t)
		must(en.Transition(engine.TransitionRequest{To: "plan", Note: note}))(t)
		evs := must(en.History(must(en.Snapshot())(t).WorkflowID))(t)
		var d struct{ Note string }
		last := evs[len(evs)-1]
		if err := json.Unmarshal(last.Detail, &d); err != nil || len(last.Detail) > 1024 {
			t.Fatalf("event detail %s (%v)", last.Detail, err)
		}
		if cut, ok := strings.CutSuffix(d.Note, "…"); !ok || len(cut) < 300 || !strings.HasPrefix(note, cut) {
			t.Errorf("the journal keeps the note as %q, want its start cut with …", d.Note)
		}
	}
}
