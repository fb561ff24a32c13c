package engine

import (
	"bytes"
	"strings"
	"testing"
)

// Starts that name no id never collide with the active workflow's id or an archived one's, even
// when the random bytes repeat within one second: the id is drawn again, not refused (a replace
// whose draw met the active id said "choose another or leave it empty" to a caller who had left
// it empty), and never shared with an archived workflow.
func TestGeneratedIDsAreDrawnAgainWhenTaken(t *testing.T) {
	en, _ := openS1(t)
	t.Cleanup(func() { idRand = nil })

	// Every draw repeats 3f9a until the fourth, which gives 0001, then 0002.
	idRand = bytes.NewReader([]byte{0x3f, 0x9a, 0x3f, 0x9a, 0x3f, 0x9a, 0x00, 0x01, 0x3f, 0x9a, 0x00, 0x01, 0x00, 0x02})
	first, err := en.Start(StartRequest{Type: "apex", Context: "first"})
	if err != nil || first.WorkflowID != "apex-20261122T100000Z-3f9a" {
		t.Fatalf("first start: %+v, %v", first, err)
	}
	second, err := en.Start(StartRequest{Type: "apex", Context: "second", Replace: true})
	if err != nil || second.WorkflowID != "apex-20261122T100000Z-0001" {
		t.Fatalf("replace whose draws met the active id: %+v, %v", second, err)
	}
	// 3f9a is archived now, 0001 active: both are drawn again.
	third, err := en.Start(StartRequest{Type: "apex", Context: "third", Replace: true})
	if err != nil || third.WorkflowID != "apex-20261122T100000Z-0002" {
		t.Fatalf("replace whose draws met the archived and the active id: %+v, %v", third, err)
	}

	// Sixteen taken draws in a row: refused, saying what to do, with nothing changed.
	idRand = bytes.NewReader(bytes.Repeat([]byte{0x00, 0x02}, 16))
	if _, err := en.Start(StartRequest{Type: "apex", Context: "fourth", Replace: true}); err == nil ||
		!strings.HasSuffix(err.Error(), "all taken; start again with workflow_id set to an id not used before") {
		t.Fatalf("sixteen taken draws: %v", err)
	}
	if res := en.Resume(ResumeOptions{}); res.WorkflowID != third.WorkflowID {
		t.Fatalf("after the refusal the active workflow is %q", res.WorkflowID)
	}
}
