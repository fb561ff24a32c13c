package claimsync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestManySmallClaimsOnTheLine: thousands of claims with valid task ids (a hostile pusher)
// make the line as read too large for claims.json, so no call could keep what it read, and
// each started the lease clocks again: a claim left unrenewed could never be taken over, and
// nothing said why. Each call now says so, with the step, naming the owner holding most of
// them; the claims are all still honoured.
func TestManySmallClaimsOnTheLine(t *testing.T) {
	mem := memremote.New()
	a := newClone(t, mem)
	x, _ := machineX(t, mem)
	var junk [][]byte
	for i := range 4000 {
		data, err := json.Marshal(map[string]any{"op": "claim", "task": fmt.Sprintf("%0120d", i), "owner": "J", "prev": 0})
		if err != nil {
			t.Fatal(err)
		}
		junk = append(junk, data)
	}
	if _, err := mem.Append(context.Background(), "wf-1", 0, junk); err != nil {
		t.Fatal(err)
	}
	if _, err := x.TryClaim(context.Background(), "t2"); err != nil {
		t.Fatal(err)
	}
	const says = "the claims line of workflow wf-1 on origin holds 4001 claims, too many to keep in claims.json ("
	// The step names who holds them, which the person could not find with any command.
	const step = "so a claim left unrenewed is never taken over from here; 4000 of them are held by J: " + claimsync.TooManyStep
	if _, err := a.task("t2", "running"); err == nil || !strings.Contains(err.Error(), "task t2 is held by X") ||
		!strings.Contains(err.Error(), says) || !strings.HasSuffix(err.Error(), step+")") {
		t.Fatalf("claiming a task X holds: %v", err)
	}
	if _, err := a.task(fmt.Sprintf("%0120d", 7), "running"); err == nil || !strings.Contains(err.Error(), "is held by J") {
		t.Fatalf("claiming a task J holds: %v", err)
	}
	res, err := a.task("t1", "running")
	if err != nil || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, strings.Replace(says, "4001", "4002", 1)) }) {
		t.Fatalf("claiming a free task: %v %+v", err, res)
	}
	_, err = claimsync.Sync(context.Background(), a.opt, func(task, note string) error { return nil })
	if ne := (*claimsync.NoticeError)(nil); !errors.As(err, &ne) || !strings.HasSuffix(err.Error(), step) {
		t.Fatalf("sync: %v", err)
	}
}
