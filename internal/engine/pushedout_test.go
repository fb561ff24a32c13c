package engine_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A MEMORY.md of 200 lines of the user's: Cairn's line goes near the top, which pushes the
// user's 200th line out of what Claude Code loads. That was said nowhere; the move that did it
// says how many lines and the step, once: the moves and Stops after it say nothing of it.
func TestLinePushedPastTheLoadLimitSaidOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.userIndex(t, 200)
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

// A Stop whose restore keeps another writer's topic file (here a note added to it) and puts
// Cairn's line back into a MEMORY.md that has filled meanwhile, pushing a line past what
// Claude Code loads, marks what L2 then holds, as a restore that pushes nothing does. It did
// not (the push is the restore's error), so the next Stop restored again, every turn.
func TestRestoreThatPushesLinesOutMarksWhatItKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	index, user := e.userIndex(t, 199)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	// A background writer drops Cairn's line for one of its own and adds a note to the topic.
	noErr(t, os.WriteFile(index, []byte(user+"- [Note 199](note-199.md) — the writer's\n"), 0o644))
	topic := filepath.Join(e.memoryDir(), "cairn-workflow.md")
	noErr(t, os.WriteFile(topic, []byte(e.readMemory("cairn-workflow.md")+"\n- The team ships OAuth today\n"), 0o644))

	out, _ := e.open("s1").Stop(engine.StopInput{SessionID: "s1"})
	if !strings.Contains(out.SystemMessage, "for the user to shorten MEMORY.md") || !strings.Contains(e.readMemory("MEMORY.md"), "cairn-workflow.md") {
		t.Fatalf("the first Stop said %q; MEMORY.md:\n%s", out.SystemMessage, e.readMemory("MEMORY.md"))
	}
	var mark struct {
		TopicHex string `json:"topic_hex"`
	}
	noErr(t, json.Unmarshal([]byte(e.readFile(".claude/cairn/l2-mark.json")), &mark))
	if want := hex.EncodeToString([]byte(e.readMemory("cairn-workflow.md"))); mark.TopicHex != want {
		t.Errorf("the mark is not what the restore kept: the next Stop restores again")
	}
}

// A Stop whose restore pushes a line past what Claude Code loads, and whose settling has
// something else to say (here l2-state.json damaged and set aside), says both: the restore's
// note is said by that restore only. The settling's warning stood in its place, and the note
// was never said.
func TestPushedOutSaidBesideTheSettlingsWarning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	index, user := e.userIndex(t, 199)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	noErr(t, os.WriteFile(index, []byte(user+"- [Note 199](note-199.md) — the writer's\n"), 0o644))
	e.write(".claude/cairn/l2-state.json", "{damaged")

	out, _ := e.open("s1").Stop(engine.StopInput{SessionID: "s1"})
	if !strings.Contains(out.SystemMessage, "for the user to shorten MEMORY.md") || !strings.Contains(out.SystemMessage, "l2-state.json") {
		t.Errorf("the Stop said %q: want the line pushed out and the damaged l2-state both said", out.SystemMessage)
	}
}

// A settling whose first owed line pushes a line past what Claude Code loads, and whose next
// is refused (text of a secret's shape), says both: the push is said by the write that did it
// only, and the refused line is not kept. The refusal stood in the push's place.
func TestPushedOutSaidBesideALineRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	index, user := e.userIndex(t, 199)
	en := e.open("s1")
	res := must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	noErr(t, os.WriteFile(index, []byte(user+"- [Note 199](note-199.md) — the writer's\n"), 0o644))
	_ = os.Remove(filepath.Join(en.StateDir(), "l2-mark.json")) // no restore: the write itself pushes
	s := secrettest.Shapes()[3]
	owed, _ := json.Marshal(map[string]any{"workflow_id": res.WorkflowID, "revision": 1,
		"owed": []string{"Active APEX workflow: analyzing “c”", "Active APEX workflow: " + s.Text}})
	e.write(".claude/cairn/l2-state.json", string(owed))

	out, _ := e.open("s1").Stop(engine.StopInput{SessionID: "s1"})
	if !strings.Contains(out.SystemMessage, "for the user to shorten MEMORY.md") || !strings.Contains(out.SystemMessage, "not written") || strings.Contains(out.SystemMessage, s.Core) {
		t.Errorf("the Stop said %q: want the line pushed out and the line refused both said", out.SystemMessage)
	}
}

// userIndex writes a MEMORY.md of n lines of the user's and returns its path and text.
func (e *env) userIndex(t *testing.T, n int) (index, user string) {
	t.Helper()
	noErr(t, os.MkdirAll(e.memoryDir(), 0o755))
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "- [Note %d](note-%d.md) — the user's\n", i, i)
	}
	index = filepath.Join(e.memoryDir(), "MEMORY.md")
	noErr(t, os.WriteFile(index, []byte(b.String()), 0o644))
	return index, b.String()
}
