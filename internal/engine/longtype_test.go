package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A type name may be 64 characters, and a workflow id at most 64 bytes: the id made from a
// name over 42 characters (NAME-20261201T013915Z-4da8) was refused by the store, and every
// start of the type failed with "workflow not saved: the record must be schema 2.x with a
// valid workflow_id and a revision". The id now fits, and an id given too long is refused
// as that.
func TestStartLongTypeName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := strings.Repeat("a", 64)
	e.write(".claude/workflows/"+name+".md", "---\nname: "+name+"\nphases: [x, y]\n---\n")
	res, err := e.open("s1").Start(engine.StartRequest{Type: name, Context: "long name"})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	if id := res.WorkflowID; len(id) > 64 || !strings.HasPrefix(id, "aaaa") {
		t.Errorf("workflow id %q", id)
	}
	_, err = e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x", WorkflowID: strings.Repeat("b", 80), Replace: true})
	if err == nil || !strings.Contains(err.Error(), "workflow id is longer than 64 characters") {
		t.Errorf("start with an 80-character id: %v", err)
	}
}
