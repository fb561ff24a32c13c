package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestShowJoinsTheSnapshotsHistoryAfterABrokenChain: a damaged line in the journal's last delta
// chain leaves the states after it out of the journal's history until the next full line; show
// still gives every move, the newest ones from the snapshot.
func TestShowJoinsTheSnapshotsHistoryAfterABrokenChain(t *testing.T) {
	// Right after the full line (the journal then holds fewer moves than the record) and a few
	// lines before the end.
	for _, at := range []string{"early", "late"} {
		t.Run(at, func(t *testing.T) { testShowAfterABrokenChain(t, at == "early") })
	}
}

func testShowAfterABrokenChain(t *testing.T, early bool) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "long", WorkflowID: "apex-long"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(en.Approve(""))(t)
	must(en.Transition(engine.TransitionRequest{To: "implement"}))(t)
	moves := 2
	for i := 0; moves < workflow.MaxHistory+10; i++ {
		must(en.Transition(engine.TransitionRequest{To: []string{"review", "implement"}[i%2], Note: fmt.Sprintf("round %d", i)}))(t)
		moves++
	}
	jf := filepath.Join(en.StateDir(), "journal", "apex-long.jsonl")
	lines := bytes.SplitAfter(must(os.ReadFile(jf))(t), []byte("\n"))
	full := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"snapshot":`)) {
			full = i
		}
	}
	bad := len(lines) - 6 // the last element is the empty tail after the final newline
	if early {
		bad = full + 1
	}
	if full < 0 || bad <= full || bad >= len(lines)-2 {
		t.Fatalf("last full line %d of %d: no delta chain to break", full, len(lines))
	}
	lines[bad] = bytes.Replace(lines[bad], []byte(`"sum":"`), []byte(`"sum":"0`), 1)
	t.Logf("line %d of %d broken, the last full line is %d", bad+1, len(lines)-1, full+1)
	if err := os.WriteFile(jf, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	var stored, shown workflow.Record
	if err := json.Unmarshal(must(readStored(en))(t), &stored); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(must(e.open("s2").Show("apex-long"))(t), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.History) != moves || shown.History[0].From != "analyze" || shown.History[moves-1].Note != stored.History[len(stored.History)-1].Note {
		t.Fatalf("show gives %d history entries (want %d), the last %+v", len(shown.History), moves, shown.History[len(shown.History)-1])
	}
	for i := 1; i < moves; i++ {
		if shown.History[i].From != shown.History[i-1].To || shown.History[i].At.Before(shown.History[i-1].At) {
			t.Fatalf("history entry %d does not follow the one before: %+v", i, shown.History[i])
		}
	}
}

// TestDamagedSealedJournalIsListed: a workflow whose snapshot is unreadable, whose active
// journal is gone and whose sealed segments hold no readable line is reported (tier Damaged,
// not "start one") and listed as damaged, as one whose active journal is unreadable is.
func TestDamagedSealedJournalIsListed(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-seal"}))(t)
	state := en.StateDir()
	os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600)
	os.Remove(filepath.Join(state, "journal", "apex-seal.jsonl"))
	os.Mkdir(filepath.Join(state, "journal", "apex-seal.sealed"), 0o700)
	os.WriteFile(filepath.Join(state, "journal", "apex-seal.sealed", "1.jsonl"), []byte("not a journal\n"), 0o600)
	for range 2 {
		if r := en.Resume(engine.ResumeOptions{ReportOnly: true}); r.Tier != "Damaged" || r.WorkflowID != "apex-seal" || strings.Contains(r.Next, "start_workflow") {
			t.Fatalf("resume: tier %q, workflow %q, next %q", r.Tier, r.WorkflowID, r.Next)
		}
		list := must(en.List())(t)
		if len(list) != 1 || list[0].WorkflowID != "apex-seal" || list[0].Status != "damaged" {
			t.Fatalf("list %+v", list)
		}
	}
}
