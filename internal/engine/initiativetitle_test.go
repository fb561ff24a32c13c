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
)

// TestNoInitiativeSaysCreateNeedsATitle: with no initiative, the answer that sends the model to
// create one says that create takes a title, so its next call is the create that works rather
// than one refused for the title it left out.
func TestNoInitiativeSaysCreateNeedsATitle(t *testing.T) {
	t.Parallel()
	en := newEnv(t).open("s1")
	res := must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t)
	if !strings.Contains(res.Message, "title") {
		t.Errorf("get with no initiative: %q, want create's title named", res.Message)
	}
	for _, r := range []engine.InitiativeRequest{
		{Action: "add_milestone", Milestone: "design"},
		{Action: "set_status", Status: "in_progress"},
		{Action: "update_milestone", Milestone: "design", Status: "completed"},
	} {
		if _, err := en.Initiative(r); err == nil || !strings.Contains(err.Error(), "title") {
			t.Errorf("%s with no initiative: %v, want create's title named", r.Action, err)
		}
	}
}

// TestInitiativeFullSaysHowToMakeRoom: the refusal of a milestone past the hundredth sends
// the agent to WORKFLOW-STATUS.yaml; following its words (the milestones removed there, and
// whatever else it names) makes room, so the next add_milestone is taken. Before, it did not
// say that the file's lastUpdated decides which side wins: the edit, older than
// initiative.json, was written over and the milestones came back.
func TestInitiativeFullSaysHowToMakeRoom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "big"}))(t)
	for i := range 100 {
		must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: fmt.Sprintf("m%03d", i)}))(t)
	}
	_, err := en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "one-more"})
	if err == nil || !strings.Contains(err.Error(), "WORKFLOW-STATUS.yaml") {
		t.Fatalf("the 101st milestone: %v", err)
	}
	e.clock.Add(time.Minute) // the agent edits the file a little later
	status := filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")
	data, rerr := os.ReadFile(status)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var kept []string
	item := false // in the list item of the milestone no longer needed
	for l := range strings.Lines(string(data)) {
		switch {
		case strings.HasSuffix(l, "- id: m099\n"):
			item = true
			continue
		case item && strings.HasPrefix(strings.TrimLeft(l, " "), "status:"):
			item = false
			continue
		case strings.HasPrefix(l, "lastUpdated:") && strings.Contains(err.Error(), "lastUpdated"):
			l = "lastUpdated: \"" + e.clock.Now().Format(time.RFC3339) + "\"\n"
		}
		item = false
		kept = append(kept, l)
	}
	if len(kept) == strings.Count(string(data), "\n") {
		t.Fatalf("no milestone to remove in:\n%s", data)
	}
	if err := os.WriteFile(status, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err2 := en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "one-more"}); err2 != nil {
		out, _ := os.ReadFile(status)
		t.Fatalf("after following %q: %v\n%s", err, err2, out)
	}
}

// TestCreateOverArchivedKeepsIt: archiving a completed initiative is the step that makes room
// for another, and creating that one replaced initiative.json and WORKFLOW-STATUS.yaml whole:
// the archived initiative and its milestones were gone, and the answer did not say so. It is
// now kept in the state directory under its id, and the answer says where.
func TestCreateOverArchivedKeepsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	for _, r := range []engine.InitiativeRequest{
		{Action: "create", Title: "first"}, {Action: "add_milestone", Milestone: "m1", Note: "Milestone one"},
		{Action: "update_milestone", Milestone: "m1", Status: "completed"},
		{Action: "set_status", Status: "completed"}, {Action: "set_status", Status: "archived"},
	} {
		must(en.Initiative(r))(t)
	}
	var old struct{ ID string }
	if err := json.Unmarshal(must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t).Workflow, &old); err != nil || old.ID == "" {
		t.Fatalf("reading the archived initiative: %v", err)
	}
	res := must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "second"}))(t)
	kept := filepath.Join(".claude", "cairn", strings.ToLower(old.ID)+".json")
	if !strings.Contains(res.Message, kept) {
		t.Errorf("create over the archived initiative: %q, want where it is kept (%s)", res.Message, kept)
	}
	data, err := os.ReadFile(filepath.Join(e.project, kept))
	if err != nil {
		t.Fatalf("the archived initiative is not kept: %v", err)
	}
	var in struct {
		ID, Title, Status string
		Milestones        []struct{ ID, Title, Status string }
	}
	if err := json.Unmarshal(data, &in); err != nil || in.ID != old.ID || in.Title != "first" || in.Status != "archived" ||
		len(in.Milestones) != 1 || in.Milestones[0].ID != "m1" || in.Milestones[0].Title != "Milestone one" || in.Milestones[0].Status != "completed" {
		t.Errorf("kept %s (%v), want the archived initiative with its milestone", data, err)
	}
}

// TestAddMilestoneNamesIt: add_milestone's answer said only the initiative's status and
// progress, and a second add of an id already there (with another title, here) said
// "nothing changed" without saying why: the model could not tell its milestone was not added
// as asked. The answer names the milestone and which of the two it was.
func TestAddMilestoneNamesIt(t *testing.T) {
	t.Parallel()
	en := newEnv(t).open("s1")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "Ship v2"}))(t)
	for _, tc := range []struct{ title, want string }{
		{"design the API", `milestone "design" added`},
		{"another title", `milestone "design" is already there`},
	} {
		r := must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "design", Note: tc.title}))(t)
		if !strings.Contains(r.Message, tc.want) {
			t.Errorf("add_milestone (title %q) says %q, want %q", tc.title, r.Message, tc.want)
		}
	}
}
