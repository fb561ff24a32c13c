package mcptools

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// MCP returns the protocol server, for in-process clients.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Session reports the Claude Code session the server currently acts for.
func (s *Server) Session() string {
	if s.acquire(context.Background()) != nil {
		return ""
	}
	defer s.release()
	return s.session
}

// SetApprovalWait shortens how long a transition waits for the person, and returns the undo.
func SetApprovalWait(d time.Duration) (restore func()) {
	old := approvalWait
	approvalWait = d
	return func() { approvalWait = old }
}

// SetFirstSyncWait changes how long start_workflow and resume_check wait for the first sync,
// and returns the undo.
func SetFirstSyncWait(d time.Duration) (restore func()) {
	old := firstSyncWait
	firstSyncWait = d
	return func() { firstSyncWait = old }
}

// CountSyncRuns makes a server with o count its background sync runs in runs, each counted
// once it has ended.
func CountSyncRuns(o Options, runs *atomic.Int64) Options {
	o.syncRan = func() { runs.Add(1) }
	return o
}

// DuringSyncBackoff makes a server with o call f each time its background sync waits between
// rounds, once it has let go of the server's turn.
func DuringSyncBackoff(o Options, f func()) Options {
	o.syncBackoff = f
	return o
}

// MaxLoadBytes is the most of a checkpoint load_checkpoint returns at once.
const MaxLoadBytes = maxLoadBytes

// LeftOutNotice is leftOutNotice, for its tests.
var LeftOutNotice = leftOutNotice

// SetDrainTimeout changes how long shutdown waits for the calls running, and returns the undo.
func SetDrainTimeout(d time.Duration) (restore func()) {
	old := DrainTimeout
	DrainTimeout = d
	return func() { DrainTimeout = old }
}

// RestartAsNew is what the background sync does when it finds the plugin updated.
func (s *Server) RestartAsNew() { s.restartAsNew() }

// BeforeAnswer makes a server with o call f each time a request has run, before its answer is
// sent or dropped.
func BeforeAnswer(o Options, f func()) Options {
	o.answering = f
	return o
}
