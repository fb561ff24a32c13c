package mcptools

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/cairn-dev/cairn"
)

// Main runs cairn-mcp: MCP over stdin and stdout until stdin ends or SIGINT or SIGTERM
// arrives, then a clean shutdown (running calls finish, the engine is closed) and exit 0.
// Claude Code sends SIGINT and then SIGTERM 100 ms later without closing stdin; both only
// start the same shutdown. stdout carries protocol only; diagnostics go to stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	logger := log.New(stderr, "cairn-mcp: ", 0)
	if len(args) > 0 {
		switch args[0] {
		case "-version", "--version":
			fmt.Fprintln(stderr, "cairn-mcp", cairn.Describe())
			return 0
		default:
			fmt.Fprintf(stderr, "cairn-mcp takes no arguments (got %q): Claude Code starts it and speaks MCP on stdin and stdout\n", args[0])
			return 2
		}
	}
	// A client that goes away must not kill us halfway through a write: a write to a closed
	// pipe fails with EPIPE instead, and the server shuts down in order.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	srv := New(Options{Open: OpenEngine, Getenv: getenv, Version: cairn.SemVer(), Log: logger})
	err := srv.ServeStdio(ctx, stdin, stdout)
	closeCtx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	if cerr := srv.Close(closeCtx); cerr != nil {
		logger.Printf("closing: %v", cerr)
	}
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	return 0
}
