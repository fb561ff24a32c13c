package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A save over a checkpoint of the same name (an earlier workflow's, or a name the model made
// up twice) says it replaced one and how long ago that was saved; what is stored is the new data.
func TestSaveCheckpointSaysItReplacedOne(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	file := filepath.Join(en.StateDir(), "checkpoints", "plan.json")
	for _, tc := range []struct {
		data, want string
	}{
		{`{"step":1}`, "saved checkpoint plan (10 bytes)"},
		{`{"step":2}`, "saved checkpoint plan (10 bytes), replacing the one saved 2h ago"},
		{`{"step":2}`, "checkpoint plan already held these 10 bytes; nothing changed"},
	} {
		if _, err := os.Stat(file); err == nil {
			at := e.clock.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(file, at, at); err != nil {
				t.Fatal(err)
			}
		}
		res := must(en.SaveCheckpoint("plan", json.RawMessage(tc.data)))(t)
		if res.Message != tc.want {
			t.Errorf("save of %s: message = %q, want %q", tc.data, res.Message, tc.want)
		}
	}
	if d := must(en.LoadCheckpoint("plan"))(t); string(d) != `{"step":2}` {
		t.Errorf("plan loads as %s, want the last data saved", d)
	}
}
