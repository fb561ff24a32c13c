package plugintest

import (
	"os/exec"
	"slices"
	"testing"
)

// The hooks never touch the network (issue 17): they report the remote mirror from the state
// directory. None of them may link a package that starts git or opens a connection.
func TestHooksDoNotLinkGitOrNetwork(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list the binaries' dependencies")
	}
	forbidden := []string{"os/exec", "net", "net/http", "github.com/cairn-dev/cairn/internal/remote/gitremote",
		"github.com/cairn-dev/cairn/internal/remote/remotesync"}
	// The check has teeth: the CLI, which syncs, links them.
	cli := listDeps(t, goBin, "./cmd/cairn")
	for _, f := range []string{"os/exec", "github.com/cairn-dev/cairn/internal/remote/gitremote"} {
		if !slices.Contains(cli, f) {
			t.Fatalf("go list -deps ./cmd/cairn does not list %s: the check below would prove nothing", f)
		}
	}
	for _, pkg := range []string{"./hooks/sessionstart", "./hooks/stop", "./hooks/event"} {
		deps := listDeps(t, goBin, pkg)
		if !slices.Contains(deps, "github.com/cairn-dev/cairn/internal/remote/mirror") && pkg == "./hooks/sessionstart" {
			t.Errorf("%s does not link the mirror's state: its report cannot say how sharing stands", pkg)
		}
		for _, f := range forbidden {
			if slices.Contains(deps, f) {
				t.Errorf("%s links %s: a hook must not start git or open a connection", pkg, f)
			}
		}
	}
}
