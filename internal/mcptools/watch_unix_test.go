//go:build unix

package mcptools_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWatcherDefinitionsDirRenamedOnto: .claude/workflows replaced by renaming another
// directory onto it (a tool that writes the new set aside and swaps it in) is watched in its
// new form: a definition added after that can be started.
func TestWatcherDefinitionsDirRenamedOnto(t *testing.T) {
	p := newProject(t)
	wf, def, starts := definitionsServer(t, p)
	for _, typ := range []string{"maxi", "third"} {
		aside := filepath.Join(p.root, ".claude", "workflows.new")
		writeAtomic(t, filepath.Join(aside, typ+".md"), def(typ))
		if err := os.Remove(filepath.Join(wf, "mini.md")); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Rename(aside, wf); err != nil { // onto the empty one: os.Rename refuses
			t.Fatal(err)
		}
		waitFor(t, starts(typ))
		writeAtomic(t, filepath.Join(wf, "mini.md"), def("mini"))
		waitFor(t, starts("mini"))
		if err := os.Remove(filepath.Join(wf, typ+".md")); err != nil {
			t.Fatal(err)
		}
	}
}
