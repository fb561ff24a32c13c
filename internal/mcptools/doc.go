// Package mcptools is Cairn's MCP server: it serves the workflow engine's operations to the
// agent as tools over stdio (the cairn-mcp binary is ten lines around Main). It is the only
// package that imports mcp-go.
//
// What it adds to the engine is the edge: tool schemas and annotations, strict argument
// decoding (wrong types, missing, unknown or oversized arguments, path tricks and secrets are
// refused as isError results before the engine is called), results as text plus structured
// content, a one-line notice when another process changed the workflow since this server's
// previous call, an fsnotify watcher that follows the Claude Code session after /clear and the
// user's workflow definitions, and a stdio transport that refuses server/discover at once and
// shuts down cleanly on SIGINT, SIGTERM or stdin EOF.
//
// It is not the domain: it validates no transitions, writes no files and decides nothing about
// workflows; internal/engine does all of that, and every state change goes through it.
package mcptools
