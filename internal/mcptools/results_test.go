package mcptools_test

import (
	"strings"
	"testing"
)

// TestSaveCheckpointSameDataAgain: saving a checkpoint with the data it already holds says that
// nothing changed, as set_vars and update_task do; changed: true would tell the model that an
// earlier save had not landed.
func TestSaveCheckpointSameDataAgain(t *testing.T) {
	_, c := realServer(t)
	for i, tc := range []struct {
		data    string
		changed bool
	}{{`{"a":1}`, true}, {`{"a":1}`, false}, {`{"a":2}`, true}} {
		res := mustOK(t, c, "save_checkpoint", `{"name":"plan","data":`+tc.data+`}`)
		s := structured(t, res)
		if s["changed"] != tc.changed {
			t.Errorf("save %d of %s: changed %v, want %v (%s)", i+1, tc.data, s["changed"], tc.changed, text(res))
		}
		if got := text(res); strings.Contains(got, "nothing changed") == tc.changed {
			t.Errorf("save %d of %s: text %q", i+1, tc.data, got)
		}
	}
}
