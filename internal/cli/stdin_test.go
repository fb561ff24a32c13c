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

// TestStatuslineStdinTooLarge: statusline given more than Claude Code's statusLine JSON could
// be (megabytes) read none of it and fell back to the working directory without a word, where
// JSON it cannot read is said; now that is said too, and the line is printed all the same.
func TestStatuslineStdinTooLarge(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "big stdin")
	cmd := cairnCmd(t, dir, env, "statusline")
	cmd.Stdin = strings.NewReader(`{"cwd":"` + strings.Repeat("x", 2<<20) + `"}`)
	code, stdout, stderr := exitOf(t, cmd)
	if code != 0 || !strings.HasPrefix(stdout, "apex · analyze") || stderr != "cairn statusline: stdin is not Claude Code's statusLine JSON (stdin is larger than the limit of 1048576 bytes); using the working directory\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, the line, and the size said", code, stdout, stderr)
	}
}
