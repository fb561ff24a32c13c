package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestNewerInitiativeIsLeftUntouched: initiative.json written by a newer Cairn (a version
// above 2.x) is not rewritten by this one, whichever action is called, and the answer says
// to install a newer Cairn. Before, add_milestone, set_status and the sync with
// WORKFLOW-STATUS.yaml wrote this Cairn's idea of the document over it, keeping the newer
// version number on a document of the older shape.
func TestNewerInitiativeIsLeftUntouched(t *testing.T) {
	t.Parallel()
	for _, r := range []engine.InitiativeRequest{
		{Action: "get"},
		{Action: "add_milestone", Milestone: "m2"},
		{Action: "update_milestone", Milestone: "m1", Status: "in_progress"},
		{Action: "set_status", Status: "in_progress"},
		{Action: "create", Title: "another"},
	} {
		t.Run(r.Action, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "big"}))(t)
			must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1"}))(t)
			e.clock.Add(time.Hour) // the newer Cairn wrote it last: initiative.json is the newer side
			p := filepath.Join(e.project, ".claude", "cairn", "initiative.json")
			var doc map[string]any
			if data, err := os.ReadFile(p); err != nil || json.Unmarshal(data, &doc) != nil {
				t.Fatalf("reading %s: %v", p, err)
			}
			doc["version"] = "3.0"
			doc["updated_at"] = e.clock.Now().Format(time.RFC3339Nano)
			doc["owners"] = []string{"a newer field"}
			newer, _ := json.Marshal(doc)
			if err := os.WriteFile(p, newer, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := en.Initiative(r)
			if err == nil || !strings.Contains(err.Error(), "newer Cairn") {
				t.Errorf("%s on a newer Cairn's initiative.json: %v, want it said to be a newer Cairn's", r.Action, err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, newer) {
				t.Errorf("%s rewrote a newer Cairn's initiative.json:\n got %s\nwant %s", r.Action, got, newer)
			}
		})
	}
}

// TestMisshapenInitiativeSaysWhichField: initiative.json that is JSON but not of an
// initiative's shape (a hand edit, another tool's) is refused in Cairn's words: which member
// is wrong, that the file was left as it is, and the step. Before, the answer was Go's decoder
// error naming Go types ("Go struct field initiativeJSON.milestones of type
// []workflow.Milestone") with no step.
func TestMisshapenInitiativeSaysWhichField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{`{"version":"2.0","id":"initiative-x","status":"created","milestones":"oops"}`, "milestones"},
		{`{"version":"2.0","id":"initiative-x","status":"created","milestones":[{"id":7}]}`, "milestones[0].id must be a string, not a number"},
		{`[]`, "must be an object, not an array"},
		{`{"version":"2.0","id":"initiative-x","status":"created","milestones":[],"updated_at":"yesterday"}`, "not of the form"},
	} {
		e := newEnv(t)
		e.write(".claude/cairn/initiative.json", c.doc)
		for _, action := range []string{"get", "add_milestone"} {
			_, err := e.open("s1").Initiative(engine.InitiativeRequest{Action: action, Milestone: "m2"})
			if err == nil {
				t.Fatalf("%s on %s: no error", action, c.doc)
			}
			msg := err.Error()
			for _, bad := range []string{"Go ", "workflow.", "initiativeJSON"} {
				if strings.Contains(msg, bad) {
					t.Errorf("%s on %s: %q names Go's types (%q)", action, c.doc, msg, bad)
				}
			}
			for _, want := range []string{c.want, "left as it is", "correct"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s on %s: %q, want %q in it", action, c.doc, msg, want)
				}
			}
		}
		if got := e.readFile(".claude/cairn/initiative.json"); got != c.doc {
			t.Errorf("initiative.json changed: %s", got)
		}
	}
}

// TestSeedInitiativeLastUpdatedIsTaken: seed 001's initiative.json keeps its time as
// lastUpdated, the key its sync protocol compares. Cairn read only updated_at, so a seed's
// initiative.json was taken as never updated: an older WORKFLOW-STATUS.yaml won over it
// (its newer status lost) and the warning said "last updated 106751d 23h ago".
func TestSeedInitiativeLastUpdatedIsTaken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := e.clock.Now()
	e.write(".claude/cairn/initiative.json", `{"id":"initiative-seed","title":"seed","status":"in_progress","milestones":[],"lastUpdated":"`+
		now.Add(-time.Hour).Format(time.RFC3339)+`"}`)
	e.write(".claude/WORKFLOW-STATUS.yaml", "initiative: initiative-seed\ntitle: seed\nstatus: created\nprogress: 0\nlastUpdated: \""+
		now.Add(-2*time.Hour).Format(time.RFC3339)+"\"\n")
	res := must(e.open("s1").Initiative(engine.InitiativeRequest{Action: "get"}))(t)
	var got struct{ Status string }
	if err := json.Unmarshal(res.Workflow, &got); err != nil || got.Status != "in_progress" {
		t.Errorf("status %q (%v), want the newer initiative.json's in_progress: %s", got.Status, err, res.Message)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "106751d") {
			t.Errorf("warning %q: the seed's lastUpdated was not read", w)
		}
	}
}
