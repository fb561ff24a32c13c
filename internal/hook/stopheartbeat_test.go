package hook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// TestStopLogsAHeartbeatNotRecorded: a turn's end whose owner heartbeat is due but cannot be
// recorded (another process holds the workflow's lock) says so in its log, as it says the L2
// lines it still owes. Before, the heartbeat was dropped without a word, and the log said
// "nothing to write".
func TestStopLogsAHeartbeatNotRecorded(t *testing.T) {
	started, state := startedProjectAt(t, "apex-hb", func() time.Time { return time.Now().Add(-time.Hour) })
	getenv := func(k string) string {
		switch k {
		case "CLAUDE_PID": // the client that started it
			return "42"
		case "CAIRN_HOOK_DEADLINE": // the lock wait is most of it
			return "200ms"
		}
		return started(k)
	}
	d, err := durable.OpenDir(state)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	release, err := d.Lock(".lock-workflow", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	stdout, stderr := runStop(getenv, "s1")
	if stdout != "" || !strings.Contains(stderr, "heartbeat not recorded") || !strings.Contains(stderr, "is locked by pid") || strings.Contains(stderr, "nothing to write") {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
}
