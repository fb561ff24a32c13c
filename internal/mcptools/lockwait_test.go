package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
)

// TestLockHeldGivesAStep: a tool whose lock another process holds past the engine's wait says
// who holds it and that nothing changed; the lock error's own "try again once that process has
// finished" names a moment the model cannot see, so the result gives a step it can take.
func TestLockHeldGivesAStep(t *testing.T) {
	p := newProject(t)
	_, c := startServer(t, mcptools.Options{
		Open: func(cfg engine.Config) (mcptools.Engine, error) {
			cfg.LockWait = 20 * time.Millisecond
			return mcptools.OpenEngine(cfg)
		},
		Getenv: p.getenv(p.session), WorkDir: p.root, PPID: 77, Log: quietLog(), NoWatch: true,
	})
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"locks"}`)
	d, err := durable.OpenDir(p.state)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct{ lock, tool, args string }{
		{".lock-workflow", "set_vars", `{"vars":{"WF_A":"1"}}`},
		{".lock-workflow", "transition", `{"to":"plan"}`},
		{".lock-checkpoints", "save_checkpoint", `{"name":"plan","data":{"a":1}}`},
	} {
		unlock, err := d.Lock(tc.lock, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := text(mustFail(t, c, tc.tool, tc.args, "gave up after", "nothing changed"))
		unlock()
		if strings.Contains(got, "try again once") || !strings.Contains(got, "Call "+tc.tool+" again") {
			t.Errorf("%s with %s held: %q, want a step the model can take", tc.tool, tc.lock, got)
		}
	}
}
