package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectoryInAFilesPlaceTools: a directory where a checkpoint or a log belongs refuses
// save_checkpoint, append_log and load_checkpoint with what is in the way and one step in the model's words (no
// command to run), and keeps the directory and what it holds.
func TestDirectoryInAFilesPlaceTools(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"in the way"}`)
	state := filepath.Join(p.root, ".claude", "cairn")
	for _, call := range []struct{ rel, tool, args string }{
		{"checkpoints/plan.json", "save_checkpoint", `{"name":"plan","data":{"a":1}}`},
		{"logs/events.jsonl", "append_log", `{"name":"events","entry":{"a":1}}`},
		{"checkpoints/plan.json", "load_checkpoint", `{"name":"plan"}`},
	} {
		dir := filepath.Join(state, filepath.FromSlash(call.rel))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("notes"), 0o600); err != nil {
			t.Fatal(err)
		}
		res := mustFail(t, c, call.tool, call.args, "a directory is in its place", "move "+dir+" out of the state directory", "try again")
		if got := text(res); strings.Contains(got, "command") || strings.Contains(got, "renameat") {
			t.Errorf("%s: the model is told %q", call.tool, got)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "notes" {
			t.Errorf("%s: what the directory held changed: %q, %v", call.tool, b, err)
		}
	}
}
