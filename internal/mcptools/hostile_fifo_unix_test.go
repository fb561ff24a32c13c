//go:build unix

package mcptools_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOAtEveryReadPathTools plants a writer-less FIFO at each path the tools read, one at
// a time, on a running server, and calls every tool twice: each call must answer. Nothing in
// them waits on a clock, so one blocked on a FIFO never answers; the minute only turns a hang
// into a failure that names the call, and a slow call (a loaded machine, -race) passes. (The
// 5 s context it had did neither: the in-process client ignores it while the call runs.)
func TestFIFOAtEveryReadPathTools(t *testing.T) {
	rels := []string{"@memory/MEMORY.md", "@memory/cairn-workflow.md", ".claude/settings.json",
		".claude/settings.local.json", "@home/.claude/settings.json", ".claude/workflows",
		".claude/workflows/custom.md", ".claude/WORKFLOW-STATUS.yaml", "WORKFLOW-STATUS.yaml",
		"documentation/milestones/_active/m.md", ".claude/cairn/checkpoints/plan.json",
		".claude/cairn/checkpoints", ".claude/cairn/logs/events.jsonl", ".claude/cairn/config.json"}
	calls := [][2]string{
		{"resume_check", `{}`}, {"get_vars", `{}`}, {"set_vars", `{"vars":{"PLAN_PATH":"x"}}`},
		{"list_checkpoints", `{}`}, {"load_checkpoint", `{"name":"plan"}`},
		{"save_checkpoint", `{"name":"plan","data":{"b":2}}`}, {"append_log", `{"name":"events","entry":{}}`},
		{"record_learning", `{"title":"t","body":"b"}`}, {"initiative", `{"action":"get"}`},
		{"update_task", `{"id":"t1","status":"running"}`}, {"transition", `{"to":"plan"}`},
		{"expire_ttl", `{"dry_run":true}`}, {"complete_workflow", `{"outcome":"done"}`},
		{"start_workflow", `{"type":"debug","context":"again","replace":true}`},
	}
	runs := 0
	for _, rel := range rels {
		p, c := realServer(t)
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"fifo"}`)
		mustOK(t, c, "save_checkpoint", `{"name":"plan","data":{"a":1}}`)
		target := filepath.Join(p.root, rel)
		switch {
		case len(rel) > 7 && rel[:7] == "@memory":
			target = filepath.Join(p.memory, rel[7:])
		case len(rel) > 5 && rel[:5] == "@home":
			target = filepath.Join(p.home, rel[5:])
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(target)
		if err := syscall.Mkfifo(target, 0o600); err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			for _, cl := range calls {
				runs++
				// The in-process client runs the call on its own goroutine, whatever its
				// context says: the wait is here.
				done := make(chan error, 1)
				go func() {
					_, err := c.CallTool(context.Background(), toolRequest(cl[0], cl[1]))
					done <- err
				}()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("FIFO at %s: %s: %v", rel, cl[0], err)
					}
				case <-time.After(time.Minute):
					t.Fatalf("FIFO at %s: %s hangs (no answer after a minute)", rel, cl[0])
				}
			}
		}
	}
	t.Logf("%d paths, %d tool calls, each answered", len(rels), runs)
}
