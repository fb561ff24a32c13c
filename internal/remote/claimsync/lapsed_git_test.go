package claimsync_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// openAt is openSession with the engine's clock ahead of this one's by ahead.
func openAt(t *testing.T, dir, session string, ahead time.Duration) *engine.Engine {
	t.Helper()
	vars := map[string]string{"HOME": filepath.Join(dir, "home"), "CLAUDE_PROJECT_DIR": dir}
	en, err := engine.Open(engine.Config{Getenv: func(k string) string { return vars[k] }, WorkDir: dir, Actor: "test",
		YAML: yamldoc.Codec{}, SessionID: session, PID: os.Getpid(), Now: func() time.Time { return time.Now().Add(ahead) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	return en
}

// TestReportSaysAnotherMachinesClaimLapsed: a task running on a machine that is gone, its claim
// past the lease, read here only as "t1 (running)", with nothing saying that this machine may
// take it over. The report now says the claim lapsed, and its next step how to take it over;
// under a live claim it says where it runs (it read "t1 (running)", as this session's own
// work). The next step counted t1, under a's live claim, as
// this session's "1 task to run"; it now says it runs on another machine, until it lapses.
func TestReportSaysAnotherMachinesClaimLapsed(t *testing.T) {
	_, b := t1RunningOnA(t)
	b.sync() // b reads the claims line: a holds t1
	for _, tc := range []struct {
		name   string
		ahead  time.Duration
		want   string
		step   bool
		counts string
	}{
		{"live", 0, "t1 (running on another machine)", false, "Continue phase analyze (1 task running on another machine)"},
		{"lapsed", claimsync.DefaultLease + time.Minute, "t1 (running on another machine, whose claim of it lapsed)", true, "Continue phase analyze (1 task to run)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openAt(t, b.opt.Root, "session-b2", tc.ahead).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if !slices.Equal(r.OpenTasks, []string{tc.want}) {
				t.Fatalf("open tasks %q, want %q", r.OpenTasks, tc.want)
			}
			if step := strings.Contains(r.Next, "take over task t1") && strings.Contains(r.Next, engine.ToolPrefix+"update_task with status running"); step != tc.step {
				t.Fatalf("next step %q: says how to take t1 over: %v, want %v", r.Next, step, tc.step)
			}
			if !strings.HasPrefix(r.Next, tc.counts) {
				t.Fatalf("next step %q, want it to begin %q", r.Next, tc.counts)
			}
		})
	}
	// The step holds: past the lease, update_task here takes t1 over.
	b.opt.Getenv = func(k string) string { return map[string]string{claimsync.EnvClockSkew: "61m"}[k] }
	if _, err := b.task("t1", "running"); err != nil {
		t.Fatalf("taking over t1, its claim lapsed: %v", err)
	}
}

// TestTaskCompletedSaysHowToTakeOverALapsedClaim: this session completing a task another
// machine runs was refused with "that machine marks it done", no way on when that machine is
// gone. Under a lapsed claim the refusal now says how to take the task over; under a live one,
// who holds it and for how long.
func TestTaskCompletedSaysHowToTakeOverALapsedClaim(t *testing.T) {
	a, task, id := runningElsewhere(t)
	for _, tc := range []struct {
		name      string
		ahead     time.Duration
		want, not string
	}{
		{"live", 0, "holds it for", "update_task"},
		{"lapsed", claimsync.DefaultLease + time.Minute, "lapsed, so to take it over call " + engine.ToolPrefix + "update_task with status done", "marks it done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openAt(t, a.opt.Root, "aaaaaaaa-a", tc.ahead).RecordClaudeTask(task, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
				t.Fatalf("completing %s, which another machine runs: %v; want it refused saying %q, not %q", id, err, tc.want, tc.not)
			}
			if got := taskStatus(t, a, id); got != "running" {
				t.Fatalf("the refused completion left %s %s", id, got)
			}
		})
	}
}

// TestStatusCountsTasksRunningElsewhere: cairn status's "Tasks: 1 running" counted t1, which
// runs on another machine, as a task running here. The count now says where it runs, beside
// a task this machine runs.
func TestStatusCountsTasksRunningElsewhere(t *testing.T) {
	_, b := t1RunningOnA(t)
	b.sync() // b reads the claims line: a holds t1
	if _, err := b.task("t2", "running"); err != nil {
		t.Fatal(err)
	}
	r := openSession(t, b.opt.Root, "session-b2").Resume(engine.ResumeOptions{Person: true})
	if want := "1 running, 1 running on another machine"; r.Tasks != want {
		t.Fatalf("tasks %q, want %q", r.Tasks, want)
	}
}
