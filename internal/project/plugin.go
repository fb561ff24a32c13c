package project

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
)

// ConfigDir is Claude Code's configuration directory: $CLAUDE_CONFIG_DIR, else ~/.claude (as
// the 2.1.330 CLI has it); "" when that is no absolute path, as a relative one names a
// directory under wherever this process runs, not the user's.
func ConfigDir(getenv func(string) string, home string) string {
	d := getenv("CLAUDE_CONFIG_DIR")
	if d == "" && home != "" {
		d = filepath.Join(home, ".claude")
	}
	return AbsDir(d)
}

// AbsDir is d when it is an absolute path, else "": nothing is read from a relative directory,
// which names one under wherever this process runs.
func AbsDir(d string) string {
	if !filepath.IsAbs(d) {
		return ""
	}
	return d
}

// PluginsDir is Claude Code's plugin directory: $CLAUDE_CODE_PLUGIN_CACHE_DIR, else
// <config>/plugins (ConfigDir); "" when that is no absolute path.
func PluginsDir(getenv func(string) string, home string) string {
	d := getenv("CLAUDE_CODE_PLUGIN_CACHE_DIR")
	if d == "" {
		if d = ConfigDir(getenv, home); d != "" {
			d = filepath.Join(d, "plugins")
		}
	}
	return AbsDir(d)
}

// Installation is one installation of a plugin in Claude Code's plugins/installed_plugins.json
// (version 2): where it is, at what scope, of what version, for which project (local and
// project scopes).
type Installation struct {
	Scope       string `json:"scope"`
	InstallPath string `json:"installPath"`
	Version     string `json:"version"`
	ProjectPath string `json:"projectPath"`
}

// Rank is how well the installation fits the project at projectDir, as Claude Code picks one:
// 2 installed for that project, 1 user-wide, 0 installed for another project (not its).
func (in Installation) Rank(projectDir string) int {
	switch {
	case in.ProjectPath == "":
		return 1
	case filepath.Clean(in.ProjectPath) == filepath.Clean(projectDir):
		return 2
	}
	return 0
}

// InstalledPlugins reads installed_plugins.json in the plugin directory dir: plugin id
// ("cairn@<marketplace>") to its installations; nil when it cannot be read.
func InstalledPlugins(dir string) map[string][]Installation {
	data, err := durable.ReadPath(filepath.Join(dir, "installed_plugins.json"), 4<<20, true)
	var recs struct {
		Plugins map[string][]Installation `json:"plugins"`
	}
	if err != nil || json.Unmarshal(data, &recs) != nil {
		return nil
	}
	return recs.Plugins
}

// LaunchVersion is the version hooks/launch names the plugin's set in its data directory
// after (bin-VERSION): the one in the plugin's own plugin.json, "dev" when it gives none. Not
// the one Claude Code records for the installation, which may differ (a record not rewritten
// yet, a marketplace entry's own version). Read as the launcher reads it, by its shell
// patterns, not as JSON, which would name another set for a version holding an escape the
// launcher does not decode: the first line holding "version", from the first quote after the
// colon that follows to the next quote (the line up to its first quote where none follow).
func LaunchVersion(root string) string {
	data, err := durable.ReadPath(filepath.Join(root, ".claude-plugin", "plugin.json"), 1<<20, true)
	if err != nil {
		return "dev"
	}
	for line := range strings.Lines(string(data)) {
		_, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), `"version"`)
		if !ok {
			continue
		}
		if _, r, ok := strings.Cut(rest, ":"); ok {
			if _, r, ok := strings.Cut(r, `"`); ok {
				line = r
			}
		}
		if v, _, _ := strings.Cut(line, `"`); v != "" {
			return v
		}
		break
	}
	return "dev"
}

// A marketplace update (Claude Code 2.1.330, `claude plugin update` or /plugin) installs the
// new version in a directory of its own (plugins/cache/<marketplace>/<plugin>/<version>),
// rewrites installed_plugins.json to name it, and marks the old directory with OrphanedMark,
// removing it 14 days after while no session uses it. A session running then keeps the old
// directory as CLAUDE_PLUGIN_ROOT, whose checksums never change, so the launcher's checks see
// nothing: its hooks and MCP server run the old version until Claude Code restarts.

// OrphanedMark is the file Claude Code writes into a plugin version's directory once
// installed_plugins.json no longer names it.
const OrphanedMark = ".orphaned_at"

// Superseded reports the version Claude Code has installed in place of the plugin at root,
// and root's own version (LaunchVersion), when root is a marketplace install that an update
// replaced by another version: marked (OrphanedMark), and installed_plugins.json naming
// another directory of another version for its id, the installation for the project
// (CLAUDE_PROJECT_DIR) first. "" when not, or when it cannot be told; one stat when root
// bears no mark, none when root is relative (AbsDir).
func Superseded(getenv func(string) string, root string) (installed, running string) {
	if AbsDir(root) == "" {
		return "", ""
	}
	if _, err := os.Lstat(filepath.Join(root, OrphanedMark)); err != nil {
		return "", ""
	}
	root = filepath.Clean(root)
	dir := PluginsDir(getenv, getenv("HOME"))
	if dir == "" {
		return "", ""
	}
	// <marketplace>/<plugin>/<version>: the id Claude Code records it under.
	id := filepath.Base(filepath.Dir(root)) + "@" + filepath.Base(filepath.Dir(filepath.Dir(root)))
	best := 0
	for _, in := range InstalledPlugins(dir)[id] {
		if filepath.Clean(in.InstallPath) == root {
			return "", "" // still installed from here: the mark is stale
		}
		if rank := in.Rank(getenv(EnvProjectDir)); rank > best {
			installed, best = in.Version, rank
		}
	}
	running = LaunchVersion(root)
	if installed == "" || installed == running {
		return "", ""
	}
	return installed, running
}
