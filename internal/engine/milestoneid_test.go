package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestLongMilestoneIDIsNamedWhole: a milestone id the initiative takes (up to 200 characters)
// was said cut at 80 in the answer that added or moved it ("milestone "m-aaaa…" added"), so
// the model was told of an id it never gave; quoted values are cut past any id taken.
func TestLongMilestoneIDIsNamedWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := "m-" + strings.Repeat("a", 198)
	for _, r := range []engine.InitiativeRequest{
		{Action: "create", Title: "Uploader v2"},
		{Action: "add_milestone", Milestone: id},
		{Action: "update_milestone", Milestone: id, Status: "in_progress"},
	} {
		res := must(e.open("s1").Initiative(r))(t)
		if r.Action != "create" && !strings.Contains(res.Message, `milestone "`+id+`"`) {
			t.Errorf("%s: %q, want the milestone's id whole", r.Action, res.Message)
		}
	}
}
