package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestL2UnavailableSaidOnce: where auto-memory cannot be written (its directory is a file),
// SessionStart's report carried two warnings for it, the one with the cause and its step and
// the plan's generic "Auto-memory unavailable — learnings will not persist". Now one, with or
// without a workflow.
func TestL2UnavailableSaidOnce(t *testing.T) {
	t.Parallel()
	for _, active := range []bool{false, true} {
		t.Run(map[bool]string{false: "no workflow", true: "a workflow"}[active], func(t *testing.T) {
			e := newEnv(t)
			file := filepath.Join(e.home, "memfile")
			if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.vars["CAIRN_MEMORY_DIR"] = file
			if active {
				must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			}
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			n := 0
			for _, w := range r.Warnings {
				if strings.Contains(strings.ToLower(w), "auto-memory") {
					n++
				}
			}
			if n != 1 || !strings.Contains(strings.Join(r.Warnings, "\n"), file+" is a file") {
				t.Errorf("warnings %q: want one about auto-memory, naming the file", r.Warnings)
			}
		})
	}
}
