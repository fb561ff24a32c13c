//go:build unix

package mcptools_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/mcptools"
)

// TestWatcherDefinitionsDirRenamedOnto: .claude/workflows replaced by renaming another
// directory onto it (a tool that writes the new set aside and swaps it in) is watched in its
// new form: a definition added after that can be started.
func TestWatcherDefinitionsDirRenamedOnto(t *testing.T) {
	p := newProject(t)
	wf := filepath.Join(p.root, ".claude", "workflows")
	def := func(name string) []byte { return []byte("---\nname: " + name + "\nphases: [one, two]\n---\n") }
	writeAtomic(t, filepath.Join(wf, "mini.md"), def("mini"))
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 4321, Log: quietLog(), Debounce: 20 * time.Millisecond,
	})
	starts := func(typ string) func() bool {
		return func() bool {
			return !callRaw(t, c, "start_workflow", `{"type":"`+typ+`","context":"x","replace":true}`).IsError
		}
	}
	mustOK(t, c, "start_workflow", `{"type":"mini","context":"before"}`)
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
