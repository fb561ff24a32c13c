//go:build unix

package hook_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hook"
)

// Unix only: the test signals its own process with kill(2).
func TestRunnerRunSignals(t *testing.T) {
	fallback := func(why string) []byte { return []byte("fallback: " + why) }
	// Claude Code interrupted or exiting mid-hook signals it: the hook died with 143 and no
	// stderr line. It stops as at the hard stop: one line, the fallback, and so exit 0.
	for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run("signal-"+s.String(), func(t *testing.T) {
			t.Cleanup(func() { signal.Reset(s) })
			var stderr bytes.Buffer
			r := &hook.Runner{Name: "cairn-event", Stderr: &stderr, Deadline: time.Minute}
			block := make(chan struct{})
			defer close(block)
			// Armed only after a while (a hook with nothing to do never pays for it).
			armed := make(chan struct{})
			hook.SetSignalsArmed(r, func() { close(armed) })
			got := r.Run(time.Now(), func(context.Context) []byte {
				<-armed
				syscall.Kill(os.Getpid(), s)
				<-block
				return []byte("late")
			}, fallback)
			name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP"}[s]
			if string(got) != "fallback: interrupted by "+name || stderr.String() != "cairn-event: interrupted by "+name+"; printing what it has and exiting\n" {
				t.Fatalf("Run = %q, stderr %q", got, stderr.String())
			}
		})
	}
}

// TestRunnerLetsGoOfSignals: Run caught SIGTERM, SIGINT and SIGHUP for good, so a caller that
// runs on after it (a test binary, Ctrl-C on it) had them dropped. Once Run returns, a signal
// does what it did before. A process of its own takes the signal.
func TestRunnerLetsGoOfSignals(t *testing.T) {
	const childEnv = "CAIRN_TEST_SIGNAL_AFTER_RUN"
	if os.Getenv(childEnv) != "" {
		r := &hook.Runner{Name: "cairn-event", Stderr: io.Discard, Deadline: time.Minute}
		armed := make(chan struct{})
		hook.SetSignalsArmed(r, func() { close(armed) })
		r.Run(time.Now(), func(context.Context) []byte { <-armed; return nil }, func(string) []byte { return nil })
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(2 * time.Second) // ended by the signal well before
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, _ := cmd.CombinedOutput()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("a SIGTERM after Run left the process to %s, want it ended by the signal\n%s", cmd.ProcessState, out)
	}
}
