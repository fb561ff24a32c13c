package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A MEMORY.md of 200 lines of the user's: Cairn's line goes near the top, which pushes the
// user's 200th line out of what Claude Code loads. That was said nowhere; the move that did it
// says how many lines and the step, once: the moves and Stops after it say nothing of it.
func TestLinePushedPastTheLoadLimitSaidOnce(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.memoryDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	var user strings.Builder
	for i := range 200 {
		fmt.Fprintf(&user, "- [Note %d](note-%d.md) — the user's\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(e.memoryDir(), "MEMORY.md"), []byte(user.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	en := e.open("s1")
	var said []string
	said = append(said, must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t).Warnings...)
	said = append(said, must(en.Transition(engine.TransitionRequest{To: "plan"}))(t).Warnings...)
	for range 2 {
		if out, _ := e.open("s1").Stop(engine.StopInput{SessionID: "s1"}); out.SystemMessage != "" {
			said = append(said, out.SystemMessage)
		}
	}
	n := 0
	for _, w := range said {
		if strings.Contains(w, "for the user to shorten MEMORY.md") {
			n++
			if !strings.Contains(w, "1 other line") {
				t.Errorf("warning %q: want it to say how many lines are past the limit", w)
			}
		}
	}
	if n != 1 {
		t.Errorf("said %q: want the lines pushed past what Claude Code loads said once, with the step", said)
	}
}
