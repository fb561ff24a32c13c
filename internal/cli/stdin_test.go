//go:build unix

package cli_test

import (
	"strings"
	"testing"
)

// TestStdinLimit: checkpoint save reads stdin only up to the store's limit and the oversized
// document is refused (exit 1) with nothing written.
func TestStdinLimit(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	cmd := cairnCmd(t, dir, env, "checkpoint", "save", "big")
	cmd.Stdin = strings.NewReader(`{"pad":"` + strings.Repeat("x", 2<<20) + `"}`)
	code, stdout, stderr := exitOf(t, cmd)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "over the 1 MiB (1048576 bytes) a checkpoint may hold") || strings.Contains(stderr, "invalid JSON") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and a size refusal", code, stdout, stderr)
	}
	code, _, _ = exitOf(t, cairnCmd(t, dir, env, "checkpoint", "load", "big"))
	if code != 1 {
		t.Fatalf("the oversized checkpoint was saved (load exit %d)", code)
	}
}
