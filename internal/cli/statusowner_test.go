//go:build unix

package cli_test

import (
	"strings"
	"testing"
)

// TestStatusNamesALiveOwner: cairn status from a plain terminal says that another live
// session owns the workflow, as cairn transition from the same terminal warns.
func TestStatusNamesALiveOwner(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, append(env, "CLAUDE_CODE_SESSION_ID=s1"), "start", "apex", "owned")
	out, err := cairnCmd(t, dir, env, "status").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Another live session last changed this workflow") {
		t.Fatalf("cairn status: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go on with it in one session only") || strings.Contains(string(out), "ask the user") {
		t.Errorf("cairn status gives the person the agent's step:\n%s", out)
	}
	// A transition from the same terminal warns with the person's step too.
	out, err = cairnCmd(t, dir, env, "transition", "plan").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "go on with it in one session only") || strings.Contains(string(out), "ask the user") {
		t.Errorf("cairn transition: %v\n%s", err, out)
	}
}
