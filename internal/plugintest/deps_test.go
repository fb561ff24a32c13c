package plugintest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The hook binaries start before every session's first request and after every turn: they
// must stay small and quick to start, so they do not link the MCP stack (measured 7.6 MB with
// mcp-go, 3.3 MB without). The file watcher is not needed either; linking it is only logged.
func TestHookBinariesDoNotLinkMCP(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list the hook binaries' dependencies")
	}
	const forbidden = "github.com/mark3labs/mcp-go"
	const unneeded = "github.com/fsnotify/fsnotify"
	// The check has teeth: the MCP server's own list does hold mcp-go.
	if deps := listDeps(t, goBin, "./mcpserver"); !slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, forbidden+"/") }) {
		t.Fatalf("go list -deps ./mcpserver does not list %s: the check below would prove nothing", forbidden)
	}
	for _, pkg := range []string{"./hooks/sessionstart", "./hooks/stop"} {
		deps := listDeps(t, goBin, pkg)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %v: the check would prove nothing", pkg, deps)
		}
		for _, d := range deps {
			switch {
			case d == forbidden || strings.HasPrefix(d, forbidden+"/"):
				t.Errorf("%s links %s; keep it out of the hooks (only mcpserver needs it)", pkg, d)
			case d == unneeded:
				t.Logf("%s links %s, which a hook never uses", pkg, d)
			}
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
