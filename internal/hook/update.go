package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/project"
)

// A marketplace update (Claude Code 2.1.330, `claude plugin update` or /plugin) installs the
// new version in a directory of its own (plugins/cache/<marketplace>/<plugin>/<version>),
// rewrites installed_plugins.json to name it, and marks the old directory with OrphanedMark,
// removing it 14 days later while no session uses it. A session running then keeps the old
// directory as CLAUDE_PLUGIN_ROOT, whose checksums never change, so the launcher's checks see
// nothing: its hooks and MCP server run the old version until Claude Code restarts. The hooks
// look for the mark (one stat) and, where installed_plugins.json names another version for
// this plugin, tell the user once per session to restart.

// OrphanedMark is the file Claude Code writes into a plugin version's directory once
// installed_plugins.json no longer names it.
const OrphanedMark = ".orphaned_at"

// updateNotice is the line telling the user that the plugin running at CLAUDE_PLUGIN_ROOT was
// replaced by another version, or "" when it was not (or it cannot be told).
func updateNotice(getenv func(string) string) string {
	root := getenv("CLAUDE_PLUGIN_ROOT")
	if root == "" {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(root, OrphanedMark)); err != nil {
		return ""
	}
	root = filepath.Clean(root)
	// <marketplace>/<plugin>/<version>: the id Claude Code records it under.
	id := filepath.Base(filepath.Dir(root)) + "@" + filepath.Base(filepath.Dir(filepath.Dir(root)))
	dir := project.PluginsDir(getenv, getenv("HOME"))
	if dir == "" {
		return ""
	}
	installed, best := "", 0
	for _, in := range project.InstalledPlugins(dir)[id] {
		if filepath.Clean(in.InstallPath) == root {
			return "" // still installed from here: the mark is stale
		}
		rank := 1 // user-wide
		if in.ProjectPath != "" {
			if filepath.Clean(in.ProjectPath) != filepath.Clean(getenv(project.EnvProjectDir)) {
				continue // installed for another project
			}
			rank = 2
		}
		if rank > best {
			installed, best = in.Version, rank
		}
	}
	running := project.LaunchVersion(root)
	if installed == "" || installed == running {
		return ""
	}
	return fmt.Sprintf("Cairn was updated to version %s; this session still runs %s: restart Claude Code to use it.", installed, running)
}

// withUpdateNotice adds updateNotice's line to a hook's answer out (a JSON object, or nil),
// once per session: where out's own systemMessage leaves no room for both, a later hook says it.
func withUpdateNotice(getenv func(string) string, out []byte) []byte {
	notice := updateNotice(getenv)
	if notice == "" {
		return out
	}
	msg := notice
	fields := map[string]json.RawMessage{}
	if len(out) > 0 && json.Unmarshal(out, &fields) != nil {
		return out
	}
	if old, ok := fields["systemMessage"]; ok {
		var s string
		if json.Unmarshal(old, &s) != nil || Units(msg)+1+Units(s) > MaxMessage {
			return out
		}
		msg += " " + s
	}
	if saidBefore(getenv, getenv("CLAUDE_CODE_SESSION_ID"), "update\x00"+getenv("CLAUDE_PLUGIN_ROOT")+"\x00"+notice) {
		return out
	}
	fields["systemMessage"] = bytes.TrimSpace(encode(OneLine(msg, MaxMessage)))
	return encode(fields)
}
