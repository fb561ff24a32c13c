//go:build unix

package mcptools_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// TestStdioPrunesExitedSessions: the real cairn-mcp, once started, removes the record of a
// client that exited over an hour ago, and keeps its own client's, a running client's, one
// written within the hour and names that are not a pid's.
func TestStdioPrunesExitedSessions(t *testing.T) {
	p := newProject(t)
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

	const old, fresh = 2 * time.Hour, 10 * time.Minute
	deadOld, deadFresh, deadForeign := storetest.ExitedPID(t), storetest.ExitedPID(t), storetest.ExitedPID(t)
	recorder := p.other(t, "sess-recorder")
	sessions := filepath.Join(p.state, "sessions")
	type rec struct {
		name string
		age  time.Duration
		gone bool
		why  string
	}
	var recs []rec
	for _, r := range []struct {
		pid  int
		age  time.Duration
		gone bool
		why  string
	}{
		{deadOld, old, true, "its client exited over an hour ago"},
		{deadFresh, fresh, false, "it was written within the hour"},
		{sleeper.Process.Pid, old, false, "its client (sleep) runs"},
		{os.Getpid(), old, false, "it is the server's own client's (this test is its parent)"},
	} {
		if err := recorder.RecordSession(engine.Session{PID: r.pid, SessionID: "sess-" + strconv.Itoa(r.pid)}); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec{strconv.Itoa(r.pid) + ".json", r.age, r.gone, r.why})
	}
	for _, n := range []string{"0" + strconv.Itoa(deadForeign) + ".json", strconv.Itoa(deadForeign) + ".json.bak", "notes.json"} {
		if err := os.WriteFile(filepath.Join(sessions, n), []byte(`{}`), 0o600); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec{n, old, false, "its name is not <pid>.json"})
	}
	for _, r := range recs {
		at := time.Now().Add(-r.age)
		if err := os.Chtimes(filepath.Join(sessions, r.name), at, at); err != nil {
			t.Fatal(err)
		}
	}

	srv := startRaw(t, p)
	srv.initialize()
	srv.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if resp := srv.next(hangGuard); resp.Error != nil {
		t.Fatalf("ping: %+v", resp.Error)
	}
	// A clean exit waits for the pruning, so what is on disk now is what it left.
	srv.stdin.Close()
	if code := srv.wait(hangGuard); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, srv.stderr)
	}
	for _, r := range recs {
		_, err := os.Lstat(filepath.Join(sessions, r.name))
		switch {
		case r.gone && err == nil:
			t.Errorf("%s was kept, but %s", r.name, r.why)
		case !r.gone && err != nil:
			t.Errorf("%s was removed (%v), but %s", r.name, err, r.why)
		}
	}
	if strings.Contains(srv.stderr.String(), "prun") {
		t.Errorf("stderr: %s", srv.stderr)
	}
}
