package engine_test

import (
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
