package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// A record an older Cairn let grow to the edge of the 1 MiB a record may hold (it took
// tasks without bound) cannot take one more write. The refusal says that, and what to do,
// rather than "invalid JSON at byte 1048576".
func TestWriteOverTheRecordCapSaysSo(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	path := filepath.Join(en.StateDir(), store.WorkflowFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	var tasks []any
	for i := range 2000 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%04d", i), "phase": "analyze", "status": "pending", "attempts": 0, "note": strings.Repeat("n", 420)})
	}
	rec["tasks"] = tasks
	// To 100 bytes short of the cap: a transition adds more than that.
	b, _ := json.Marshal(rec)
	first := tasks[0].(map[string]any)
	first["note"] = first["note"].(string) + strings.Repeat("n", 1<<20-100-len(b))
	rec["revision"] = rec["revision"].(float64) + 1
	big, _ := json.Marshal(rec)
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = e.open("s1").Transition(engine.TransitionRequest{To: "plan"})
	if err == nil || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "cairn archive") {
		t.Fatalf("a write past the record cap: %v, want a refusal that says the record is full and what to do", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(big) {
		t.Errorf("the refused write changed the record")
	}
	// What the refusal says to do works: the archive keeps the record whole.
	must(e.open("s1").Archive("too large to change"))(t)
}
