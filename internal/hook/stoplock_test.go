package hook_test

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/hook"
)

// TestStopLogsAHeartbeatNotRecorded: a turn's end whose owner heartbeat is due but cannot be
// recorded (another process holds the workflow's lock) says so in its log, as it says the L2
// lines it still owes. Before, the heartbeat was dropped without a word, and the log said
// "nothing to write".
func TestStopLogsAHeartbeatNotRecorded(t *testing.T) {
	started, state := startedProjectAt(t, "apex-hb", anHourAgo)
	getenv := withEnv(started, "CLAUDE_PID", "42", "CAIRN_HOOK_DEADLINE", "200ms")
	holdLocks(t, state, ".lock-workflow")
	stdout, stderr := runStopToItsAnswer(getenv, "s1")
	if stdout != "" || !strings.Contains(stderr, "heartbeat not recorded") || !strings.Contains(stderr, "is locked by pid") || strings.Contains(stderr, "nothing to write") {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
}

// TestStopLockWaitsShareItsDeadline: a turn's end that meets two locks held (the workflow's,
// for the heartbeat, and stop-state's, for the ask) waits for both within the one lock wait
// its deadline leaves, and answers with its own line naming the holder. Before, each lock
// had the whole wait: two held locks took twice that, past the hard stop, whose answer
// ("stopped early") names no holder.
func TestStopLockWaitsShareItsDeadline(t *testing.T) {
	started, state := startedBlockingAt(t, "apex-locks", anHourAgo)
	getenv := withEnv(started, "CLAUDE_PID", "42", "CAIRN_HOOK_DEADLINE", "400ms")
	holdLocks(t, state, ".lock-workflow", ".lock-stop-state")
	stdout, stderr := runStopToItsAnswer(getenv, "s1")
	m := regexp.MustCompile(`\.lock-stop-state is locked by pid \d+ \([^)]*\) since \S+ gave up after (\S+) `).FindStringSubmatch(strings.ReplaceAll(stdout, ";", ""))
	if m == nil {
		t.Fatalf("the answer does not name the stop-state lock's holder: %s\n%s", stdout, stderr)
	}
	// The lock wait is 3/4 of the deadline (300ms), and the workflow's lock took all of it.
	if waited, err := time.ParseDuration(m[1]); err != nil || waited >= 100*time.Millisecond {
		t.Errorf("the stop-state lock was waited for %s after the workflow's took the whole lock wait: %s", m[1], stdout)
	}
}

// TestStopLockedSaysWhenItIsRetried: a turn's end that gives up on a lock (stop-state's,
// held by another process) names the holder and says that it is retried after the next turn,
// which it is, without the lock error's "try again": no one can run the end of a turn again.
// The same holder is said once per session.
func TestStopLockedSaysWhenItIsRetried(t *testing.T) {
	started, state := startedBlocking(t, "apex-retry")
	getenv := withEnv(started, "CAIRN_HOOK_DEADLINE", "200ms")
	release := holdLocks(t, state, ".lock-stop-state")
	stdout, stderr := runStopToItsAnswer(getenv, "s1")
	if !strings.Contains(stdout, "is locked by pid") || !strings.Contains(stdout, "retried after the next turn") || strings.Contains(stdout, "try again") {
		t.Errorf("stdout %s\nstderr %s", stdout, stderr)
	}
	// The same holder at the next turn's end: said once per session, however long each
	// wait was.
	if stdout, _ := runStopToItsAnswer(getenv, "s1"); stdout != "" {
		t.Errorf("the next turn, the same holder, says it again: %s", stdout)
	}
	release()
	// The lock free, a long deadline: the short one only shortens the waits above, and a turn's
	// end past it (200 ms, on a loaded machine) rightly asks nothing, failing this check.
	if got, _ := runStopToItsAnswer(withEnv(started, hook.EnvDeadline, "9s"), "s1"); !strings.Contains(got, `"decision":"block"`) {
		t.Errorf("the next turn, the lock free, does not ask: %s", got)
	}
}

// runStopToItsAnswer is runStop with the hard stop off: the turn's end gives its own answer
// however late a loaded machine makes it. For tests whose short CAIRN_HOOK_DEADLINE is there
// to shorten a lock wait: the hard stop, a tenth of the deadline after it, came first under
// load and answered "stopped early" in place of the line on the lock.
func runStopToItsAnswer(getenv func(string) string, session string) (stdout, stderr string) {
	var out, errb bytes.Buffer
	r := &hook.Runner{Name: hook.StopName, Stderr: &errb}
	hook.SetHardStop(r, func(time.Time) <-chan time.Time { return nil })
	<-hook.StopAs(r, strings.NewReader(`{"session_id":"`+session+`","hook_event_name":"Stop"}`), &out, getenv)
	return out.String(), errb.String()
}

// anHourAgo is a clock an hour behind: a workflow started by it has its owner heartbeat due.
func anHourAgo() time.Time { return time.Now().Add(-time.Hour) }

// withEnv is getenv with the variables kv (name, value, ...) set: CLAUDE_PID 42 is the client
// that started the workflow, a short CAIRN_HOOK_DEADLINE a short lock wait.
func withEnv(getenv func(string) string, kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return getenv(k)
	}
}

// holdLocks takes the lock files names in dir, as another process would hold them, until
// the returned func (or the test's end) releases them.
func holdLocks(t *testing.T, dir string, names ...string) (release func()) {
	t.Helper()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	var releases []func() error
	for _, name := range names {
		r, err := d.Lock(name, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, r := range releases {
				r()
			}
		})
	}
	t.Cleanup(release)
	return release
}
