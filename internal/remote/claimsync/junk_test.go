package claimsync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/store"
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
	pushJunk(t, mem)
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
	// The step ends them whoever holds them: J runs nowhere, so asking it to stop (the step
	// once given) ended nothing. Another workflow, started as the step says, has a line of
	// its own.
	if !strings.Contains(step, "start_workflow with replace") {
		t.Fatalf("the step %q does not say how to go on without the claims", step)
	}
	if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "again", WorkflowID: "wf-2", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.task("t1", "running"); err != nil || len(res.Warnings) != 0 {
		t.Fatalf("claiming t1 in the workflow that took over: %v %+v", err, res)
	}
}

// pushJunk appends to wf-1's claims line 4000 claims of J (a hostile pusher): too many for
// claims.json.
func pushJunk(t *testing.T, b remote.Backend) {
	t.Helper()
	var junk [][]byte
	for i := range 4000 {
		data, err := json.Marshal(map[string]any{"op": "claim", "task": fmt.Sprintf("%0120d", i), "owner": "J", "prev": 0})
		if err != nil {
			t.Fatal(err)
		}
		junk = append(junk, data)
	}
	if _, err := b.Append(context.Background(), "wf-1", head(t, b), remote.Slice(junk...)); err != nil {
		t.Fatal(err)
	}
}

// TestOfflineClaimsBesideTooManyClaims: with the line too large for claims.json, a call that
// read it kept nothing of what it did. A claim made offline that the next sync confirmed stayed
// "not confirmed" in claims.json for good (each status line: "1 claim not confirmed"), and a
// claim whose push failed after the line was read was not queued, so no sync claimed its task,
// running here: another machine could take it. What the call did is now kept all the same,
// beside the line as claims.json last held it, which the next call reads on from.
func TestOfflineClaimsBesideTooManyClaims(t *testing.T) {
	n := &pushless{Backend: memremote.New()}
	f := &flaky{Backend: n}
	a := newClone(t, f)
	pushJunk(t, n.Backend)
	unconfirmed := func() []string {
		t.Helper()
		st, err := store.Open(a.opt.StateDir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var doc struct {
			Pending map[string]time.Time `json:"pending"`
		}
		if _, err := st.ReadJSON(claimsync.Doc, &doc); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(doc.Pending))
	}
	f.set(true)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(false)
	n.fail.Store(true)
	if res, err := a.task("t2", "running"); err != nil || slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "could not be queued") }) {
		t.Fatalf("a claim whose push failed: %v %+v", err, res)
	}
	if got := unconfirmed(); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("claims not confirmed %q, want t1 and t2", got)
	}
	n.fail.Store(false)
	_, err := claimsync.Sync(context.Background(), a.opt, func(task, note string) error { return nil })
	if ne := (*claimsync.NoticeError)(nil); !errors.As(err, &ne) || !strings.Contains(err.Error(), "too many to keep") {
		t.Fatalf("sync: %v", err)
	}
	if got := unconfirmed(); len(got) != 0 {
		t.Errorf("after a sync that claimed them, claims not confirmed %q", got)
	}
	x, _ := machineX(t, n.Backend)
	for _, task := range []string{"t1", "t2"} {
		if _, err := x.TryClaim(context.Background(), task); !errors.Is(err, claim.ErrHeld) {
			t.Errorf("another machine claiming %s, running here: %v", task, err)
		}
	}
}

// TestTooManyClaimsStillRenews: with the line too large for claims.json, each call reads again
// the claims made past what it keeps, this clone's own among them, and counted their lease from
// that read: a claim of its own was never due, never renewed, and a machine that had watched
// it for a lease took it over while its task ran here. It is renewed as any claim is: once a
// quarter of the lease has passed, not at every sync.
func TestTooManyClaimsStillRenews(t *testing.T) {
	mem := memremote.New()
	a := newClone(t, mem)
	pushJunk(t, mem)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, twoMinutesLater := machineX(t, mem) // it sees the claim now
	a.vars[claimsync.EnvClockSkew] = "20s"
	_, err := claimsync.Sync(context.Background(), a.opt, func(task, note string) error { return nil })
	if ne := (*claimsync.NoticeError)(nil); !errors.As(err, &ne) || !strings.Contains(err.Error(), "too many to keep") {
		t.Fatalf("sync: %v", err)
	}
	renewed := head(t, mem)
	_, _ = claimsync.Sync(context.Background(), a.opt, func(task, note string) error { return nil })
	if got := head(t, mem); got != renewed {
		t.Fatalf("a sync right after the renewal appended %d records, want none", got-renewed)
	}
	twoMinutesLater()
	if _, err := x.TryClaim(context.Background(), "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("another machine took over t1, running here and synced since: %v", err)
	}
}

// TestTooManyClaimsKeepsWhatRunsHere: with the line too large for claims.json, what a call
// kept of the line was the line as claims.json last held it, without the claims this clone
// made since: its own running task read as another machine's (mirror.RunsElsewhere), so a
// session start after its session ended left it running, under a claim the syncs renew, for
// good. It is recovered as any task of this clone's is.
func TestTooManyClaimsKeepsWhatRunsHere(t *testing.T) {
	mem := memremote.New()
	a := newClone(t, mem)
	a.en = openSession(t, a.opt.Root, "session-a0")
	pushJunk(t, mem)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	sessionStart(t, a.opt.Root, nil)
	if got := taskStatus(t, a, "t1"); got != "pending" {
		t.Fatalf("a session start on the machine holding t1, its session ended, left it %s; want it recovered", got)
	}
}

// TestTooManyClaimsSaysATakeoverOnce: with the line too large for claims.json, a claim of this
// clone's that claims.json last held, taken over by another machine since, was said taken over
// by every call, as each read again from claims.json that this clone held it. It is said once.
func TestTooManyClaimsSaysATakeoverOnce(t *testing.T) {
	mem := memremote.New()
	a := newClone(t, mem)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, twoMinutesLater := machineX(t, mem)
	pushJunk(t, mem)
	twoMinutesLater()
	if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	for i, task := range []string{"t2", "t3"} {
		res, err := a.task(task, "running")
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "task t1, running here, is now held by X") })
		if said != (i == 0) {
			t.Fatalf("call %d said t1 taken over: %v, want only the first to: %q", i+1, said, res.Warnings)
		}
	}
}
