package claimsync_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestWallClockSetForwardKeepsAClaimHeld: another machine's claim this clone read a moment
// ago is not free to take over once the wall clock was set past its lease since (NTP stepping
// a drifted clock, a person setting it): the claims state saved at that read, in this boot,
// says by the time since boot how long ago that was. Set forward here by shifting what was
// saved back, as the wall clock read it then.
func TestWallClockSetForwardKeepsAClaimHeld(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	a.vars["CAIRN_CLAIM_LEASE"] = "1h"
	if _, err := claim.New(b, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "held by X") {
		t.Fatalf("setting X's task running: %v, want held", err)
	}
	file := filepath.Join(a.opt.StateDir, "claims.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	line := doc["line"].(map[string]any)
	back := func(v any) string {
		at, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			t.Fatal(err)
		}
		return at.Add(-61 * time.Minute).Format(time.RFC3339Nano)
	}
	seen := line["seen"].(map[string]any)
	seen["t1"] = back(seen["t1"])
	if clk, ok := line["clock"].(map[string]any); ok {
		clk["base"] = back(clk["base"])
	}
	if raw, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "held by X") {
		t.Fatalf("setting X's task running after the wall clock was set an hour forward: %v, want held by X", err)
	}
}

// TestTaskLeftRunningWithTheClaimsStateUnreadable: with something else in claims.json's place
// (a FIFO here; a file root's `sudo cairn` left is alike), setting running a task said it was
// not claimed, but setting one this clone held back to pending, or done, said nothing: its
// claim stays on the remote, refusing it to other machines for a lease. It is said now, without
// the store's step of moving the FIFO out, which the agent reading it could take.
func TestTaskLeftRunningWithTheClaimsStateUnreadable(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(a.opt.StateDir, "claims.json")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := a.task("t1", "pending")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "the task's claim, if this clone held one, was not released on the remote: ") || !strings.Contains(res.Warnings[0], "a FIFO is in its place") {
		t.Fatalf("setting t1 back to pending, claims.json a FIFO: warnings %q, want that its claim was not released, and why", res.Warnings)
	}
	// What is there may be someone's: no step to move it, which the agent could take.
	if !strings.HasSuffix(res.Warnings[0], "it was left as it is; "+claimsync.InTheWayStep) || strings.Contains(res.Warnings[0], "move") {
		t.Fatalf("setting t1 back to pending, claims.json a FIFO: warning %q; want it to end %q, and no step to move it", res.Warnings[0], claimsync.InTheWayStep)
	}
}
