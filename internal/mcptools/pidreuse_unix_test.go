//go:build linux || darwin

package mcptools_test

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestExitedClientsRecordIsNotFollowed: sessions/<ppid>.json left by a Claude Code client that
// exited, whose pid the server's client took since, names a session that client ran. When this
// client's SessionStart hook had not recorded its own (it failed, or is still running), the
// server took the exited client's session for its own: its writes were made for that session,
// its workflow taken over from this one. The record's client_start tells the two clients apart.
func TestExitedClientsRecordIsNotFollowed(t *testing.T) {
	start, ok := store.ProcessStart(os.Getpid())
	if !ok {
		t.Skip("the platform does not tell a process's start")
	}
	for _, tc := range []struct {
		name        string
		clientStart uint64
		want        string
	}{
		{"left by an exited client with this pid", 1, "sess-1"},
		{"control: recorded by this client after /clear", start, "sess-old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			pid := os.Getpid() // the server's parent, as Claude Code is
			if err := p.other(t, "sess-old").RecordSession(engine.Session{SessionID: "sess-old", PID: pid, ClientStart: tc.clientStart}); err != nil {
				t.Fatal(err)
			}
			_, c := startServer(t, mcptools.Options{Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
				PPID: pid, Log: quietLog(), NoWatch: true})
			mustOK(t, c, "start_workflow", `{"type":"debug","context":"mine"}`)
			if got := snapshot(t, p.other(t, "observer")).SessionID; got != tc.want {
				t.Errorf("the workflow was started for session %q, want %q", got, tc.want)
			}
		})
	}
}
