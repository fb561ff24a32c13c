package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestMain makes this test binary cairn itself (and the hooks' fixture commands), so scripts
// and the watch test run the real command line as separate processes with no build step.
func TestMain(m *testing.M) {
	// cairn comes with hooktest.Main; the hooks are for scripts that check the CLI and the
	// hooks agree (noproject.txtar).
	hooktest.Main(m, map[string]func(){
		"cairn-session-start": func() { hook.SessionStart(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{}) },
		"cairn-stop":          func() { hook.Stop(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{}) },
	})
}

// TestScripts runs testdata/script/*.txtar. Every script starts in $WORK/project (a git
// project) with HOME, CLAUDE_PROJECT_DIR and CAIRN_MEMORY_DIR inside $WORK, and $STATE naming
// the state directory; cairn-fixture and with-readonly come from internal/hooktest.
func TestScripts(t *testing.T) {
	t.Parallel()
	p := hooktest.Params()
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		env.Setenv("GORACE", storetest.RaceOptions)
		// What `cairn version` must say: the manifest Claude Code reads.
		data, err := os.ReadFile(filepath.Join("..", "..", ".claude-plugin", "plugin.json"))
		if err != nil {
			return err
		}
		var m struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.Version == "" {
			return fmt.Errorf("plugin.json has no version: %v", err)
		}
		env.Setenv("PLUGIN_VERSION", regexp.QuoteMeta(m.Version))
		return setup(env)
	}
	p.Cmds["exits"] = exits
	testscript.Run(t, p)
}

// exits CODE PROG [ARGS...] runs PROG like exec and checks its exit code, so scripts pin
// cairn's documented codes (0 ok, 1 refused, 2 usage, 3 state unusable) rather than just
// "failed". stdout and stderr are then checked as after exec.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
