package hook_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/secrets"
)

// TestStopBesideLiveOwnerRunsNoScan: a second terminal's turn ends beside the live owner of a
// workflow with blocking violations. Its Stop writes nothing (the owner's Stop asks), and
// runs no secret scan: the liveness check needs only the session and the pid, not this
// machine's name, whose scan costs a fresh process most of a millisecond.
func TestStopBesideLiveOwnerRunsNoScan(t *testing.T) {
	const childEnv = "CAIRN_TEST_BESIDE_SCAN_DIR"
	if dir := os.Getenv(childEnv); dir != "" {
		env := scanEnv(dir)
		env["CLAUDE_PID"] = "4242"
		if out := besideStop(env); strings.Contains(out, "block") {
			t.Fatalf("the session beside the live owner was asked: %s", out)
		}
		if secrets.Scanned() {
			t.Fatal("a Stop beside the live owner ran a secret scan")
		}
		return
	}
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := scanEnv(dir)
	// The owner: a running client (this test's process) in its own session.
	en, err := engine.Open(engine.Config{Getenv: func(k string) string { return env[k] }, SessionID: "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93", PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := en.Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := en.SetEnforcement([]engine.Violation{{Code: "V-SEC-01", Severity: "CRITICAL", Details: "token in a log"}}); err != nil {
		t.Fatal(err)
	}
	en.Close()
	// The turn before: it wrote the memory lines owed, so the child's Stop has nothing to write.
	env["CLAUDE_PID"] = "4242"
	if out := besideStop(env); strings.Contains(out, "block") {
		t.Fatalf("the session beside the live owner was asked: %s", out)
	}
	runAgainAlone(t, childEnv, dir)
}

// besideStop runs the Stop hook of the second terminal's session in env, and returns its stdout.
func besideStop(env map[string]string) string {
	var out strings.Builder
	hook.Stop(strings.NewReader(`{"session_id":"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","hook_event_name":"Stop","stop_hook_active":false}`),
		&out, io.Discard, func(k string) string { return env[k] }, nil)
	return out.String()
}
