package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Memory's position line of a workflow whose state is gone is not taken for the newest
// archive's when that archive holds an earlier workflow of the same type and context: the
// line was written after the archive was made, and the state is said missing.
func TestPositionLineAfterAnArchiveOfTheSameContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "again"}))(t)
	must(en.Archive("because"))(t)
	e.clock.Add(time.Hour)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "again"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	state := en.StateDir()
	for _, f := range []string{"workflow-state.json", "journal"} {
		noErr(t, os.RemoveAll(filepath.Join(state, f)))
	}
	if r := e.open("s2").Resume(engine.ResumeOptions{}); r.Tier != "L2-only" || r.Ended != "" {
		t.Errorf("tier %s ended %q next %q: want the state said missing", r.Tier, r.Ended, r.Next)
	}
}
