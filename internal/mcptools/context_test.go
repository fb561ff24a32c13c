package mcptools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/mcp"
)

// toolPrefix is how Claude Code names the plugin's MCP tools.
const toolPrefix = "mcp__plugin_cairn_cairn__"

// frontMatterDescription returns the description line of a Markdown file's front matter.
func frontMatterDescription(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n")[1:] {
		if l == "---" {
			break
		}
		if d, ok := strings.CutPrefix(l, "description: "); ok {
			return d
		}
	}
	t.Fatalf("%s has no description", path)
	return ""
}

// TestContextCost measures what Cairn costs every request, before any tool is called (issue
// 14): with tool search on, the deferred tool names, the MCP instructions and the skill and
// command entries, at most 1,600 characters; with it off, the full tool definitions (name,
// description and input schema, as Claude Code sends them in tools[]), at most 6,000.
func TestContextCost(t *testing.T) {
	_, c := realServer(t)
	tools, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names, defs := 0, 0
	for _, tool := range tools.Tools {
		names += len(toolPrefix+tool.Name) + 1
		schema, _ := json.Marshal(tool.InputSchema)
		defs += len(toolPrefix+tool.Name) + len(tool.Description) + len(schema)
	}
	entries := len("- cairn: " + frontMatterDescription(t, "../../skills/cairn/SKILL.md"))
	cmds, _ := filepath.Glob("../../commands/*.md")
	for _, f := range cmds {
		entries += len("- /cairn:"+strings.TrimSuffix(filepath.Base(f), ".md")+": ") + len(frontMatterDescription(t, f))
	}
	always := names + len(mcptools.Instructions) + entries
	t.Logf("always-on: %d (names %d, instructions %d, skill and commands %d); full tool definitions %d",
		always, names, len(mcptools.Instructions), entries, defs)
	if always > 1600 {
		t.Errorf("always-on context is %d characters, want at most 1,600", always)
	}
	if defs > 6000 {
		t.Errorf("full tool definitions are %d characters, want at most 6,000", defs)
	}
}
