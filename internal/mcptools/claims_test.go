package mcptools_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
)

// TestUpdateTaskClaims: with sharing on, update_task(running) claims the task on the remote.
// A task another machine holds is refused in one short line naming the holder; offline the
// update goes ahead with a warning, and the background sync then reports the other machine's
// claim in one notice and sets the task back to pending.
func TestUpdateTaskClaims(t *testing.T) {
	bare := bareRepo(t)
	aDir, c := machineA(t, bare, "claims")

	// Machine B, as cairn task does it.
	b := machineB(t, bare)
	bOpt := claimsync.Options{StateDir: b.e.StateDir(), Root: b.dir, Getenv: b.env}
	bTask := func(id string) error {
		_, err := claimsync.Task(testCtx(t), bOpt, id, "running", func(rerun bool) (*engine.Result, error) {
			return b.e.UpdateTask(engine.TaskRequest{ID: id, Status: "running", Rerun: rerun})
		})
		return err
	}
	// B takes the workflow from the remote once A's background sync has pushed it.
	waitFor(t, func() bool {
		out, err := b.trySync(t)
		return err == nil && out.Local >= 1
	})

	if err := bTask("t1"); err != nil {
		t.Fatalf("B claiming t1: %v", err)
	}
	bOwner := owner(t, b.e.StateDir())
	res := mustFail(t, c, "update_task", `{"id":"t1","status":"running"}`, "task t1 is held by "+bOwner, "pick another task")
	if got := text(res); strings.Contains(got, "\n") || len(got) > 300 {
		t.Errorf("the refusal is not one short line (%d bytes): %q", len(got), got)
	}

	mustOK(t, c, "update_task", `{"id":"t2","status":"running"}`)
	if err := bTask("t2"); err == nil || !strings.Contains(err.Error(), "task t2 is held by "+owner(t, filepath.Join(aDir, ".claude", "cairn"))) {
		t.Fatalf("B claiming A's t2: %v", err)
	}

	// Offline: A's update goes ahead, unconfirmed; B claims the same task meanwhile.
	git(t, aDir, "remote", "set-url", "origin", "file://"+bare+".gone")
	got := text(mustOK(t, c, "update_task", `{"id":"t3","status":"running"}`))
	if !strings.Contains(got, "\nWarning: Task t3 is not yet claimed on origin (it could not be reached): the next sync claims it or says which machine holds it.") {
		t.Fatalf("offline update_task said %q", got)
	}
	if err := bTask("t3"); err != nil {
		t.Fatalf("B claiming t3 while A is offline: %v", err)
	}
	git(t, aDir, "remote", "set-url", "origin", "file://"+bare)
	want := regexp.MustCompile(`Notice: Task t3 was set running here offline, but ` + regexp.QuoteMeta(bOwner) +
		` \(claimed just now\) holds it: it went back to pending here\.`)
	waitFor(t, func() bool { return want.MatchString(text(mustOK(t, c, "get_vars", `{}`))) })
}

// owner is a clone's claims identity.
func owner(t *testing.T, stateDir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stateDir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Owner string }
	if err := json.Unmarshal(data, &s); err != nil || s.Owner == "" {
		t.Fatalf("no owner in claims.json: %v %s", err, data)
	}
	return s.Owner
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
