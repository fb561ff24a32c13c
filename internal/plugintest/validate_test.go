package plugintest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestClaudePluginValidate runs the pinned Claude Code CLI's own check. The Makefile sets
// CAIRN_CLAUDE_BIN (bash .ci/install-claude.sh installs the CLI and prints its path).
func TestClaudePluginValidate(t *testing.T) {
	bin := os.Getenv("CAIRN_CLAUDE_BIN")
	if bin == "" {
		t.Skip("CAIRN_CLAUDE_BIN is unset: `claude plugin validate . --strict` not run (make test sets it; or CAIRN_CLAUDE_BIN=$(bash .ci/install-claude.sh | tail -n 1))")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("CAIRN_CLAUDE_BIN=%s: %v", bin, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "plugin", "validate", ".", "--strict")
	cmd.Dir = repoRoot(t)
	// An isolated HOME: validation must not depend on, or write to, the user's ~/.claude.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR="+home+"/.claude", "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude plugin validate . --strict: %v\n%s", err, out)
	}
	t.Logf("claude plugin validate . --strict passed:\n%s", out)
}
