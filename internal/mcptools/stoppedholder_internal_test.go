package mcptools

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// TestStoppedHolderStepForTheModel: a tool that gave up on a lock whose holder is stopped told
// the model "Call transition again; if the lock is still held, tell the user which process
// holds it": calls that would all give up the same way, as the stopped process holds the
// lock until it is resumed. It tells the model to have the user resume it (kill -CONT N), and
// to call again once they have; a running holder's step is as it was.
func TestStoppedHolderStepForTheModel(t *testing.T) {
	for _, stopped := range []bool{true, false} {
		te := &durable.LockTimeoutError{Path: "/s/.lock-workflow", Waited: 3 * time.Second, Stopped: stopped,
			Holder: &durable.Holder{PID: 4321, Command: "cairn", Since: time.Unix(0, 0)}}
		msg := usersToFix("transition", te).Error()
		if strings.Contains(msg, "kill -CONT 4321") != stopped || strings.Contains(msg, "if the lock is still held") == stopped ||
			!strings.Contains(msg, "call transition again") && !strings.Contains(msg, "Call transition again") || strings.Contains(msg, "try again") {
			t.Errorf("holder stopped %t: %q", stopped, msg)
		}
	}
}
