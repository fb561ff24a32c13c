package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestForeignSnapshotOneStep: a document in the snapshot's place that holds no workflow record
// and has a version of 3 or above (a package.json, or a newer Cairn's record that moved its
// fields) is left as it is by the store, with one step: the person moves it out of the state directory.
// Doctor and the person's report give that step too; the model, which is not to move state
// files, asks the user to run cairn doctor, and its warning gives no step to move it (before,
// it read "move it out of DIR, then check it with resume_check"). None (nor
// cairn list) calls it damaged, sends it to quarantine (nothing is moved) or asks to repair or delete it. Before,
// doctor called it damaged and said the next command keeps it in quarantine/, and the report's
// Next line asked to make it a readable file again or restore it.
func TestForeignSnapshotOneStep(t *testing.T) {
	t.Parallel()
	const doc = `{"name":"shop","version":"3.2.1","type":"module","main":"index.js"}`
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "kept", WorkflowID: "apex-kept"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	if err := os.WriteFile(snap, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := func(s string) bool {
		l := strings.ToLower(s)
		for _, w := range []string{"damaged", "quarantine", "delete", "remove", "rm ", "readable file again", "restore"} {
			if strings.Contains(l, w) {
				return true
			}
		}
		return false
	}
	c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
	if c == nil || c.OK || bad(c.Detail) || bad(c.Fix) || !strings.Contains(c.Detail, "holds no workflow record") ||
		!strings.Contains(c.Fix, "move "+snap+" out of "+en.StateDir()) || !strings.Contains(c.Fix, "cairn status") {
		t.Errorf("doctor says %+v", c)
	}
	model := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if bad(model.Next) || strings.Contains(model.Next, "move") || !strings.Contains(model.Next, "ask the user to run `cairn doctor`") ||
		!strings.Contains(model.Next, "resume_check") || strings.Contains(model.Next, "cairn status") {
		t.Errorf("model's next step %q", model.Next)
	}
	person := e.open("").Resume(engine.ResumeOptions{Person: true})
	if bad(person.Next) || !strings.Contains(person.Next, "move "+snap+" out of "+en.StateDir()) ||
		!strings.Contains(person.Next, "cairn status") || strings.Contains(person.Next, "resume_check") {
		t.Errorf("person's next step %q", person.Next)
	}
	for _, w := range append(model.Warnings, person.Warnings...) {
		if bad(w) {
			t.Errorf("warning %q", w)
		}
	}
	// The model's warning gives no step of the person's: the file may be someone's.
	for _, w := range model.Warnings {
		if strings.Contains(w, "move it") || strings.Contains(w, "out of the state directory") {
			t.Errorf("the model's warning steers it to move the file: %q", w)
		}
	}
	list, _, err := e.open("s2").ListRecent(10)
	if err != nil || len(list) != 1 || list[0].WorkflowID != "apex-kept" || bad(list[0].Status) || bad(list[0].Context) {
		t.Errorf("list says %+v %v", list, err)
	}
	if b, err := os.ReadFile(snap); err != nil || string(b) != doc {
		t.Fatalf("the file was moved or changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(en.StateDir(), "quarantine")); !os.IsNotExist(err) {
		t.Fatalf("quarantine made: %v", err)
	}
	// The step given is enough: the workflow is read from its journal again.
	if err := os.Rename(snap, filepath.Join(t.TempDir(), "package.json")); err != nil {
		t.Fatal(err)
	}
	if r := e.open("s2").Resume(engine.ResumeOptions{}); r.WorkflowID != "apex-kept" || r.Tier == "Damaged" {
		t.Fatalf("after moving it out: %s %s %q", r.Tier, r.WorkflowID, r.Next)
	}
}

// TestNewerStateLeftUntouchedInEveryRefusal: every operation refused on state a newer Cairn
// wrote says the state was left untouched and gives the one step (install a newer Cairn, start
// nothing over it), as resume and doctor do. Before, all but those two passed on the store's
// own words, "use that newer Cairn, or upgrade this one, to resume it": nothing about the file,
// which a person may then fear was changed, or about starting over it.
func TestNewerStateLeftUntouchedInEveryRefusal(t *testing.T) {
	t.Parallel()
	e, en, _ := newerOverAnEnding(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	before, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	o := e.open("s2")
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"start", func() error { _, err := o.Start(engine.StartRequest{Type: "apex", Context: "over it"}); return err }},
		{"start replacing it", func() error {
			_, err := o.Start(engine.StartRequest{Type: "apex", Context: "over it", Replace: true})
			return err
		}},
		{"transition", func() error { _, err := o.Transition(engine.TransitionRequest{To: "build"}); return err }},
		{"get vars", func() error { _, err := o.GetVars(nil); return err }},
		{"history", func() error { _, err := o.History("apex-new"); return err }},
		{"show", func() error { _, err := o.Show("apex-new"); return err }},
		{"snapshot", func() error { _, err := o.Snapshot(); return err }},
		{"quick status", func() error { _, _, err := o.QuickStatus(); return err }},
		{"archive", func() error { _, err := o.Archive("abandoned"); return err }},
		{"expire", func() error { _, err := o.ExpireTTL(false); return err }},
		{"stop", func() error { _, err := o.Stop(engine.StopInput{SessionID: "s2"}); return err }},
	} {
		err := c.run()
		if !engine.IsNewerState(err) || engine.Classify(err) != engine.StateUnusable {
			t.Errorf("%s: %v, want the newer state's refusal", c.name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "left untouched") || !strings.Contains(msg, "install a Cairn newer than") ||
			!strings.Contains(msg, "do not start a new workflow over it") {
			t.Errorf("%s: %q", c.name, msg)
		}
	}
	if after, err := os.ReadFile(snap); err != nil || string(after) != string(before) {
		t.Fatalf("the newer state was changed: %q %v", after, err)
	}
}

// TestHistoryTellsWhatItLeftOut: a journal line that is not Cairn's (another tool's) is left
// out of the history and kept in the journal, and the history says so and where to look, for
// the active workflow and for an archived one.
func TestHistoryTellsWhatItLeftOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "kept", WorkflowID: "apex-kept"}))(t)
	journal := filepath.Join(en.StateDir(), "journal", "apex-kept.jsonl")
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"note":"another tool wrote this"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	must(en.SetVars(map[string]string{"WF_AFTER": "1"}))(t)
	check := func(when, where string) {
		t.Helper()
		evs, notices, _, err := e.open("s2").HistoryNotices("apex-kept")
		if err != nil || len(evs) < 2 {
			t.Fatalf("%s: %d events, %v", when, len(evs), err)
		}
		if len(notices) != 1 || !strings.HasSuffix(notices[0], "kept there as it is (line 2 skipped: no checksum): look at it in "+where) {
			t.Errorf("%s: notices %q", when, notices)
		}
	}
	check("active", journal)
	must(en.Archive("abandoned"))(t)
	list := must(en.List())(t)
	if len(list) != 1 || list[0].Archived == "" {
		t.Fatalf("list %+v", list)
	}
	check("archived", filepath.Join(en.StateDir(), "archive", list[0].Archived, "journal.jsonl"))
}

// TestDoctorTellsAnotherToolsSnapshotAsSuch: a JSON document in the snapshot's place that holds
// no workflow record and no version above Cairn's (another tool's file: the next command keeps
// it in quarantine/ and rebuilds from the journal) is told by doctor as what it is, not as
// damage. Before, doctor said it "is damaged" and that the next command "keeps the damaged
// file", of a file no one damaged. A snapshot that is not JSON is still told as damaged.
func TestDoctorTellsAnotherToolsSnapshotAsSuch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, detail, fix string }{
		{`{"name":"shop","main":"index.js"}`, "holds no workflow record", "keeps that file in quarantine/"},
		{`{"name":"shop","version":"1.2.0","main":"index.js"}`, "holds no workflow record", "keeps that file in quarantine/"},
		{`{"version":"2.0","workflow_id":`, "is damaged (", "keeps the damaged file in quarantine/"},
	} {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "kept", WorkflowID: "apex-kept"}))(t)
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		if err := os.WriteFile(snap, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		d := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
		if d == nil || d.OK || !strings.Contains(d.Detail, c.detail) || !strings.Contains(d.Detail, "its journal holds the state of apex-kept") ||
			!strings.HasPrefix(d.Fix, "run cairn status: it rebuilds the snapshot from the journal and "+c.fix) {
			t.Errorf("%s: doctor says %+v", c.doc, d)
		}
		if c.detail != "is damaged (" && (strings.Contains(d.Detail, "damaged") || strings.Contains(d.Fix, "damaged")) {
			t.Errorf("%s: told as damaged: %+v", c.doc, d)
		}
	}
}

// TestShowSaysARecordItCannotReadWhole: an archived record a newer Cairn wrote, or a document
// that holds no workflow record in an archive's place, is shown with a notice that says so:
// before, cairn show printed what this Cairn could read of it (a package.json as a workflow of
// type "module") without a word.
func TestShowSaysARecordItCannotReadWhole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{`{"version":"3.1","workflow_id":"apex-gone","revision":9,"future":true}`, `the record of apex-gone was written by a newer Cairn (record version "3.1")`},
		{`{"name":"shop","version":"3.2.1","type":"module","main":"index.js"}`, "the record of apex-gone is not one this Cairn reads ("},
	} {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "gone", WorkflowID: "apex-gone"}))(t)
		must(en.Archive("abandoned"))(t)
		list := must(en.List())(t)
		if len(list) != 1 || list[0].Archived == "" {
			t.Fatalf("list %+v", list)
		}
		rec := filepath.Join(en.StateDir(), "archive", list[0].Archived, "workflow-state.json")
		if err := os.WriteFile(rec, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		data, notices, _, err := e.open("s2").ShowNotices("apex-gone")
		if err != nil || string(data) != c.doc {
			t.Fatalf("%s: show gave %s, %v", c.doc, data, err)
		}
		if len(notices) != 1 || !strings.HasPrefix(notices[0], c.want) || !strings.Contains(notices[0], "left untouched") ||
			!strings.Contains(notices[0], "cairn show --json prints it as stored") {
			t.Errorf("%s: notices %q", c.doc, notices)
		}
	}
}

// TestSnapshotLeftAsItIsGivesTheStep: an operation refused on a snapshot the store leaves as
// it is (another tool's file, an older record that cannot be migrated) ends with the one step
// after the repair, for the model a tool (the CLI puts cairn status in its place), not "run the
// command again", which names no command to a model or in a hook's output.
func TestSnapshotLeftAsItIsGivesTheStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, doc, repair, then string }{
		// Something in a state file's place, the person's step (an adapter gives the model its own).
		{"another tool's file", `{"name":"shop","version":"3.2.1","type":"module","main":"index.js"}`, "out of the state directory (it may be someone's)", ", then try again"},
		{"older, not migratable", `{"version":"1.0","workflow_id":"w-old","type":"custom","state":["plan"],"revision":3}`, "correct it by hand as that says", ", then " + engine.CheckOnRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "kept", WorkflowID: "apex-kept"}))(t)
			if err := os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := e.open("s2").SetVars(map[string]string{"PLAN_PATH": "a.md"})
			if err == nil {
				t.Fatal("set over a snapshot left as it is")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.repair+tc.then) || strings.Contains(msg, "command again") {
				t.Errorf("refusal %q does not end with the step after %q: %s", msg, tc.repair, tc.then)
			}
		})
	}
}
