//go:build unix

package cli_test

import (
	"strings"
	"testing"
)

// TestPhaseCheckpointsOverCapNamesCommand: a move refused because the checkpoints kept with
// the phases would pass their 512 KiB told the person to keep the data with save_checkpoint,
// the agent's tool, which no command of theirs is; it names cairn checkpoint save.
func TestPhaseCheckpointsOverCapNamesCommand(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "coordinate", "big checkpoints", "--id", "wf-cp")
	big := `{"a":"` + strings.Repeat("x", 125_000) + `"}`
	for _, to := range []string{"research", "plan", "implement", "test"} {
		run(t, dir, env, "transition", to, "--checkpoint", big)
	}
	code, _, stderr := exitOf(t, cairnCmd(t, dir, env, "transition", "debug", "--checkpoint", big))
	if code != 1 || !strings.Contains(stderr, "nothing was changed") || strings.Contains(stderr, "save_checkpoint") || !strings.Contains(stderr, "cairn checkpoint save") {
		t.Fatalf("a move over the phases' checkpoint cap: exit %d, stderr %q; want 1 naming cairn checkpoint save, not the agent's tool", code, stderr)
	}
}
