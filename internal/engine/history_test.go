package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestLongWorkflowKeepsABoundedSnapshotAndItsWholeHistory: the record on disk holds the newest
// workflow.MaxHistory moves, show and history give all of them, and the resume check finds
// nothing wrong with a history that lost its beginning.
func TestLongWorkflowKeepsABoundedSnapshotAndItsWholeHistory(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "long"}))(t)
	for _, to := range []string{"plan", "implement"} {
		if to == "implement" { // plan is an approval gate: a person approves
			must(en.Approve(""))(t)
		}
		must(en.Transition(engine.TransitionRequest{To: to}))(t)
	}
	moves := 2
	for i := 0; moves < workflow.MaxHistory+30; i++ {
		to := []string{"review", "implement"}[i%2]
		must(en.Transition(engine.TransitionRequest{To: to, Note: fmt.Sprintf("round %d", i)}))(t)
		moves++
	}
	w := must(en.Snapshot())(t)
	var stored workflow.Record
	raw := must(readStored(en))(t)
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.History) != workflow.MaxHistory {
		t.Fatalf("the snapshot holds %d history entries, want %d", len(stored.History), workflow.MaxHistory)
	}
	var shown workflow.Record
	if err := json.Unmarshal(must(en.Show(w.WorkflowID))(t), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.History) != moves || shown.History[0].From != "analyze" || shown.History[moves-1].Note != stored.History[len(stored.History)-1].Note {
		t.Fatalf("show gives %d history entries (want %d), first %+v", len(shown.History), moves, shown.History[0])
	}
	for i := 1; i < moves; i++ {
		if shown.History[i].From != shown.History[i-1].To {
			t.Fatalf("history entry %d does not follow the one before: %+v", i, shown.History[i])
		}
	}
	hist := must(en.History(w.WorkflowID))(t)
	// Every move, the start and the person's approval of plan.
	if len(hist) != moves+2 || hist[0].Kind != "start" {
		t.Fatalf("cairn history gives %d events, want %d", len(hist), moves+2)
	}
	r := must(en.Resume(engine.ResumeOptions{}))(t)
	for _, w := range append(r.Warnings, r.Notices...) {
		if strings.Contains(w, "history") {
			t.Fatalf("a trimmed history is reported: %q", w)
		}
	}
}

func readStored(en *engine.Engine) ([]byte, error) {
	return os.ReadFile(filepath.Join(en.StateDir(), "workflow-state.json"))
}

// TestListReadsTheIndexOnly: list shows an archived workflow's type, phase and context from
// archive/index.jsonl without opening the archive (here, one whose files are gone).
func TestListReadsTheIndexOnly(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "indexed", WorkflowID: "apex-idx"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	info := must(en.Archive("abandoned"))(t)
	dirs, _ := filepath.Glob(filepath.Join(en.StateDir(), "archive", "apex-idx-*"))
	if len(dirs) != 1 {
		t.Fatalf("archive dirs %v (%s)", dirs, info.Message)
	}
	for _, f := range []string{"workflow-state.json", "archive.json", "journal.jsonl"} {
		os.Remove(filepath.Join(dirs[0], f))
	}
	list := must(en.List())(t)
	if len(list) != 1 || list[0].Type != "apex" || list[0].Phase != "plan" || list[0].Context != "indexed" || list[0].Status != "abandoned" || list[0].UpdatedAt.IsZero() {
		t.Fatalf("list %+v", list)
	}
}

// TestDamagedWorkflowIsReportedNotAbsent: snapshot and journal both unreadable show up in the
// resume check (what is unreadable, where the copies are) and in list, never as no workflow.
func TestDamagedWorkflowIsReportedNotAbsent(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-dmg"}))(t)
	state := en.StateDir()
	os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600)
	os.WriteFile(filepath.Join(state, "journal", "apex-dmg.jsonl"), []byte("not a journal\n"), 0o600)
	for range 2 {
		r, err := en.Resume(engine.ResumeOptions{})
		text := fmt.Sprint(err)
		if r != nil {
			text += strings.Join(r.Warnings, " ") + r.Report + r.SystemMessage
		}
		if !strings.Contains(text, "journal/apex-dmg.jsonl") || !strings.Contains(text, "quarantine/workflow-state.json-") {
			t.Fatalf("resume says %q", text)
		}
		list := must(en.List())(t)
		if len(list) != 1 || list[0].WorkflowID != "apex-dmg" || list[0].Status != "damaged" {
			t.Fatalf("list %+v", list)
		}
	}
}

// TestDoctorLooksInArchive: temp files a killed archive left (index, archive.json) are listed.
func TestDoctorLooksInArchive(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "x", WorkflowID: "apex-doc"}))(t)
	must(en.Archive("abandoned"))(t)
	dirs, _ := filepath.Glob(filepath.Join(en.StateDir(), "archive", "apex-doc-*"))
	old := e.clock.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(en.StateDir(), "archive", ".tmp-index.jsonl-1"), filepath.Join(dirs[0], ".tmp-archive.json-2")} {
		os.WriteFile(p, []byte("{"), 0o600)
		os.Chtimes(p, old, old)
	}
	for _, c := range en.Doctor(engine.DoctorOptions{}) {
		if c.Name == "stale temp files" {
			if c.OK || !strings.Contains(c.Detail, ".tmp-index.jsonl-1") || !strings.Contains(c.Detail, ".tmp-archive.json-2") {
				t.Fatalf("doctor: %+v", c)
			}
			return
		}
	}
	t.Fatal("no stale temp check")
}
