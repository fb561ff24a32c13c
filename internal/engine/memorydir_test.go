package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// The helper names the memory directory as the engine does: a project path with "_" in it
// (a subtest's temp dir) must not read an empty memory file.
func TestEnvMemoryDirIsTheEngines(t *testing.T) {
	t.Parallel()
	t.Run("under_score", func(t *testing.T) {
		e := newEnv(t)
		en := e.open("s1")
		defer en.Close()
		if got, want := e.memoryDir(), en.MemoryDir(); got != want {
			t.Fatalf("env.memoryDir() = %q; the engine writes to %q", got, want)
		}
		must(en.Start(engine.StartRequest{Type: "apex", Context: "underscored project"}))(t)
		must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		if m := e.readMemory("MEMORY.md"); !strings.Contains(m, "Active APEX workflow: analyze completed") {
			t.Fatalf("MEMORY.md read through the helper: %q", m)
		}
	})
}
