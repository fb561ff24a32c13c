package plugintest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The hook binaries start before every session's first request and after every turn: they
// must stay small and quick to start, so they do not link the MCP stack (measured 7.6 MB with
// mcp-go, 3.3 MB without) nor any YAML library (adrg/frontmatter, BurntSushi/toml and the two
// yaml packages: ~0.13 ms of every start in package initialisation and size; a project that
// needs YAML is handed to the cairn binary, see internal/hook). The file watcher is not needed
// either; linking it is only logged.
func TestHookBinariesDoNotLinkMCPOrYAML(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list the hook binaries' dependencies")
	}
	forbidden := map[string]string{ // module -> who may link it
		"github.com/mark3labs/mcp-go": "./mcpserver",
		"github.com/adrg/frontmatter": "./cmd/cairn",
		"github.com/BurntSushi/toml":  "./cmd/cairn",
		"gopkg.in/yaml.v2":            "./cmd/cairn",
		"gopkg.in/yaml.v3":            "./cmd/cairn",
	}
	const unneeded = "github.com/fsnotify/fsnotify"
	links := func(deps []string, mod string) bool {
		return slices.ContainsFunc(deps, func(d string) bool { return d == mod || strings.HasPrefix(d, mod+"/") })
	}
	// The check has teeth: the binaries that need them do link them.
	for mod, user := range forbidden {
		if !links(listDeps(t, goBin, user), mod) {
			t.Fatalf("go list -deps %s does not list %s: the check below would prove nothing", user, mod)
		}
	}
	for _, pkg := range []string{"./hooks/sessionstart", "./hooks/stop"} {
		deps := listDeps(t, goBin, pkg)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %v: the check would prove nothing", pkg, deps)
		}
		for mod, user := range forbidden {
			if links(deps, mod) {
				t.Errorf("%s links %s; keep it out of the hooks (only %s needs it)", pkg, mod, user)
			}
		}
		if slices.Contains(deps, unneeded) {
			t.Logf("%s links %s, which a hook never uses", pkg, unneeded)
		}
	}
}

func listDeps(t *testing.T, goBin, pkg string) []string {
	t.Helper()
	cmd := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, msg)
	}
	return strings.Fields(string(out))
}
