// Command cairn-mcp is Cairn's MCP server: the agent's workflow tools over stdio. Claude Code
// starts it from the plugin's .mcp.json; all of its behaviour lives in internal/mcptools.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/internal/mcptools"
)

func main() {
	proto := os.Stdout
	os.Stdout = os.Stderr // only protocol may reach the real stdout, whatever else prints
	os.Exit(mcptools.Main(os.Args[1:], os.Stdin, proto, os.Stderr, os.Getenv))
}
