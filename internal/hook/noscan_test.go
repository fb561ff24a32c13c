package hook_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestHooksRunNoScan: SessionStart and Stop, as Claude Code runs them (a UUID session id, a
// source of its own) in a project without a workflow, run no secret scan, whose first use
// costs each process most of a millisecond: they write only Cairn's own records (the session
// record) and read only documents Cairn names. A fresh process runs them, since any earlier
// test may have scanned. A session id from outside that is not a UUID is still scanned, and
// one of a secret's shape is not recorded.
func TestHooksRunNoScan(t *testing.T) {
	const childEnv = "CAIRN_TEST_NO_SCAN_DIR"
	if dir := os.Getenv(childEnv); dir != "" {
		env := scanEnv(dir)
		env["CLAUDE_PID"] = "4242"
		getenv := func(k string) string { return env[k] }
		const id = `"session_id":"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93"`
		for _, source := range []string{"startup", "clear", "resume"} {
			hook.SessionStart(strings.NewReader(`{`+id+`,"hook_event_name":"SessionStart","source":"`+source+`"}`), io.Discard, io.Discard, getenv, nil)
			hook.Stop(strings.NewReader(`{`+id+`,"hook_event_name":"Stop","stop_hook_active":false}`), io.Discard, io.Discard, getenv, nil)
		}
		if _, err := os.Stat(filepath.Join(dir, "project", ".claude", "cairn", "sessions", "4242.json")); err != nil {
			t.Fatalf("the session was not recorded: %v", err)
		}
		if secrets.Scanned() {
			t.Fatal("a hook's common path ran a secret scan")
		}
		return
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "project", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	runAgainAlone(t, childEnv, dir)

	// Text from outside is still checked: a secret as the session id is not recorded.
	getenv, state := startedProject(t, "")
	secret := secrettest.Shapes()[0].Text
	var out bytes.Buffer
	hook.SessionStart(strings.NewReader(`{"session_id":"`+secret+`","hook_event_name":"SessionStart","source":"startup"}`), &out, io.Discard, withEnv(getenv, "CLAUDE_PID", "4242"), nil)
	stdout := out.String()
	if data, err := os.ReadFile(filepath.Join(state, "sessions", "4242.json")); err == nil && strings.Contains(string(data), secret) {
		t.Errorf("the session record holds the secret session id: %s", data)
	}
	if strings.Contains(stdout, secret) {
		t.Errorf("the hook repeated the secret: %s", stdout)
	}
}

// scanEnv is the hooks' environment in dir (a temporary directory holding project/), for a
// test of whether they scan; CLAUDE_PID is the test's to set.
func scanEnv(dir string) map[string]string {
	return map[string]string{
		"HOME":               filepath.Join(dir, "home"),
		"CLAUDE_PROJECT_DIR": filepath.Join(dir, "project"),
		"CAIRN_MEMORY_DIR":   filepath.Join(dir, "memory"),
	}
}

// runAgainAlone runs t's test again in a process of its own with childEnv set to dir, where
// the test sees dir and runs its hooks: no earlier test has scanned in that process.
func runAgainAlone(t *testing.T, childEnv, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
