//go:build unix

package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
)

// hangGuard only turns a hang into a failure that names the command: nothing in these
// commands waits on a clock, so one blocked on a FIFO never finishes, and a slow one (a
// loaded machine, -race) must not fail for being slow.
const hangGuard = time.Minute

// TestFIFOAtEveryReadPath plants a FIFO (with no writer: a blocking open would wait
// forever) at every path Cairn reads, one at a time, and runs every command, hooks
// included, against it. Each must finish; none may hang.
func TestFIFOAtEveryReadPath(t *testing.T) {
	t.Parallel()
	paths := []string{
		// State.
		".claude/cairn/workflow-state.json",
		".claude/cairn/journal",
		".claude/cairn/checkpoints/plan.json",
		".claude/cairn/checkpoints",
		".claude/cairn/logs/events.jsonl",
		".claude/cairn/logs",
		".claude/cairn/archive/index.jsonl",
		".claude/cairn/archive",
		".claude/cairn/sessions",
		".claude/cairn/config.json",
		".claude/cairn/.lock-workflow",
		".claude/cairn/.lock-log-events",
		".claude/cairn/.gitignore",
		"@memory/.cairn-memory.lock",
		// Memory, settings, definitions, milestones and the status file.
		"@memory/MEMORY.md",
		"@memory/cairn-workflow.md",
		"@memory/cairn-learning-probe.md",
		"@memory",
		".claude/settings.json",
		".claude/settings.local.json",
		"@home/.claude/settings.json",
		".claude/workflows/custom.md",
		".claude/workflows",
		"documentation/milestones/_active/m1.md",
		"documentation/milestones/_active",
		"WORKFLOW-STATUS.yaml",
		".claude/WORKFLOW-STATUS.yaml",
		".git/commondir",
		".git/HEAD",
	}
	commands := [][]string{
		{"status"}, {"status", "--json"}, {"list"}, {"show"}, {"history"}, {"doctor"},
		{"vars", "get", "PLAN_PATH"}, {"vars", "export"}, {"vars", "set", "PLAN_PATH", "x"},
		{"checkpoint", "load", "plan"}, {"checkpoint", "list"}, {"checkpoint", "save", "plan", "{}"},
		{"log", "append", "events", "{}"}, {"transition", "plan"}, {"task", "t1", "running"},
		{"expire", "--dry-run"}, {"hook", "session-start"}, {"hook", "stop"},
		{"start", "debug", "after the fifo", "--replace"}, {"complete", "done"}, {"archive"},
	}
	runs := 0
	for _, rel := range paths {
		p := newCLIProject(t)
		mustRun(t, p, "", "start", "apex", "fifo suite")
		mustRun(t, p, "", "checkpoint", "save", "plan", `{"a":1}`)
		mustRun(t, p, "", "log", "append", "events", `{"a":1}`)
		target := p.resolve(rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(target, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range commands {
			runs++
			done := make(chan struct{})
			go func() {
				defer close(done)
				var out bytes.Buffer
				cli.Main(args, strings.NewReader(`{"session_id":"s1","hook_event_name":"Stop"}`), &out, &out, p.getenv)
			}()
			select {
			case <-done:
			case <-time.After(hangGuard):
				// It stays blocked: the runs after it would only pile up beside it.
				t.Fatalf("FIFO at %s: cairn %s hangs (still running after %s)", rel, strings.Join(args, " "), hangGuard)
			}
		}
		if fi, err := os.Lstat(target); err == nil && fi.Mode()&os.ModeNamedPipe == 0 && !strings.HasPrefix(rel, ".claude/cairn") {
			t.Errorf("FIFO at %s was replaced by a %v", rel, fi.Mode().Type())
		}
	}
	t.Logf("%d paths x %d commands = %d runs, none hung", len(paths), len(commands), runs)
}

func (p *cliProject) resolve(rel string) string {
	switch {
	case strings.HasPrefix(rel, "@memory"):
		return filepath.Join(p.memory, strings.TrimPrefix(rel, "@memory"))
	case strings.HasPrefix(rel, "@home"):
		return filepath.Join(p.home, strings.TrimPrefix(rel, "@home"))
	}
	return filepath.Join(p.root, rel)
}
