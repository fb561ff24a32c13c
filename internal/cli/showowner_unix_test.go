//go:build unix

package cli_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestShowSaysTheOwnersClientExited: cairn show names the Claude Code client that last
// changed the workflow by its pid; once that client has exited, the line says so, as
// cairn status then names no live owner. A client still running is named as before, and so
// is a pid no session of this machine had (another machine's, in a shared workflow).
func TestShowSaysTheOwnersClientExited(t *testing.T) {
	t.Parallel()
	ended := storetest.ExitedPID(t)
	for _, tc := range []struct {
		name string
		pid  int
		here bool // a session of this machine had the pid
		want string
	}{
		{"exited", ended, true, `(?m)^Owner: +session s1, pid \d+ \(exited\), heartbeat `},
		{"running", os.Getpid(), true, `(?m)^Owner: +session s1, pid \d+, heartbeat `},
		{"another machine's", ended, false, `(?m)^Owner: +session s1, pid \d+, heartbeat `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, env := project(t)
			getenv := getenvOf(env)
			e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "mcp", SessionID: "s1", PID: tc.pid, YAML: yamldoc.Codec{}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.here { // the client's SessionStart hook recorded it on this machine
				if err := e.RecordSession(engine.Session{SessionID: "s1", PID: tc.pid}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "owned"}); err != nil {
				t.Fatal(err)
			}
			out, err := cairnCmd(t, dir, env, "show").CombinedOutput()
			if err != nil || !regexp.MustCompile(tc.want).Match(out) {
				t.Fatalf("cairn show: %v, want %s\n%s", err, tc.want, out)
			}
		})
	}
}
