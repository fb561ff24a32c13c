package report

import (
	"strings"
	"testing"
	"time"
)

func TestSharedLine(t *testing.T) {
	for _, tc := range []struct {
		in   Shared
		want string
	}{
		{Shared{Remote: "origin", Age: 4*time.Minute + 10*time.Second, Unpushed: 2}, "shared via origin: synced 4m ago, 2 changes not pushed"},
		{Shared{Remote: "origin", Age: 2 * time.Hour, Unpushed: 1}, "shared via origin: synced 2h ago, 1 change not pushed"},
		{Shared{Remote: "origin", Age: 5 * time.Second}, "shared via origin: synced just now"},
		{Shared{Remote: "origin", Age: 0}, "shared via origin: synced just now"},
		{Shared{Remote: "origin", Never: true, Unpushed: 3}, "shared via origin: never synced, 3 changes not pushed"},
		{Shared{Remote: "origin", Age: -time.Hour}, "shared via origin: synced in the future (clock skew?)"},
		{Shared{Remote: "a\nb", Never: true}, "shared via a b: never synced"},
		{Shared{Remote: "origin", Age: 4 * time.Minute, Unpushed: 2, Unconfirmed: 1}, "shared via origin: synced 4m ago, 2 changes not pushed, 1 claim not confirmed"},
		{Shared{Remote: "origin", Age: time.Hour, Unconfirmed: 3}, "shared via origin: synced 1h ago, 3 claims not confirmed"},
		{Shared{Remote: "origin", Never: true, Unpushed: 1, Unconfirmed: 2}, "shared via origin: never synced, 1 change not pushed, 2 claims not confirmed"},
	} {
		if got := SharedLine(tc.in); got != tc.want {
			t.Errorf("SharedLine(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRenderSharedLine: the line sits under the workflow line, and only when sharing is on.
func TestRenderSharedLine(t *testing.T) {
	in := Input{Tier: "Full", WorkflowID: "wf-1", Type: "apex", Phase: "plan", Next: "go on"}
	if out, _ := Render(in); strings.Contains(out, "shared via") {
		t.Errorf("sharing off, yet the report says:\n%s", out)
	}
	in.Shared = &Shared{Remote: "origin", Age: 4 * time.Minute, Unpushed: 2}
	out, _ := Render(in)
	if !strings.Contains(out, "workflow: wf-1 (apex), phase plan\nshared via origin: synced 4m ago, 2 changes not pushed\n") {
		t.Errorf("the shared line is not right under the workflow line:\n%s", out)
	}
}
