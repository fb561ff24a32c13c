package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestStoppedHolderKeepsItsStep: a lock given up on whose holder is stopped (SIGSTOP, Ctrl-Z)
// is freed only by resuming it, which the lock error says. Where a text gave its own step
// (resume_check's warnings, the Stop hook's line, the MCP tools), WithoutRetry dropped the
// resume step with the "try again", leaving "pid N (cairn-mcp, stopped)" and no way out; the
// end committed whose archive met that lock said "try again once that process has finished",
// which never comes; an archive left to the next session start said only that. All keep "kill -CONT N"; a running holder's texts are as they were.
func TestStoppedHolderKeepsItsStep(t *testing.T) {
	t.Parallel()
	for _, stopped := range []bool{true, false} {
		te := &durable.LockTimeoutError{Path: "/s/.lock-workflow", Waited: 3 * time.Second, Stopped: stopped,
			Holder: &durable.Holder{PID: 4321, Command: "cairn-mcp", Since: time.Unix(0, 0)}}
		without := WithoutRetry(errors.Join(errors.New("recovering"), te))
		// A stopped holder is not waited for: no wait is said.
		if stopped {
			te.Waited = 0
		}
		ended := (&endedLockedError{id: "apex-1", status: workflow.StatusCompleted, te: te}).Error()
		if strings.Contains(ended, "kill -CONT 4321") != stopped || strings.Contains(ended, "has finished") == stopped || strings.Contains(ended, "after 0s") {
			t.Errorf("holder stopped %t: %q", stopped, ended)
		}
		// The archive of an end just committed, left to the next session start, which cannot
		// take the lock either until the holder is resumed.
		if left := notArchived(te); strings.Contains(left, "kill -CONT 4321") != stopped || !strings.Contains(left, "the next session start") {
			t.Errorf("holder stopped %t: %q", stopped, left)
		}
		if strings.Contains(without, "kill -CONT 4321") != stopped {
			t.Errorf("holder stopped %t: %q", stopped, without)
		}
		if strings.Contains(without, "try again") {
			t.Errorf("holder stopped %t: %q keeps the retry WithoutRetry is to drop", stopped, without)
		}
	}
}
