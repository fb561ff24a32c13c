package engine_test

import (
	"strings"
	"testing"

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
