package plugintest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The hook binaries start before every session's first request and after every turn: they
// must stay small and quick to start, so only cairn-mcp links the MCP stack (mcp-go's package
// initialisation alone costs 3-5 ms of a start). The hooks read a project's own workflow
// definitions themselves, in process and under their deadline, so they do link the front
// matter reader. The file watcher is not needed in a hook; linking it is only logged.
func TestOnlyTheMCPServerLinksMCP(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list the binaries' dependencies")
	}
	const mcp, frontmatter = "github.com/mark3labs/mcp-go", "github.com/adrg/frontmatter"
	const unneeded = "github.com/fsnotify/fsnotify"
	links := func(deps []string, mod string) bool {
		return slices.ContainsFunc(deps, func(d string) bool { return d == mod || strings.HasPrefix(d, mod+"/") })
	}
	// The check has teeth: the binary that needs it does link it.
	if !links(listDeps(t, goBin, "./mcpserver"), mcp) {
		t.Fatalf("go list -deps ./mcpserver does not list %s: the check below would prove nothing", mcp)
	}
	for _, pkg := range []string{"./hooks/sessionstart", "./hooks/stop", "./hooks/event", "./cmd/cairn"} {
		deps := listDeps(t, goBin, pkg)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %v: the check would prove nothing", pkg, deps)
		}
		if links(deps, mcp) {
			t.Errorf("%s links %s; keep it in cairn-mcp alone", pkg, mcp)
		}
		if !links(deps, frontmatter) {
			t.Errorf("%s does not link %s: a project's own workflow definitions would go unread", pkg, frontmatter)
		}
		if strings.HasPrefix(pkg, "./hooks/") && slices.Contains(deps, unneeded) {
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
