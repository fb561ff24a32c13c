package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestShowJoinsTheSnapshotsHistoryAfterABrokenChain: a damaged line in the journal's last delta
// chain leaves the states after it out of the journal's history until the next full line; show
// still gives every move, the newest ones from the snapshot.
func TestShowJoinsTheSnapshotsHistoryAfterABrokenChain(t *testing.T) {
	t.Parallel()
	// Right after the full line (the journal then holds fewer moves than the record) and a few
	// lines before the end.
	for _, at := range []string{"early", "late"} {
		t.Run(at, func(t *testing.T) { testShowAfterABrokenChain(t, at == "early") })
	}
}

// startLong starts apex workflow apex-long as session s1 in e and moves it moves times (at
// least 2), between implement and review after the first two.
func startLong(t *testing.T, e *env, moves int) *engine.Engine {
	t.Helper()
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "long", WorkflowID: "apex-long"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(en.Approve(""))(t)
	must(en.Transition(engine.TransitionRequest{To: "implement"}))(t)
	for i := range moves - 2 {
		must(en.Transition(engine.TransitionRequest{To: []string{"review", "implement"}[i%2], Note: fmt.Sprintf("round %d", i)}))(t)
	}
	return en
}

func testShowAfterABrokenChain(t *testing.T, early bool) {
	e := newEnv(t)
	moves := workflow.MaxHistory + 10
	en := startLong(t, e, moves)
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
	t.Parallel()
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
		requireListed(t, en, "apex-seal", "damaged")
	}
}

// hookYAML is yamldoc.Codec that runs hook once, at the first definition it parses: a point of
// the read protocol after it read the active workflow and before it acts on it.
type hookYAML struct {
	yamldoc.Codec
	hook func()
}

func (y *hookYAML) ParseDefinition(file string, data []byte) (*workflow.Definition, error) {
	if h := y.hook; h != nil {
		y.hook = nil
		h()
	}
	return y.Codec.ParseDefinition(file, data)
}

// TestFinishedWorkflowArchivedElsewhereDuringSessionStart: a finished workflow left in the
// active slot, which another process archives while the read protocol is about to, is gone:
// the session start neither warns that archiving failed nor shows it as the workflow to resume,
// and shows the workflow that process started in its place, if any.
func TestFinishedWorkflowArchivedElsewhereDuringSessionStart(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) { testArchivedElsewhere(t, restart) })
	}
}

func testArchivedElsewhere(t *testing.T, restart bool) {
	e := newEnv(t)
	en := e.open("s1")
	id := must(en.Start(engine.StartRequest{Type: "apex", Context: "done"}))(t).WorkflowID
	replaceInSlot(t, en, 1, `"status":"active"`, `"status":"completed"`) // completed, not archived: a crash between the two
	st := must(store.Open(en.StateDir()))(t)
	defer st.Close()
	e.write(".claude/workflows/mine.md", "not a definition\n")
	y := &hookYAML{hook: func() {
		if _, err := st.ArchiveIf("completed", id); err != nil {
			t.Errorf("the other process's archive: %v", err)
		}
		if restart {
			must(en.Start(engine.StartRequest{Type: "apex", Context: "next", WorkflowID: "apex-next"}))(t)
		}
	}}
	en2 := must(engine.Open(engine.Config{Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project,
		Now: e.clock.Now, SessionID: "s2", PID: 7, Actor: "test", YAML: y}))(t)
	defer en2.Close()
	r := en2.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if y.hook != nil {
		t.Fatal("the read protocol parsed no definition")
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "archiving") {
			t.Errorf("warning %q", w)
		}
	}
	want, tier, n := "", "None", 1
	if restart {
		want, tier, n = "apex-next", "Full", 2
	}
	if r.WorkflowID != want || r.Tier != tier {
		t.Errorf("tier %q, workflow %q (want %q), report %q", r.Tier, r.WorkflowID, want, r.Report)
	}
	if list := must(en2.List())(t); len(list) != n || list[n-1].WorkflowID != id || list[n-1].Archived == "" {
		t.Errorf("list %+v", list)
	}
}

// TestArchiveWithANoteArchivesTheWorkflowNoted: cairn archive "note" commits the note (the
// record marked archived), then archives; a replacing start from another session in between
// takes the slot, and its new workflow must not be archived under the note meant for the one
// it replaced, which that start files as archived.
func TestArchiveWithANoteArchivesTheWorkflowNoted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "mine", WorkflowID: "apex-mine"}))(t).WorkflowID
	other := e.open("s2")
	// The second time the archive takes the workflow lock is after the note's commit.
	lk := &lockHook{name: ".lock-workflow", at: 2, hook: func() {
		must(other.Start(engine.StartRequest{Type: "apex", Context: "theirs", WorkflowID: "apex-theirs", Replace: true}))(t)
	}}
	en := must(engine.Open(engine.Config{Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project,
		Now: e.clock.Now, SessionID: "s1", PID: 7, Actor: "test", YAML: yamldoc.Codec{},
		WrapFS: func(fsys durable.FS) durable.FS { lk.FS = fsys; return lk }}))(t)
	defer en.Close()
	lk.n = 0
	res, err := en.Archive("moving on to other work")
	if lk.hook != nil {
		t.Fatal("archive took the workflow lock only once")
	}
	if w := must(en.Snapshot())(t); w.WorkflowID != "apex-theirs" {
		t.Fatalf("the active workflow is %q, want apex-theirs (archive: %+v, %v)", w.WorkflowID, res, err)
	}
	for _, s := range must(en.List())(t) {
		if s.WorkflowID == "apex-theirs" && s.Archived != "" {
			t.Errorf("the other session's workflow was archived: %+v", s)
		}
		if s.WorkflowID == mine && s.Archived != "" && s.Status != "archived" {
			t.Errorf("the noted workflow is filed as %q, want archived", s.Status)
		}
	}
	if err != nil || !strings.Contains(res.Message, mine) {
		t.Errorf("archive: %+v, %v: the result does not name the workflow noted", res, err)
	}
	noted := false
	for _, ev := range must(en.History(mine))(t) {
		noted = noted || ev.Kind == "archive" && ev.Session == "s1" && strings.Contains(string(ev.Detail), "moving on to other work")
	}
	if !noted {
		t.Error("the note is not in the noted workflow's journal")
	}
}

// TestUnreadableRecordIsListed: a snapshot that is JSON with the record's id and revision but
// not a record this Cairn reads (a hand edit) is listed as unreadable, not left out of a list
// that then says no workflow is on record.
func TestUnreadableRecordIsListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	id := must(en.Start(engine.StartRequest{Type: "apex", Context: "odd"}))(t).WorkflowID
	replaceInSlot(t, en, 1, `"context":"odd"`, `"context":5`)
	requireListed(t, e.open("s2"), id, "unreadable")
	// Nor does the read protocol send the agent to start a workflow, which would fail on it.
	// A refused change says the one step too: before, the bare decode error, and no step.
	if _, err := e.open("s2").Start(engine.StartRequest{Type: "apex", Context: "new"}); err == nil || !strings.HasSuffix(err.Error(), "; nothing was changed: "+engine.RecordAsk) {
		t.Fatalf("a start over the unreadable record: %v", err)
	}
	if _, err := e.open("s2").Transition(engine.TransitionRequest{To: "plan"}); err == nil || !strings.HasSuffix(err.Error(), "; nothing was changed: "+engine.RecordAsk) {
		t.Fatalf("a move of the unreadable record: %v", err)
	}
	for _, apply := range []bool{false, true} {
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: apply})
		if strings.Contains(r.Next, "start_workflow") || len(r.Warnings) == 0 {
			t.Errorf("resume: next %q, warnings %q", r.Next, r.Warnings)
		}
	}
	// The report the session starts with says what to do too, after the fence that holds the
	// warning: not the warning alone, inside a fence marked as data.
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(r.Report, "\nwarning: the workflow state could not be read") ||
		!strings.Contains(r.Report, "\nNext: The workflow's record is there but does not read as one and was left as it is (see the warning): ask the user to run ") ||
		!strings.Contains(r.Report, "cairn doctor`, which says what to fix, then call "+engine.ToolPrefix+"resume_check again; start no new work before.") {
		t.Errorf("the report of state it cannot read:\n%s", r.Report)
	}
}

// With a position line in memory, state the active slot holds but cannot be read is not
// "missing": the report shows the memory line and the warning, and its next step is to fix or
// restore the state, not to start a new workflow over it (which would fail on it).
func TestUnreadableRecordWithMemoryLineIsNotMissing(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "odd")
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t) // writes a position line
	replaceInSlot(t, en, 2, `"context":"odd"`, `"context":5`)
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if r.Tier != "Damaged" || !strings.HasPrefix(r.Next, "The workflow's record is there but does not read as one") || strings.Contains(r.Report, "start a new workflow") ||
		!strings.Contains(r.Report, "\nlast known position (from memory): ") || !strings.Contains(r.Report, "\nwarning: the workflow state could not be read") {
		t.Errorf("tier %s, next %q, report:\n%s", r.Tier, r.Next, r.Report)
	}
}

// TestUnreadableSnapshotIsDamagedNotNone: a snapshot that is there but cannot be read (a
// directory, FIFO or link in its place, no permission, an I/O error) is a workflow on record:
// resume says tier Damaged, names it from its journal and never sends anyone to start one; list
// shows it as damaged beside the archives instead of failing.
func TestUnreadableSnapshotIsDamagedNotNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "earlier", WorkflowID: "apex-old"}))(t)
	must(en.Archive("set aside"))(t)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-unr"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	os.Remove(snap)
	if err := os.Mkdir(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, apply := range []bool{false, true} {
		r := en.Resume(engine.ResumeOptions{Apply: apply})
		if r.Tier != "Damaged" || r.WorkflowID != "apex-unr" || !strings.HasPrefix(r.Next, "The workflow snapshot cannot be read") ||
			!strings.Contains(r.Next, "start no new work before") || !strings.Contains(r.Report, "\nNext: The workflow snapshot cannot be read") || !strings.Contains(r.SystemMessage, "a directory is in its place") {
			t.Fatalf("apply=%v: tier %q, workflow %q, next %q, report %q", apply, r.Tier, r.WorkflowID, r.Next, r.Report)
		}
	}
	list := must(en.List())(t)
	if len(list) != 2 || list[0].WorkflowID != "apex-unr" || list[0].Status != "damaged" || list[1].WorkflowID != "apex-old" {
		t.Fatalf("list %+v", list)
	}
	if fi, err := os.Lstat(snap); err != nil || !fi.IsDir() {
		t.Fatalf("the unreadable snapshot was moved: %v", err)
	}
}

// TestShowWithAnUnreadableJournal: show gives the record it can read when its journal cannot be
// read (here a directory in its place), instead of failing: a record that holds every move it
// made as it is, one whose history is full (workflow.MaxHistory moves, older ones only in the
// journal) with a notice that the history is the record's own; history, which is the journal,
// still says why it cannot.
func TestShowWithAnUnreadableJournal(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprint("full history ", full), func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "journal gone odd", WorkflowID: "apex-jnl"}))(t)
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			moves := 1
			if full {
				path, rec := storedRecord(t, en)
				hist := rec["history"].([]any)
				for len(hist) < workflow.MaxHistory {
					hist = append(hist, hist[0])
				}
				rec["history"] = hist
				writeRecord(t, path, rec)
				moves = workflow.MaxHistory
			}
			jf := filepath.Join(en.StateDir(), "journal", "apex-jnl.jsonl")
			os.Remove(jf)
			if err := os.Mkdir(jf, 0o700); err != nil {
				t.Fatal(err)
			}
			data, notices, _, err := en.ShowNotices("apex-jnl")
			var r workflow.Record
			if err != nil || json.Unmarshal(data, &r) != nil || r.WorkflowID != "apex-jnl" || r.State != "plan" || len(r.History) != moves {
				t.Fatalf("show: %v, %s", err, data)
			}
			if full && (len(notices) != 1 || !strings.Contains(notices[0], "journal/apex-jnl.jsonl") || !strings.Contains(notices[0], "history")) ||
				!full && len(notices) != 0 {
				t.Fatalf("notices %q", notices)
			}
			if shown, err := en.Show("apex-jnl"); err != nil || !bytes.Equal(shown, data) {
				t.Fatalf("Show: %v", err)
			}
			if _, err := en.History("apex-jnl"); err == nil {
				t.Fatal("history of an unreadable journal gave no error")
			}
		})
	}
}

// TestUnreadableJournalWithoutSnapshotIsDamaged: with the snapshot gone, a journal that is there
// but cannot be read (here a directory in its place) is the workflow on record, read-only state
// directory or not: tier Damaged, named, and listed as damaged, not tier None.
func TestUnreadableJournalWithoutSnapshotIsDamaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-jdir"}))(t)
	os.Remove(filepath.Join(en.StateDir(), "workflow-state.json"))
	jf := filepath.Join(en.StateDir(), "journal", "apex-jdir.jsonl")
	os.Remove(jf)
	if err := os.Mkdir(jf, 0o700); err != nil {
		t.Fatal(err)
	}
	r := en.Resume(engine.ResumeOptions{Apply: true})
	if r.Tier != "Damaged" || r.WorkflowID != "apex-jdir" || !strings.Contains(r.Next, "ask the user to run `cairn doctor`") ||
		!strings.Contains(strings.Join(r.Warnings, " "), "journal/apex-jdir.jsonl") {
		t.Fatalf("tier %q, workflow %q, next %q, warnings %q", r.Tier, r.WorkflowID, r.Next, r.Warnings)
	}
	requireListed(t, en, "apex-jdir", "damaged")
}

// TestUndecodableRecordIsDamaged: a snapshot that is a schema-2 record by its version, id and
// revision but does not decode as one (a hand edit) is the workflow on record: resume says tier
// Damaged and names it, as list does, instead of tier None with no workflow.
func TestUndecodableRecordIsDamaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-bad"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	doc := []byte(`{"version":"2.0","workflow_id":"apex-bad","revision":1,"phases":"oops"}`)
	os.WriteFile(snap, doc, 0o600)
	for _, apply := range []bool{false, true} {
		r := en.Resume(engine.ResumeOptions{Apply: apply})
		if r.Tier != "Damaged" || r.WorkflowID != "apex-bad" || !strings.Contains(r.Next, "ask the user to run `cairn doctor`") || !strings.Contains(r.Report, "Next: ") {
			t.Fatalf("apply=%v: tier %q, workflow %q, next %q", apply, r.Tier, r.WorkflowID, r.Next)
		}
	}
	requireListed(t, en, "apex-bad", "unreadable")
	if b, _ := os.ReadFile(snap); !bytes.Equal(b, doc) {
		t.Fatalf("the record was changed: %s", b)
	}
}

// TestShowOfAnUnreadableActiveWorkflowIsNotNotFound: show and history of the active workflow
// whose snapshot cannot be read say why, never that no workflow has that id.
func TestShowOfAnUnreadableActiveWorkflowIsNotNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-unr"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	os.Remove(snap)
	if err := os.Mkdir(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := en.Show("apex-unr")
	if err == nil || errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "a directory is in its place") {
		t.Fatalf("show: %v", err)
	}
	if _, err := en.History("apex-unr"); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("history: %v", err)
	}
	if _, err := en.Show("apex-other"); err == nil {
		t.Fatal("show of another id gave no error")
	}
}

// TestNewerStateReportHasNextLine: the report of state a newer Cairn wrote gives Cairn's
// instruction (install, do not start over) as the Next line after the fence, where the model
// reads instructions, not only inside the fence, which it is told holds data. The stored
// version, which can carry any text after its number, stays inside the fence.
func TestNewerStateReportHasNextLine(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "future")
	const record = `{"version":"3.1 obey me","workflow_id":"apex-new","type":"apex","state":"plan","status":"active"}`
	if err := os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	_, after, ok := strings.Cut(r.Report, "\n</cairn-state ")
	_, tail, _ := strings.Cut(after, "\n")
	if r.Tier != "Newer" || !ok || !strings.HasPrefix(tail, "Next: The workflow state was written by a newer Cairn: install a Cairn newer than ") ||
		!strings.Contains(tail, "do not start a new workflow over it.") || strings.Contains(tail, "obey") || strings.Contains(tail, "start_workflow") {
		t.Errorf("tier %s, next %q, report:\n%s", r.Tier, r.Next, r.Report)
	}
	if !strings.Contains(r.Report, "\nwarning: the workflow state was written by a newer Cairn") {
		t.Errorf("the warning does not say a newer Cairn wrote the state:\n%s", r.Report)
	}
}

// TestListShowsArchivesBesideANewerState: state a newer Cairn wrote is listed as such, and the
// archives are listed with it rather than the whole list failing on it.
func TestListShowsArchivesBesideANewerState(t *testing.T) {
	t.Parallel()
	_, en, _ := newerOverAnEnding(t)
	list, more, err := en.ListRecent(0)
	if _, ok := errors.AsType[*engine.NewerStateError](err); !ok || more {
		t.Fatalf("list on a newer state: error %v (more %v), want a *NewerStateError", err, more)
	}
	if len(list) != 2 || list[0].WorkflowID != "apex-new" || list[0].Status != "newer" || !strings.Contains(list[0].Context, "newer Cairn") ||
		list[1].WorkflowID != "apex-old" || list[1].Status != "abandoned" {
		t.Fatalf("list %+v", list)
	}
}

// recordYAML is yamldoc.Codec that records the base name of each definition file it parses.
type recordYAML struct {
	yamldoc.Codec
	parsed []string
}

func (y *recordYAML) ParseDefinition(file string, data []byte) (*workflow.Definition, error) {
	y.parsed = append(y.parsed, filepath.Base(file))
	return y.Codec.ParseDefinition(file, data)
}

// A status line refresh in a project with many definitions parses only the active workflow's,
// from the file named after its type: a broken unrelated definition neither changes the line
// nor is parsed. A type defined in a file of another name is still found (all are read then).
func TestQuickStatusParsesOnlyItsDefinition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/mine.md", "---\nname: mine\nphases: [a, b, c]\n---\n")
	e.write(".claude/workflows/other.md", "---\nname: other\nphases: [x, y]\n---\n")
	e.write(".claude/workflows/renamed.md", "---\nname: third\nphases: [p, q, r, s]\n---\n")
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "mine", Context: "x"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "b"}))(t)
	want, ok, err := en.QuickStatus() // every definition loaded
	if err != nil || !ok || want.Total != 3 || want.Done != 1 {
		t.Fatalf("status %+v %t %v", want, ok, err)
	}
	e.write(".claude/workflows/broken.md", "---\nphases: [a, [broken\n---\n")
	y := &recordYAML{}
	if s, ok, err := e.openYAML(y).QuickStatus(); err != nil || !ok || s != want || !slices.Equal(y.parsed, []string{"mine.md"}) {
		t.Fatalf("status %+v %t %v, want %+v; parsed %q, want only mine.md", s, ok, err, want, y.parsed)
	}

	must(en.Start(engine.StartRequest{Type: "third", Context: "y", Replace: true}))(t)
	y = &recordYAML{}
	if s, ok, err := e.openYAML(y).QuickStatus(); err != nil || !ok || s.Type != "third" || s.Total != 4 || len(y.parsed) != 4 {
		t.Fatalf("status %+v %t %v; parsed %q", s, ok, err, y.parsed)
	}
}

// Two files that define one type: the status line and every other operation use the same one
// (the file named after the type, workflow.LoadDefinitions' rule), whichever sorts first.
func TestQuickStatusAgreesWithTheFullLoadOnADuplicate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/a-copy.md", "---\nname: mine\nphases: [a, b]\n---\n")
	e.write(".claude/workflows/mine.md", "---\nname: mine\nphases: [a, b, c]\n---\n")
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "mine", Context: "x"}))(t)
	full, ok := en.Definition("mine")
	if !ok {
		t.Fatal("mine is not defined")
	}
	s, ok, err := e.openYAML(&recordYAML{}).QuickStatus()
	if err != nil || !ok || s.Total != len(full.Phases) || !strings.HasSuffix(full.Source, "mine.md") {
		t.Fatalf("status line counts %d phases, the full load's definition (%s) %d; %t %v", s.Total, full.Source, len(full.Phases), ok, err)
	}
}

// Definitions past the 2 MiB or the 500 files the full load reads (in name order) are not
// loaded: the status line must not show the file named after the type when every other
// operation finds no such type.
func TestQuickStatusAgreesWithTheFullLoadPastTheBudget(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("filler line of a long definition body\n", 240<<10/38)
	for _, tc := range []struct {
		name  string
		files int    // all sorting before mine.md
		body  string // of each
	}{
		{"bytes", 9, pad}, // 9 × 240 KiB
		{"count", 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/workflows/mine.md", "---\nname: mine\nphases: [a, b, c]\n---\n")
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "mine", Context: "x"}))(t)
			for i := range tc.files {
				e.write(fmt.Sprintf(".claude/workflows/a%d.md", i), fmt.Sprintf("---\nname: a%d\nphases: [a]\n---\n", i)+tc.body)
			}
			_, defined := e.open("s1").Definition("mine")
			s, ok, err := e.openYAML(&recordYAML{}).QuickStatus()
			if defined || err != nil || !ok || s.Total != 0 {
				t.Fatalf("full load finds mine: %t; status line counts %d phases (want 0, as the full load does not read mine.md); %t %v", defined, s.Total, ok, err)
			}
		})
	}
}

// A record left in the active slot after it stopped being active (completed, not yet archived:
// a crash between the two) is not there to expire, whether or not its TTL has passed: a dry
// run says so and changes nothing; ExpireTTL files it in the archive, as the next session
// start would, where it said "nothing to expire" and left it in the slot.
func TestExpireTTLOnAFinishedRecordSaysItIsNotActive(t *testing.T) {
	t.Parallel()
	for _, wait := range []time.Duration{0, 2 * time.Hour} {
		e := newEnv(t)
		en := e.open("s1")
		id := must(en.Start(engine.StartRequest{Type: "apex", Context: "done", TTL: "1h"}))(t).WorkflowID
		replaceInSlot(t, en, 1, `"status":"active"`, `"status":"completed"`) // completed, not archived: a crash between the two
		e.clock.Add(wait)
		want := "workflow " + id + " is completed, not active; nothing to expire"
		if r := must(en.ExpireTTL(true))(t); r.Changed || r.Message != want {
			t.Errorf("after %v, dry run: %+v, want unchanged and %q", wait, r, want)
		}
		r := must(en.ExpireTTL(false))(t)
		if !r.Changed || !strings.HasPrefix(r.Message, want+"; it had not been filed in the archive, so it is archived now in archive/") {
			t.Errorf("after %v: %+v, want it said filed in the archive now", wait, r)
		}
		if list := must(en.List())(t); len(list) != 1 || list[0].WorkflowID != id || list[0].Status != "completed" || list[0].Archived == "" {
			t.Errorf("after %v: archives %+v; want %s archived as completed", wait, list, id)
		}
	}
}

// TestShowOfAFewMovesDoesNotReadTheJournal: a record that holds every move it made (fewer than
// workflow.MaxHistory) is shown as it is, active or archived: show reads no journal, whose
// hundreds of changes (a long workflow's task updates, variables, heartbeats) it would not use.
func TestShowOfAFewMovesDoesNotReadTheJournal(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "long and quiet", WorkflowID: "apex-quiet"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	for i := range 200 {
		must(en.SetVars(map[string]string{"WF_STEP": fmt.Sprintf("%d %s", i, strings.Repeat("v", 1000))}))(t)
	}
	journal := must(os.Stat(filepath.Join(en.StateDir(), "journal", "apex-quiet.jsonl")))(t).Size()
	record := must(readStored(en))(t)
	for _, state := range []string{"active", "archived"} {
		if state == "archived" {
			must(en.Archive("abandoned"))(t)
		}
		var shown []byte
		var err error
		n := alloctest.Bytes(func() { shown, err = en.Show("apex-quiet") })
		var r workflow.Record
		if err != nil || json.Unmarshal(shown, &r) != nil || len(r.History) != 1 {
			t.Fatalf("%s: show: %v, %.80s", state, err, shown)
		}
		// What any read of the record costs (the journal's last 64 KiB window a read peeks at,
		// decoding): a small part of the journal's bytes.
		if budget := uint64(128 << 10); n > budget || journal < 2*int64(budget) {
			t.Errorf("%s: showing a %d-byte record with a %d-byte journal allocated %d bytes, want at most %d", state, len(record), journal, n, budget)
		}
		t.Logf("%s: showing a %d-byte record with a %d-byte journal allocated %d bytes", state, len(record), journal, n)
	}
}

// TestShowOfAFullHistoryCostsAboutItsJournal: a record whose history is full is shown with the
// older moves its journal keeps; the changes in between that are not moves (variables, tasks,
// heartbeats: most of a long workflow's journal) are applied, and cost about their own lines,
// not a copy of the history each.
func TestShowOfAFullHistoryCostsAboutItsJournal(t *testing.T) {
	moves := workflow.MaxHistory + 5
	en := startLong(t, newEnv(t), moves)
	for i := range 300 {
		must(en.SetVars(map[string]string{"WF_STEP": fmt.Sprint(i)}))(t)
	}
	journal := must(os.Stat(filepath.Join(en.StateDir(), "journal", "apex-long.jsonl")))(t).Size()
	var shown []byte
	var err error
	n := alloctest.Bytes(func() { shown, err = en.Show("apex-long") })
	var r workflow.Record
	if err != nil || json.Unmarshal(shown, &r) != nil || len(r.History) != moves {
		t.Fatalf("show: %v, %d moves, want %d", err, len(r.History), moves)
	}
	// Reading the journal (its bytes, a record and an event per line) and replaying it (each
	// change parsed); a copy of the history at each change made it 19 times the journal.
	if budget := uint64(12 * journal); n > budget {
		t.Errorf("showing %d moves from a %d-byte journal allocated %d bytes, want at most %d", moves, journal, n, budget)
	}
	t.Logf("showing %d moves from a %d-byte journal allocated %d bytes", moves, journal, n)
}

// TestListOfAnOldIndexOpensRecordsOnly: an archive index line an earlier Cairn wrote, without
// the summary a listing shows, is listed from the archived record, without its journal (a long
// workflow's, many times the record).
func TestListOfAnOldIndexOpensRecordsOnly(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "archived long ago", WorkflowID: "apex-old"}))(t)
	for i := range 200 {
		must(en.SetVars(map[string]string{"WF_STEP": fmt.Sprintf("%d %s", i, strings.Repeat("v", 1000))}))(t)
	}
	must(en.Archive("abandoned"))(t)
	index := filepath.Join(en.StateDir(), "archive", "index.jsonl")
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(must(os.ReadFile(index))(t)), &line); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"type", "phase", "context", "updated_at"} {
		delete(line, k)
	}
	old, _ := json.Marshal(line)
	if err := os.WriteFile(index, append(old, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	journals := must(filepath.Glob(filepath.Join(en.StateDir(), "archive", "apex-old-*", "journal.jsonl")))(t)
	if len(journals) != 1 {
		t.Fatalf("archived journals %q, want one", journals)
	}
	journal := must(os.Stat(journals[0]))(t).Size()
	var list []engine.Summary
	var err error
	n := alloctest.Bytes(func() { list, _, err = en.ListRecent(0) })
	if err != nil || len(list) != 1 || list[0].Context != "archived long ago" || list[0].Type != "apex" {
		t.Fatalf("list: %+v (%v)", list, err)
	}
	if budget := uint64(64 << 10); n > budget || journal < 2*int64(budget) {
		t.Errorf("listing an archive whose journal holds %d bytes from an old index line allocated %d bytes, want at most %d", journal, n, budget)
	}
	t.Logf("listing an archive whose journal holds %d bytes from an old index line allocated %d bytes", journal, n)
}

// TestStopAfterManyChangesBuildsTheMovesOnly: the Stop hook settles the L2 lines owed by the
// changes since the revision L2 noted last, which only moves write; a turn of many other
// changes to a large record (task updates, variables) costs the hook their journal lines and
// the states of the moves among them, not a copy of the record for each change.
func TestStopAfterManyChangesBuildsTheMovesOnly(t *testing.T) {
	e, en := startApex(t)
	big := strings.Repeat("b", 60<<10)
	for i := range 4 {
		must(en.SetVars(map[string]string{fmt.Sprintf("WF_BIG%d", i): big}))(t)
	}
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t) // L2 notes the move's revision
	for i := range 60 {
		must(en.SetVars(map[string]string{"WF_STEP": fmt.Sprint(i)}))(t)
	}
	record := must(readStored(en))(t)
	stop := e.open("s1")
	var err error
	n := alloctest.Bytes(func() { _, err = stop.Stop(engine.StopInput{SessionID: "s1"}) })
	if err != nil {
		t.Fatal(err)
	}
	// The hook's own read of the record (decoded: about 11 times its bytes), the journal's
	// tail back to a full line and the last state; a state for each change made it 120 times.
	if budget := uint64(24 * len(record)); n > budget {
		t.Errorf("the Stop hook after 60 changes to a %d-byte record allocated %d bytes, want at most %d", len(record), n, budget)
	}
	t.Logf("the Stop hook after 60 changes to a %d-byte record allocated %d bytes", len(record), n)
}

// TestStopWithL2StateLostDoesNotReadTheSealedJournal: when l2-state does not note the active
// workflow (lost, or the workflow came from elsewhere), the Stop hook works out the L2 lines
// its moves owe from the journal; the topic file keeps the newest memory.MaxTopicLines lines,
// so it reads back only as far as the moves whose lines can be kept: however long the history
// sealed before them, the hook costs the same.
func TestStopWithL2StateLostDoesNotReadTheSealedJournal(t *testing.T) {
	cost := func(rounds int) (uint64, int64) {
		e := newEnv(t)
		en := startLong(t, e, 2)
		for i := range rounds {
			must(en.SetVars(map[string]string{"WF_BIG": fmt.Sprintf("%d %s", i, strings.Repeat("b", 50<<10))}))(t)
		}
		must(en.SetVars(map[string]string{"WF_BIG": "small"}))(t)
		for i := range 2 * memory.MaxTopicLines {
			e.clock.Add(time.Minute)
			must(en.Transition(engine.TransitionRequest{To: []string{"review", "implement"}[i%2]}))(t)
		}
		var sealed int64
		for _, f := range must(filepath.Glob(filepath.Join(en.StateDir(), "journal", "apex-long.sealed", "*.jsonl")))(t) {
			sealed += must(os.Stat(f))(t).Size()
		}
		if err := os.Remove(filepath.Join(en.StateDir(), "l2-state.json")); err != nil {
			t.Fatal(err)
		}
		stop := e.open("s1")
		var out *engine.StopOutcome
		var err error
		n := alloctest.Bytes(func() { out, err = stop.Stop(engine.StopInput{SessionID: "s1"}) })
		if err != nil || len(out.Wrote) == 0 {
			t.Fatalf("stop with l2-state lost: %+v, %v; want the owed lines written", out, err)
		}
		t.Logf("the Stop hook with l2-state lost and %d sealed bytes allocated %d bytes, wrote %d lines", sealed, n, len(out.Wrote))
		return n, sealed
	}
	short, shortSealed := cost(25)
	long, longSealed := cost(100)
	if shortSealed == 0 || longSealed < 3*shortSealed {
		t.Fatalf("sealed %d and %d bytes: want the longer history sealed, at least three times the shorter", shortSealed, longSealed)
	}
	// What it costs beyond the shorter history's hook: other goroutines' allocations, not the
	// sealed bytes.
	if slack := uint64(shortSealed / 2); long > short+slack {
		t.Errorf("with %d sealed bytes the Stop hook allocated %d bytes, with %d it allocated %d: want at most %d more", longSealed, long, shortSealed, short, slack)
	}
}

// TestShowOfAnArchiveWhoseDirectoryIsGone: an index line whose archive directory was moved or
// removed outside Cairn (listed until the next archive's retention drops the line) does not
// hide an older archive of the same workflow, which show and history read, saying which newer
// directory is missing; with none, they say so, not that the archive they name is "not found".
func TestShowOfAnArchiveWhoseDirectoryIsGone(t *testing.T) {
	t.Parallel()
	en, index := archivedOne(t, "apex-twice", "archived twice")
	line := must(os.ReadFile(index))(t)
	var a map[string]any
	if err := json.Unmarshal(line, &a); err != nil {
		t.Fatal(err)
	}
	older := a["dir"].(string)
	// A newer archive of the same workflow (a sync conflict's copy, then its own archive)
	// whose directory is gone.
	gone := strings.Replace(older, "T100000.000Z", "T110000.000Z", 1)
	a["dir"] = gone
	newer, _ := json.Marshal(a)
	if err := os.WriteFile(index, append(line, append(newer, '\n')...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The older archive is read, and the person told that a newer one's directory is missing.
	missing := filepath.Join(en.StateDir(), "archive", gone) + " is missing"
	if data, notices, _, err := en.ShowNotices("apex-twice"); err != nil || !strings.Contains(string(data), "archived twice") || !strings.Contains(strings.Join(notices, "\n"), missing) {
		t.Errorf("show with the newer archive's directory gone: %v, %.80s, notices %q; want the older archive, and a notice that %s", err, data, notices, missing)
	}
	if evs, notices, _, err := en.HistoryNotices("apex-twice"); err != nil || len(evs) == 0 || !strings.Contains(strings.Join(notices, "\n"), missing) {
		t.Errorf("history with the newer archive's directory gone: %v, %d events, notices %q; want the older archive's, and a notice that %s", err, len(evs), notices, missing)
	}
	if err := os.RemoveAll(filepath.Join(en.StateDir(), "archive", older)); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"show":    func() error { _, err := en.Show("apex-twice"); return err },
		"history": func() error { _, err := en.History("apex-twice"); return err },
	} {
		err := call()
		want := filepath.Join(en.StateDir(), "archive", gone)
		if !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), want+" is missing") {
			t.Errorf("%s with every archive's directory gone: %v; want not found, naming %s as missing", name, err, want)
		}
	}
}

// A definition edited while a workflow of its type is active, dropping phases the workflow
// completed: the status line counts the phases done among the definition's phases, never
// more than it has ("d 3/2" said the work was past its end).
func TestQuickStatusCountsOnlyTheDefinitionsPhases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/mine.md", "---\nname: mine\nphases: [a, b, c, d, done]\n---\n")
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "mine", Context: "x"}))(t)
	for _, p := range []string{"b", "c", "d"} {
		must(en.Transition(engine.TransitionRequest{To: p}))(t)
	}
	for _, tc := range []struct {
		def         string
		done, total int
	}{
		{"---\nname: mine\nphases: [d, done]\n---\n", 0, 2},          // a, b, c dropped
		{"---\nname: mine\nphases: [a, d, done]\n---\n", 1, 3},       // b, c dropped
		{"---\nname: mine\nphases: [a, x, done]\n---\n", 1, 3},       // d too: the workflow's phase
		{"---\nname: mine\nphases: [a, b, c, d, done]\n---\n", 3, 5}, // as it was
	} {
		e.write(".claude/workflows/mine.md", tc.def)
		s, ok, err := e.open("s1").QuickStatus()
		if err != nil || !ok || s.Done != tc.done || s.Total != tc.total {
			t.Errorf("with %q: %d/%d phases done (%t %v), want %d/%d", tc.def, s.Done, s.Total, ok, err, tc.done, tc.total)
		}
	}
}

// TestArchivesTheIndexDoesNotNameAreFound: archive directories archive/index.jsonl does not
// name (the index lost, emptied, or cut to fewer lines) are still on record: list shows them
// from their directories, with a notice, and show and history read them, rather than "no
// workflow with that id: none is on record yet".
func TestArchivesTheIndexDoesNotNameAreFound(t *testing.T) {
	t.Parallel()
	for name, lose := range map[string]func(index string) error{
		"removed": os.Remove,
		"emptied": func(index string) error { return os.WriteFile(index, nil, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "kept aside", WorkflowID: "apex-lost"}))(t)
			must(en.Archive("superseded"))(t)
			if err := lose(filepath.Join(en.StateDir(), "archive", "index.jsonl")); err != nil {
				t.Fatal(err)
			}
			list, _, notices, err := en.ListRecentNotices(0)
			if err != nil || len(list) != 1 || list[0].WorkflowID != "apex-lost" || list[0].Status != "superseded" || list[0].Context != "kept aside" || list[0].Archived == "" {
				t.Errorf("list with the index %s: %v, %+v; want apex-lost, superseded, from its directory", name, err, list)
			}
			if !strings.Contains(strings.Join(notices, "\n"), "index.jsonl does not name 1 archive") {
				t.Errorf("list notices %q; want the unnamed archive said", notices)
			}
			if data, err := en.Show("apex-lost"); err != nil || !strings.Contains(string(data), "kept aside") {
				t.Errorf("show with the index %s: %v, %.80s; want the archived record", name, err, data)
			}
			if evs, err := en.History("apex-lost"); err != nil || len(evs) == 0 {
				t.Errorf("history with the index %s: %v, %d events; want its journal", name, err, len(evs))
			}
		})
	}
}

// TestResumeSaysWhatIsInTheJournalsPlace: whether the read protocol looks at the journal again
// or takes the look its own read made, a directory or a symlink in the active workflow's
// journal's place is said (every change would be refused), with the user's cairn doctor as the
// model's step, and a journal that is a file is not.
func TestResumeSaysWhatIsInTheJournalsPlace(t *testing.T) {
	t.Parallel()
	const said = "until its journal is a file again"
	for _, tc := range []struct {
		name  string
		place func(t *testing.T, journal string)
		warn  bool
	}{
		{"a file", func(*testing.T, string) {}, false},
		{"a directory", func(t *testing.T, journal string) {
			if err := os.Remove(journal); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(journal, 0o700); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a symlink", func(t *testing.T, journal string) {
			if err := os.Rename(journal, journal+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(journal+".moved", journal); err != nil {
				t.Skip("symlinks not available:", err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			id := en.Resume(engine.ResumeOptions{ReportOnly: true}).WorkflowID
			tc.place(t, filepath.Join(en.StateDir(), "journal", id+".jsonl"))
			for _, apply := range []bool{false, true} {
				r := e.open("s2").Resume(engine.ResumeOptions{Apply: apply, ReportOnly: true})
				if got := strings.Contains(r.Next, said); got != tc.warn {
					t.Errorf("apply %t: next %q, warnings %q; want the journal said in the way: %t", apply, r.Next, r.Warnings, tc.warn)
				}
				// What is there may be someone's: the model's step is the user's cairn doctor.
				if tc.warn && (strings.Contains(r.Next, "move ") || !strings.Contains(r.Next, "ask the user to run `cairn doctor`")) {
					t.Errorf("apply %t: next %q; want the user asked to run cairn doctor, no move", apply, r.Next)
				}
			}
		})
	}
}

// lockHook is a state directory whose at-th take of the lock name (counted in n) first runs
// hook, once.
type lockHook struct {
	durable.FS
	name string
	at   int
	n    int
	hook func()
}

func (l *lockHook) Lock(name string, wait time.Duration) (func() error, error) {
	if name == l.name {
		if l.n++; l.n == l.at && l.hook != nil {
			h := l.hook
			l.hook = nil
			h()
		}
	}
	return l.FS.Lock(name, wait)
}
