package mcptools

import (
	"context"
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
