package mcptools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A plugin update (a marketplace update in place, git pull in a checkout, with or without make
// build) changes the plugin's release/checksums.txt. The hooks and the CLI then stop running
// the old binaries (hooks/launch, internal/hook's launch.go); the MCP server lives for the
// whole session, and an old one would go on writing state that the new hooks and CLI read.
// So at each call it looks (one stat) whether the plugin's checksums changed since it
// compared them, and when they no longer equal its own set's stamp (read at start: what this
// process is, whatever replaced the set's files since), it runs no tool and no background sync,
// answers the call that found it and exits: Claude Code then starts the server again through
// the launcher at the next call (seen with 2.1.330, -p as well), which runs the new binaries.
// The background sync looks too, every few seconds, so that an idle server exits before the
// next call rather than at it. The calls of a turn come a few milliseconds apart: the server
// reads on until stdin has been quiet a moment (ServeStdio), and only then answers them all and
// exits, so that none is lost and no retry reaches the old server. A call that arrives later
// still, as it exits, is not answered: Claude Code says the connection closed before it was.

// serverName is how Claude Code names this server in /mcp: plugin:<plugin>:<server>.
const serverName = "plugin:cairn:cairn"

// updateCheck compares the plugin's checksums with the stamp this server was started with.
// Nil (no check) when this binary is not in a stamped set (go build, go run, a test) or the
// plugin is not known.
type updateCheck struct {
	root, sums string
	own        []byte // the set's .checksums as this process started

	mu sync.Mutex  // calls and the background sync ask
	fi fs.FileInfo // sums when last found equal to own
}

func newUpdateCheck(root, bin string) *updateCheck {
	if root == "" || bin == "" {
		return nil
	}
	own, err := durable.ReadPath(filepath.Join(bin, ".checksums"), 1<<20, true)
	if err != nil {
		return nil
	}
	u := &updateCheck{root: root, sums: filepath.Join(root, "release", "checksums.txt"), own: own}
	if fi, err := os.Stat(u.sums); err == nil && engine.SameStamp(u.read(), own) {
		u.fi = fi
	}
	return u
}

func (u *updateCheck) read() []byte {
	// Unreadable or missing reads as empty, as the launcher reads it: not this set's.
	b, _ := durable.ReadPath(u.sums, 1<<20, true)
	return b
}

// updated reports whether the plugin now has other checksums than this server's binaries.
// One stat while the file is as last compared; it is read again only when it changed (and
// on each call while it differs, so a pull undone is noticed too).
func (u *updateCheck) updated() bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	fi, err := os.Stat(u.sums)
	if err == nil && u.fi != nil && os.SameFile(fi, u.fi) && fi.Size() == u.fi.Size() && fi.ModTime().Equal(u.fi.ModTime()) {
		return false
	}
	if err == nil && engine.SameStamp(u.read(), u.own) {
		u.fi = fi
		return false
	}
	return true
}

// refusal is a call's error once the plugin was updated under this server, which then exits:
// Claude Code starts it again, with the plugin's new binaries, at the next call. It notices the
// exit tens of milliseconds late, and more under load: a call made again at once may still be
// sent to this server, gone, and fail with "Connection closed"; the call after that finds the
// new one.
func (u *updateCheck) refusal(tool string) error {
	return fmt.Errorf("%s was not run, nothing was changed: Cairn was updated under this session, and this server, still the old version, is restarting as the new one: call %s again, and once more if that call says the connection closed. If cairn's tools are then unavailable, tell the user to run /mcp and reconnect %s, or restart Claude Code", tool, tool, serverName)
}

// updateRefusal is a call's (tool) error once the plugin was updated under this server, nil
// before: the server then answers what it read and exits (restartAsNew).
func (s *Server) updateRefusal(tool string) error {
	if !s.update.updated() {
		return nil
	}
	s.restartAsNew()
	return s.update.refusal(tool)
}

// restartAsNew has ServeStdio read until the client is quiet, answer what it read and return:
// Claude Code starts the server again through the launcher at the next call.
func (s *Server) restartAsNew() {
	s.restartOnce.Do(func() {
		s.opt.Log.Printf("the plugin at %s was updated: exiting, for Claude Code to start its new binaries at the next call", s.update.root)
		close(s.restart)
	})
}

// ownBinDir is the directory of this process's executable, through symbolic links; "" when
// it cannot be told.
func ownBinDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}
