package claimsync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// flaky is a remote that can be switched off, as a network that drops; missed counts the
// calls it failed, by workflow.
type flaky struct {
	remote.Backend
	mu     sync.Mutex
	off    bool
	missed map[string]int
}

func (f *flaky) set(off bool) { f.mu.Lock(); f.off = off; f.mu.Unlock() }
func (f *flaky) down(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		if f.missed == nil {
			f.missed = map[string]int{}
		}
		f.missed[id]++
		return errors.New("connection refused")
	}
	return nil
}
func (f *flaky) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	if err := f.down(id); err != nil {
		return nil, err
	}
	return f.Backend.Since(ctx, id, rev)
}
func (f *flaky) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if err := f.down(id); err != nil {
		return 0, err
	}
	return f.Backend.Append(ctx, id, after, data)
}

// clone is one machine with sharing on, an active workflow wf-1 and its claims on b.
type clone struct {
	t    *testing.T
	en   *engine.Engine
	opt  claimsync.Options
	vars map[string]string
}

func newClone(t *testing.T, b remote.Backend) *clone {
	t.Helper()
	return cloneOf(t, b, b)
}

// cloneOf is newClone with the workflow the first machine of key started (see startSharing).
func cloneOf(t *testing.T, b remote.Backend, key any) *clone {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := openClone(t, dir)
	c.opt.Backend = b
	c.startSharing(key)
	return c
}

func (c *clone) task(id, status string) (*engine.Result, error) {
	return claimsync.Task(context.Background(), c.opt, id, status, func(rerun bool) (*engine.Result, error) {
		return c.en.UpdateTask(engine.TaskRequest{ID: id, Status: status, Rerun: rerun})
	})
}

func (c *clone) sync() []string {
	c.t.Helper()
	notes, err := claimsync.Sync(context.Background(), c.opt, func(task, note string) error {
		_, err := c.en.UpdateTask(engine.TaskRequest{ID: task, Status: "pending", Note: note})
		return err
	})
	if err != nil {
		c.t.Fatalf("claims sync: %v", err)
	}
	return notes
}

func head(t *testing.T, b remote.Backend) int64 {
	t.Helper()
	h, err := b.Heads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h["wf-1"]
}

// TestSyncRenewsAndReleases: the holder's sync renews a claim once a quarter of the lease has
// passed on its clock (not before), and releases the claim of a task no longer running here,
// so another machine may claim it at once. Time passes by moving the clock on; the lease is an
// hour, so that the seconds the calls take, however loaded the machine, cannot decide.
func TestSyncRenewsAndReleases(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		skew string
		want int64
	}{{"", 1}, {"10m", 1}, {"20m", 2}, {"25m", 2}, {"40m", 3}} {
		a.vars[claimsync.EnvClockSkew] = step.skew
		if notes := a.sync(); len(notes) != 0 {
			t.Fatalf("notes: %v", notes)
		}
		if got := head(t, b); got != step.want {
			t.Fatalf("after a sync at +%s the claims line is at r%d, want r%d", step.skew, got, step.want)
		}
	}
	// Done without the claims rules (as the hooks' task events do): the next sync once it
	// is pushed releases it, as done, which no machine claims again.
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "done"}); err != nil {
		t.Fatal(err)
	}
	a.pushed()
	a.sync()
	other := claim.New(b, "wf-1", "X", time.Hour, time.Now)
	if _, err := other.TryClaim(context.Background(), "t1"); !errors.As(err, new(*claim.DoneError)) || len(other.Holders()) != 0 {
		t.Fatalf("claiming a task released as done: %v, holders %+v; want it refused as finished, and no holder", err, other.Holders())
	}
}

// TestOfflineClaim: offline the task is set running with a warning; the next sync confirms an
// uncontested claim, and for one another machine took meanwhile says who and sets the task back
// to pending through the state machine.
func TestOfflineClaim(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	f.set(true)
	for _, id := range []string{"t1", "t2"} {
		res, err := a.task(id, "running")
		if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "task "+id+" is not yet claimed on origin") {
			t.Fatalf("offline %s: %v %+v", id, err, res)
		}
	}
	other := claim.New(f.Backend, "wf-1", "X", time.Hour, time.Now)
	if _, err := other.TryClaim(context.Background(), "t2"); err != nil {
		t.Fatal(err)
	}
	f.set(false)
	notes := a.sync()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "task t2 was set running here offline, but X (claimed just now) holds it: it went back to pending here") {
		t.Fatalf("notes = %q", notes)
	}
	for _, tk := range storetest.ReadRecord(t, a.opt.StateDir).Tasks {
		if want := map[string]string{"t1": "running", "t2": "pending"}[tk.ID]; string(tk.Status) != want ||
			(tk.ID == "t2" && tk.Note != "claimed first by X on another machine") {
			t.Fatalf("task %s is %s (%q) after the sync, want %s", tk.ID, tk.Status, tk.Note, want)
		}
	}
	if _, err := other.TryClaim(context.Background(), "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("the uncontested offline claim was not confirmed: %v", err)
	}
	if _, err := a.task("t2", "done"); err == nil || !strings.Contains(err.Error(), "task t2 is held by X") {
		t.Fatalf("done on a task X holds: %v", err)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the next sync repeated: %q", notes)
	}
}

// hooked is a remote that runs a hook once, when it is next read: another process of the same
// clone acting while a call waits on the network.
type hooked struct {
	remote.Backend
	mu   sync.Mutex
	hook func()
}

func (h *hooked) arm(f func()) { h.mu.Lock(); h.hook = f; h.mu.Unlock() }
func (h *hooked) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	h.mu.Lock()
	f := h.hook
	h.hook = nil
	h.mu.Unlock()
	if f != nil {
		f()
	}
	return h.Backend.Since(ctx, id, rev)
}

// second opens another engine on c's project, as a second process of the same clone does.
func (c *clone) second() *clone {
	c.t.Helper()
	getenv := func(k string) string { return c.vars[k] }
	en, err := engine.Open(engine.Config{Getenv: getenv, WorkDir: c.opt.Root, Actor: "second", YAML: yamldoc.Codec{}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { en.Close() })
	return &clone{t: c.t, en: en, vars: c.vars, opt: c.opt}
}

// during runs f in another goroutine when the remote is next read, and waits until f ends or
// waits for a lock of the state directory dir: a call that does not wait on this clone's other
// calls has finished then, and one that waits (its turn) is not held up. The returned func
// waits for f and fails the test if it failed.
func during(t *testing.T, h *hooked, dir string, f func() error) (wait func()) {
	t.Helper()
	done := make(chan error, 1)
	h.arm(func() {
		go func() { done <- f() }()
		durabletest.WaitLockWaiter(filepath.Join(dir, ".lock-*"), done)
	})
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func taskStatus(t *testing.T, c *clone, id string) string {
	t.Helper()
	for _, tk := range storetest.ReadRecord(t, c.opt.StateDir).Tasks {
		if tk.ID == id {
			return string(tk.Status)
		}
	}
	return ""
}

// TestSyncKeepsAClaimSetRunningMeanwhile: a sync releases the claim of a task that is no longer
// running here; another process of the same clone that sets the task running again while the
// sync reads the remote keeps the task claimed, so no other machine may take it.
func TestSyncKeepsAClaimSetRunningMeanwhile(t *testing.T) {
	h := &hooked{Backend: memremote.New()}
	a := newClone(t, h)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	// Out of running without the claims rules (as a crash recovery does): the claim stays
	// for the next sync to release.
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "pending"}); err != nil {
		t.Fatal(err)
	}
	b := a.second()
	wait := during(t, h, b.opt.StateDir, func() error { _, err := b.task("t1", "running"); return err })
	a.sync()
	wait()
	if got := taskStatus(t, a, "t1"); got != "running" {
		t.Fatalf("t1 is %s here, want running", got)
	}
	other := claim.New(h.Backend, "wf-1", "X", time.Hour, time.Now)
	if _, err := other.TryClaim(context.Background(), "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("another machine could claim t1, running here: %v", err)
	}
}

// TestSecretTaskIDIsNotPushed: a task id with the shape of a secret (pasted in error to cairn
// task, which does not scan its arguments as the MCP server does) is refused here as it is
// without sharing, and never reaches the claims line, which every machine with access to the
// remote reads and which keeps its history.
func TestSecretTaskIDIsNotPushed(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	if _, err := a.task(token, "running"); err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("setting a secret-shaped task running: %v", err)
	}
	recs, err := b.Since(context.Background(), "wf-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if strings.Contains(string(r.Data), token) {
			t.Fatalf("the claims line holds the secret: r%d %s", r.Rev, r.Data)
		}
	}
}

// TestTaskNamedForAPasswordKeepsTheClaimsState: a task named for a password or a secret
// (reset-password, rotate-secret, add-api-key) is set running and claimed, but claims.json
// keys its claim's times by the task's id, which the store's scan read as a secret assigned a
// date: every save of the claims state was refused from then on, for every task, with a
// warning to move a secret to an environment variable. A date is no secret: the state is kept
// and nothing is said.
func TestTaskNamedForAPasswordKeepsTheClaimsState(t *testing.T) {
	a := newClone(t, memremote.New())
	for _, id := range []string{"reset-password", "rotate_db_passwd", "rotate-secret", "add-api-key", "fix-pwd"} {
		if res, err := a.task(id, "running"); err != nil || len(res.Warnings) != 0 {
			t.Fatalf("setting %s running: %v %q", id, err, res.Warnings)
		}
	}
	a.vars[claimsync.EnvClockSkew] = "20s" // past a quarter of the lease: the sync renews
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("notes: %q", notes)
	}
	if data, err := os.ReadFile(filepath.Join(a.opt.StateDir, claimsync.Doc+".json")); err != nil ||
		!strings.Contains(string(data), `"seen":{"add-api-key":`) || !strings.Contains(string(data), `"reset-password":`) {
		t.Fatalf("claims state: %v\n%s", err, data)
	}
}

// swappable is a remote whose lines can be deleted on the host, as a person deleting the
// claims branch in the host's web page, or a git push --mirror from a clone without them, does.
type swappable struct {
	mu sync.Mutex
	remote.Backend
}

func (s *swappable) wipe() { s.mu.Lock(); s.Backend = memremote.New(); s.mu.Unlock() }
func (s *swappable) backend() remote.Backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Backend
}
func (s *swappable) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	return s.backend().Append(ctx, id, after, data)
}
func (s *swappable) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return s.backend().Since(ctx, id, rev)
}

// TestSyncReclaimsAClaimTheLineLost: the claims line was deleted on the host while tasks run
// here under this clone's claims; the next sync claims them again, so that another machine
// cannot take them as free, and says (once) which one another machine claimed first.
func TestSyncReclaimsAClaimTheLineLost(t *testing.T) {
	s := &swappable{Backend: memremote.New()}
	a := newClone(t, s)
	for _, id := range []string{"t1", "t2", "t3"} {
		if _, err := a.task(id, "running"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.task("t3", "done"); err != nil { // the line this clone read is longer than the new one
		t.Fatal(err)
	}
	s.wipe()
	other := claim.New(s, "wf-1", "X", time.Hour, time.Now)
	if _, err := other.TryClaim(context.Background(), "t2"); err != nil {
		t.Fatal(err)
	}
	notes := a.sync()
	if len(notes) != 1 || notes[0] != "task t2, running here, is now held by X (claimed just now) on another machine (this machine's claim lapsed or went from origin): save_checkpoint keeps the data, then pick another task" {
		t.Fatalf("notes = %q", notes)
	}
	if _, err := other.TryClaim(context.Background(), "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("another machine could claim t1, running here: %v", err)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the next sync repeated: %q", notes)
	}
}

// TestSyncRenewsAClaimItDidNotRecord: a task call whose claim landed but which could not record
// it in claims.json (killed just after setting the task running, or its write failed) leaves a
// task running here under a claim this clone does not know it holds. Its syncs must still
// renew it: otherwise another machine takes it over once the lease ends, while it runs here.
func TestSyncRenewsAClaimItDidNotRecord(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(a.opt.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var doc struct {
		Owner string `json:"owner"`
	}
	if _, err := st.ReadJSON(claimsync.Doc, &doc); err != nil || doc.Owner == "" {
		t.Fatalf("claims.json: %+v %v", doc, err)
	}
	if err := st.Write(claimsync.Doc, []byte(`{"owner":"`+doc.Owner+`"}`)); err != nil {
		t.Fatal(err)
	}
	// The sync reads the claim back a quarter of the 1m lease after it was made, which
	// others may have seen land then: it renews it.
	a.vars[claimsync.EnvClockSkew] = "20s"
	a.sync()
	if got := head(t, b); got != 2 {
		t.Fatalf("after a sync past a quarter of the lease the claims line is at r%d, want r2 (renewed)", got)
	}
}

// TestOneNotePerLostClaim: a task this clone held and set running again while offline (after
// setting it pending there), that another machine took over meanwhile, goes back to pending
// with one note, not two.
func TestOneNotePerLostClaim(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	other, twoMinutesLater := machineX(t, f.Backend)
	f.set(true)
	for _, status := range []string{"pending", "running"} {
		if _, err := a.task("t1", status); err != nil {
			t.Fatal(err)
		}
	}
	twoMinutesLater()
	if _, err := other.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	f.set(false)
	notes := a.sync()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "task t1 was set running here offline, but X") {
		t.Fatalf("notes = %q", notes)
	}
}

// offlineBesideAHolder returns clone b, offline, after another clone claimed t1 and b read the
// claims line with that claim on it.
func offlineBesideAHolder(t *testing.T) *clone {
	t.Helper()
	f := &flaky{Backend: memremote.New()}
	a, b := newClone(t, f), newClone(t, f)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.task("t2", "running"); err != nil { // b reads the line, t1's claim included
		t.Fatal(err)
	}
	f.set(true)
	return b
}

// TestOfflineRefusesATaskKnownHeld: offline, a task that another machine held under a live
// lease when this clone last read the line is refused, as it is online, rather than set running
// here unconfirmed: the agent would work on it beside the holder until the next sync.
func TestOfflineRefusesATaskKnownHeld(t *testing.T) {
	b := offlineBesideAHolder(t)
	res, err := b.task("t1", "running")
	if err == nil || !strings.Contains(err.Error(), "task t1 is held by ") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("offline, setting running a task another machine holds: %v %v", err, res != nil)
	}
	if got := taskStatus(t, b, "t1"); got != "" {
		t.Fatalf("t1 is %q on b, want absent", got)
	}
}

// TestOfflineRefusesToFinishATaskKnownHeld: offline, a task another machine held at the last
// read cannot be marked done here, as online.
func TestOfflineRefusesToFinishATaskKnownHeld(t *testing.T) {
	b := offlineBesideAHolder(t)
	if _, err := b.task("t1", "pending"); err == nil || !strings.Contains(err.Error(), "task t1 is held by ") {
		t.Fatalf("offline, changing a task another machine holds: %v", err)
	}
	if got := taskStatus(t, b, "t1"); got != "" {
		t.Fatalf("t1 is %q on b, want absent", got)
	}
}

// TestNewerCairnsFieldsAreKept: members a newer Cairn wrote in claims.json that this one has no
// field for survive the rewrite of every task call and sync, as the workflow record's do: they
// were dropped, and the newer Cairn lost what it kept there.
func TestNewerCairnsFieldsAreKept(t *testing.T) {
	a := newClone(t, memremote.New())
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(a.opt.StateDir, claimsync.Doc+".json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The claims line's own members too: they were dropped.
	const newer, newerLine = `"newer":{"kept":[1,2]}`, `"newer_line":[3]`
	data = append(append(bytes.TrimSuffix(bytes.TrimSpace(data), []byte("}")), ","+newer...), '}')
	data = bytes.Replace(data, []byte(`"line":{`), []byte(`"line":{`+newerLine+","), 1)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t2", "running"); err != nil {
		t.Fatal(err)
	}
	a.sync()
	var doc struct {
		Line map[string]json.RawMessage `json:"line"`
	}
	if data, err = os.ReadFile(file); err != nil || !bytes.Contains(data, []byte(newer)) || bytes.Count(data, []byte(`"workflow_id"`)) != 1 ||
		json.Unmarshal(data, &doc) != nil || string(doc.Line["newer_line"]) != "[3]" || doc.Line["holders"] == nil {
		t.Fatalf("claims.json after a task call and a sync: %s %v; want %s kept, %s in its line, and each member once", data, err, newer, newerLine)
	}
}

// TestSecretShapedMemberIsNotKept: a member of claims.json this Cairn has no field for is
// written back unchanged (a newer Cairn's), but none holds a secret's shape, which no Cairn
// writes: kept, it made every task call warn that the claims were not saved, with advice to
// keep a secret in an environment variable, and no claim was queued or released.
func TestSecretShapedMemberIsNotKept(t *testing.T) {
	a := newClone(t, memremote.New())
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(a.opt.StateDir, claimsync.Doc+".json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + strings.Repeat("a1B2c3", 6)
	data = append(append(bytes.TrimSuffix(bytes.TrimSpace(data), []byte("}")), `,"newer":"`+token+`"`...), '}')
	data = bytes.Replace(data, []byte(`"line":{`), []byte(`"line":{"newer_line":"`+token+`",`), 1)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := a.task("t2", "running")
	if err != nil || len(res.Warnings) > 0 {
		t.Fatalf("task beside a secret-shaped member of claims.json: %v, warnings %q; want none", err, res.Warnings)
	}
	if data, err = os.ReadFile(file); err != nil || bytes.Contains(data, []byte(token)) || !bytes.Contains(data, []byte(`"t2"`)) {
		t.Fatalf("claims.json after the task call: %s %v; want t2 saved, the token not", data, err)
	}
}

// TestDamagedShapeIsQuarantined: a claims.json that is strict JSON but not of the claims
// state's shape is kept in quarantine/ and rebuilt, with a new identity said plainly, rather
// than blocking every claims call. One that names no owner (null, {}, or a newer Cairn's of
// another shape) was overwritten with a new identity without a word, losing what it held (the
// claims made offline) and the old identity's claims, which were then told as another
// machine's.
func TestDamagedShapeIsQuarantined(t *testing.T) {
	for _, bad := range []string{`{"owner":5}`, `null`, `{}`, `{"identity":{"owner":"sam@laptop#3fa2c1"},"workflow_id":"wf-1","pending":{"t2":"2026-11-23T09:00:00Z"}}`} {
		t.Run(bad, func(t *testing.T) {
			a := newClone(t, memremote.New())
			if err := os.WriteFile(filepath.Join(a.opt.StateDir, "claims.json"), []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := a.task("t1", "running")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "new identity") {
				t.Fatalf("task on a misshapen claims.json warned %q", res.Warnings)
			}
			kept, _ := filepath.Glob(filepath.Join(a.opt.StateDir, "quarantine", "claims.json-*"))
			if len(kept) != 1 {
				t.Fatalf("quarantine holds %v", kept)
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != bad {
				t.Fatalf("quarantined %q, want %q", b, bad)
			}
			if notes := a.sync(); len(notes) != 0 {
				t.Fatalf("sync after the rebuild: %q", notes)
			}
		})
	}
}

// TestOfflineDoneAfterTheLeaseIsRefused: offline, a task this clone holds cannot be marked
// done (which is final) once its claim has gone unrenewed here for as long as another machine
// waits before taking it over: it may have been taken over, and the done would reach every
// machine at the next sync, over the new holder's work. Within the lease it goes ahead offline.
func TestOfflineDoneAfterTheLeaseIsRefused(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	for _, id := range []string{"t1", "t2"} {
		if _, err := a.task(id, "running"); err != nil {
			t.Fatal(err)
		}
	}
	other, twoMinutesLater := machineX(t, f.Backend)
	f.set(true)
	a.vars[claimsync.EnvClockSkew] = "30s"
	if _, err := a.task("t2", "done"); err != nil {
		t.Fatalf("offline, within the lease, done on a task held here: %v", err)
	}
	a.vars[claimsync.EnvClockSkew] = "2m"
	twoMinutesLater()
	if _, err := other.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	doneRefused(t, a, "t1", "offline, past the lease, done on a task another machine took over", "nothing was changed")
	if _, err := a.task("t1", "pending"); err != nil {
		t.Fatalf("offline, past the lease, back to pending (not final): %v", err)
	}
	f.set(false)
	if _, err := a.task("t1", "done"); err == nil || !strings.Contains(err.Error(), "task t1 is held by X") {
		t.Fatalf("online, done on a task X holds: %v", err)
	}
}

// TestDoneOnARunningTaskAsksTheRemote: a task running here that this clone neither holds nor
// knew held (it came running from another machine's revisions, before this clone's claims
// were read again) is checked on the line before it is marked done: another machine may hold
// it, and done is final.
func TestDoneOnARunningTaskAsksTheRemote(t *testing.T) {
	b := memremote.New()
	a, other := newClone(t, b), newClone(t, b)
	if _, err := other.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	// As a's workflow sync brings it: running, with the claim not yet read here.
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "done"); err == nil || !strings.Contains(err.Error(), "task t1 is held by ") {
		t.Fatalf("done on a task another machine holds, unknown here: %v", err)
	}
	if got := taskStatus(t, a, "t1"); got != "running" {
		t.Fatalf("t1 is %s here, want still running", got)
	}
}

// TestSecretOnTheLineDoesNotStopClaims: a claim on the line whose task or owner has the shape
// of a secret (written by a Cairn that did not refuse it, or by anyone who can push) is not a
// claim, as it cannot be a task: kept with the line, it made every save of this clone's claims
// state refused by the store's secret scan, so the clone's claims and sync failed from then on.
func TestSecretOnTheLineDoesNotStopClaims(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	other := "ghp_" + strings.Repeat("c3D4", 9)
	for owner, task := range map[string]string{"X": other, token: "t9"} {
		if _, err := claim.New(b, "wf-1", owner, time.Hour, time.Now).TryClaim(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	a.vars[claimsync.EnvClockSkew] = "20s" // past a quarter of the lease: the sync renews
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("notes: %q", notes)
	}
	if data, err := os.ReadFile(filepath.Join(a.opt.StateDir, claimsync.Doc+".json")); err != nil || strings.Contains(string(data), token) || strings.Contains(string(data), other) || !strings.Contains(string(data), `"t1"`) {
		t.Fatalf("claims state: %v\n%s", err, data)
	}
}

// machineX is another machine on the claims line of wf-1, with a one-minute lease, whose
// clock can be moved two minutes on: past the lease of a claim it read.
func machineX(t *testing.T, b remote.Backend) (*claim.Claimer, func()) {
	t.Helper()
	var mu sync.Mutex
	later := time.Duration(0)
	x := claim.New(b, "wf-1", "X", time.Minute, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(later)
	})
	if err := x.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x, func() {
		mu.Lock()
		later = 2 * time.Minute
		mu.Unlock()
	}
}

// gitClone is one machine's checkout at dir of the bare repository url, sharing on through
// git itself (no test backend), with wf-1 active.
func gitClone(t *testing.T, url, dir string) *clone {
	t.Helper()
	gitInit(t, url, dir)
	c := openClone(t, dir)
	c.startSharing(url)
	return c
}

// gitInit makes dir a git checkout whose origin is url.
func gitInit(t *testing.T, url, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "remote", "add", "origin", url}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// workflows holds, for each remote the claims go through (a Backend, or a git URL), the
// workflow wf-1 as the first machine on it started it: the machines of a test share one
// workflow, as cairn sync makes them, and so one workflow's claims.
var workflows sync.Map

// startSharing starts wf-1 here, or takes the one the first machine on the remote at key
// started, and turns sharing on, as cairn remote enable leaves it.
func (c *clone) startSharing(key any) {
	c.t.Helper()
	st, err := store.Open(c.en.StateDir())
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	wr, loaded := workflows.LoadOrStore(key, memremote.New())
	if !loaded {
		c.t.Cleanup(func() { workflows.Delete(key) })
		if _, err := c.en.Start(engine.StartRequest{Type: "apex", Context: "claims", WorkflowID: "wf-1"}); err != nil {
			c.t.Fatal(err)
		}
	}
	if _, err := remotesync.Sync(context.Background(), st, wr.(*memremote.Backend), "origin", "wf-1", nil); err != nil {
		c.t.Fatal(err)
	}
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
		c.t.Fatal(err)
	}
}

// openClone opens the project at dir as it is on disk.
func openClone(t *testing.T, dir string) *clone {
	t.Helper()
	vars := map[string]string{"HOME": filepath.Join(dir, "home"), "CLAUDE_PROJECT_DIR": dir, claimsync.EnvLease: "1m"}
	getenv := func(k string) string { return vars[k] }
	en, err := engine.Open(engine.Config{Getenv: getenv, WorkDir: dir, Actor: "test", YAML: yamldoc.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	return &clone{t: t, en: en, vars: vars, opt: claimsync.Options{StateDir: en.StateDir(), Root: dir, Getenv: getenv}}
}

// TestCopiedProjectIsAnotherOwner: a project directory copied whole (cp -r, state directory
// included) is another machine to the claims: the copy cannot mark done a task the original
// holds, nor set it running, while the original still can. A project directory moved (the
// original gone) keeps its identity and its claims.
func TestCopiedProjectIsAnotherOwner(t *testing.T) {
	bare := gittest.Bare(t)
	base := t.TempDir()
	a := gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(base, "a"), filepath.Join(base, "copy")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	cp := openClone(t, filepath.Join(base, "copy"))
	for _, status := range []string{"done", "running"} {
		if _, err := cp.task("t1", status); err == nil || !strings.Contains(err.Error(), "another machine") {
			t.Errorf("the copy set t1 %s: %v; want it refused as held on another machine", status, err)
		}
	}
	if _, err := a.task("t1", "done"); err != nil {
		t.Fatalf("the original could not mark t1 done: %v", err)
	}

	if _, err := a.task("t2", "running"); err != nil {
		t.Fatal(err)
	}
	a.en.Close()
	if err := os.Rename(filepath.Join(base, "a"), filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	mv := openClone(t, filepath.Join(base, "moved"))
	if _, err := mv.task("t2", "done"); err != nil {
		t.Fatalf("moved, the project could not mark its own t2 done: %v", err)
	}
}

// TestCopyWithTheOriginalMovedAwayIsAnotherOwner: the project copied (cp -r) and the original
// then moved away: by path alone each looked like the original moved, and both acted under
// its identity. The state directory is its identity's by path and inode, which a move keeps:
// the copy takes an identity of its own, and the original keeps its identity and its claims.
func TestCopyWithTheOriginalMovedAwayIsAnotherOwner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no directory inode here: the identity is bound by path alone")
	}
	bare := gittest.Bare(t)
	base := t.TempDir()
	a := gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	a.en.Close()
	orig, cp := filepath.Join(base, "moved"), filepath.Join(base, "copy")
	if out, err := exec.Command("cp", "-r", filepath.Join(base, "a"), cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if err := os.Rename(filepath.Join(base, "a"), orig); err != nil {
		t.Fatal(err)
	}
	c := openClone(t, cp)
	for _, status := range []string{"done", "running"} {
		if _, err := c.task("t1", status); err == nil || !strings.Contains(err.Error(), "another machine") {
			t.Errorf("the copy set t1 %s: %v; want it refused as held on another machine", status, err)
		}
	}
	mv := openClone(t, orig)
	if _, err := mv.task("t1", "done"); err != nil {
		t.Errorf("moved, the original could not mark its own t1 done: %v", err)
	}
}

// TestOriginalMovedAwayAndCopiedBack: the project moved away and a copy of it put back where
// it was (mv a a.bak; cp -r a.bak a): the copy has the path the identity was bound to, the
// original its inode, so each looked like that directory (the copy as if remounted), and both
// acted under one identity. The one moved away finds its old path holding its identity and
// takes one of its own, whichever opens first: the copy, where the work goes on, keeps the
// identity and its claims.
func TestOriginalMovedAwayAndCopiedBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no directory inode here: the identity is bound by path alone")
	}
	for _, movedFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("moved-first-%v", movedFirst), func(t *testing.T) {
			bare := gittest.Bare(t)
			base := t.TempDir()
			at, bak := filepath.Join(base, "a"), filepath.Join(base, "a.bak")
			a := gitClone(t, "file://"+bare, at)
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			a.en.Close()
			if err := os.Rename(at, bak); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-r", bak, at).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			moved, cp := openClone(t, bak), openClone(t, at)
			order := []*clone{moved, cp}
			if !movedFirst {
				order = []*clone{cp, moved}
			}
			var said []string
			for _, c := range order { // each takes its identity before either acts
				said = append(said, c.sync()...)
			}
			if len(said) != 1 || !strings.HasPrefix(said[0], "this state directory was moved from ") ||
				!strings.Contains(said[0], ", and a copy of it there holds its claims identity") {
				t.Errorf("the syncs said %q; want one notice: the one moved away was moved, and a copy holds its identity", said)
			}
			for _, status := range []string{"done", "running"} {
				if _, err := moved.task("t1", status); err == nil || !strings.Contains(err.Error(), "another machine") {
					t.Errorf("moved away, set t1 %s: %v; want it refused as held on another machine", status, err)
				}
			}
			if _, err := cp.task("t1", "done"); err != nil {
				t.Errorf("the copy at the project's path could not mark t1 done: %v", err)
			}
		})
	}
}

// TestStateFromAnotherHostAtTheSamePath: a state directory whose identity was made on another
// host, bound to this very path (the project copied to this machine at the same path), acted
// under the other machine's identity. With another inode than the one recorded it is a copy;
// with the same, it is the directory the identity was made in, on a host since renamed, and
// keeps it.
func TestStateFromAnotherHostAtTheSamePath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		copied bool
	}{{"copied", true}, {"host renamed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			bare := gittest.Bare(t)
			a := gitClone(t, "file://"+bare, filepath.Join(t.TempDir(), "a"))
			ino := claimsync.DirIno(a.opt.StateDir)
			if ino == 0 {
				t.Skip("no directory inode here: the identity is bound by path alone")
			}
			if tc.copied {
				ino = claimsync.DirIno(t.TempDir())
			}
			other := claim.New(mustGit(t, a.opt.Root), "wf-1", "sam@elsewhere#abc123", time.Hour, time.Now)
			if _, err := other.TryClaim(context.Background(), "t1"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil {
				t.Fatal(err)
			}
			doc, _ := json.Marshal(map[string]any{"owner": "sam@elsewhere#abc123", "dir": a.opt.StateDir, "dir_inode": ino})
			if err := os.WriteFile(filepath.Join(a.opt.StateDir, "claims.json"), doc, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := a.task("t1", "done")
			if tc.copied && (err == nil || !strings.Contains(err.Error(), "another machine")) {
				t.Errorf("done on a task the other host's identity holds: %v; want it refused as held on another machine", err)
			}
			if !tc.copied && err != nil {
				t.Errorf("done on a task this directory's identity holds, its host renamed: %v", err)
			}
		})
	}
}

// twoClones is machines a and b sharing one bare repository over file://, and reach, which
// takes a's remote out of reach (false) and back (true).
func twoClones(t *testing.T) (a, b *clone, reach func(on bool)) {
	bare := gittest.Bare(t)
	base := t.TempDir()
	a, b = gitClone(t, "file://"+bare, filepath.Join(base, "a")), gitClone(t, "file://"+bare, filepath.Join(base, "b"))
	return a, b, func(on bool) {
		url := "file://" + bare
		if !on {
			url += ".gone"
		}
		if out, err := exec.Command("git", "-C", filepath.Join(base, "a"), "remote", "set-url", "origin", url).CombinedOutput(); err != nil {
			t.Fatalf("git remote set-url: %v\n%s", err, out)
		}
	}
}

// TestOfflineDoneOfAnUnconfirmedClaimIsRefused: offline, a task set running here while the
// remote was out of reach (its claim never confirmed) cannot be marked done: another machine
// may hold it, as B does here, and done is final, so pushed at the next sync it would end B's
// task over B's work without any claim behind it. Back online, the next sync finds B's claim
// and sets the task back to pending here. Back to pending goes ahead offline.
func TestOfflineDoneOfAnUnconfirmedClaimIsRefused(t *testing.T) {
	a, b, reach := twoClones(t)
	reach(false)
	for _, id := range []string{"t1", "t2"} {
		if res, err := a.task(id, "running"); err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not yet claimed") {
			t.Fatalf("offline, %s running: %v %+v", id, err, res)
		}
	}
	if _, err := b.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	doneRefused(t, a, "t1", "offline, done on a task whose claim was never confirmed", "nothing was changed")
	if _, err := a.task("t2", "pending"); err != nil {
		t.Fatalf("offline, t2 back to pending (not final): %v", err)
	}
	reach(true)
	notes := a.sync()
	if len(notes) != 1 || !strings.Contains(notes[0], "task t1 was set running here offline, but") {
		t.Fatalf("back online, the sync said %q; want t1 found held by B", notes)
	}
	if got := taskStatus(t, a, "t1"); got != "pending" {
		t.Fatalf("t1 is %s here after the sync, want pending", got)
	}
}

// TestStateFromAnotherHostIsAnotherOwner: a state directory whose identity was made on another
// host and bound to a path that is not this one (the project copied to this machine, or its
// state directory committed into a repository and cloned here) is another machine to the
// claims, though nothing is left at that path to compare with: this clone takes an identity
// of its own rather than act under the other machine's.
func TestStateFromAnotherHostIsAnotherOwner(t *testing.T) {
	bare := gittest.Bare(t)
	base := t.TempDir()
	a := gitClone(t, "file://"+bare, filepath.Join(base, "a"))
	other := claim.New(mustGit(t, filepath.Join(base, "a")), "wf-1", "sam@elsewhere#abc123", time.Hour, time.Now)
	if _, err := other.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}); err != nil { // as pulled from there
		t.Fatal(err)
	}
	doc := `{"owner":"sam@elsewhere#abc123","dir":"/home/sam/proj/.claude/cairn"}`
	if err := os.WriteFile(filepath.Join(a.opt.StateDir, "claims.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "done"); err == nil || !strings.Contains(err.Error(), "another machine") {
		t.Fatalf("done on a task the other host's identity holds: %v; want it refused as held on another machine", err)
	}
}

// mustGit is the claims line's git backend for the project at dir.
func mustGit(t *testing.T, dir string) remote.Backend {
	t.Helper()
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin", Layout: gitremote.ClaimRefs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDoneOfATaskNotClaimedHereIsClaimedFirst: a task running here that was never set running
// here (as when another machine's revisions brought it, or sharing was switched on while it
// ran: here the engine sets it running with no claim) asks the remote before it is marked done,
// as setting it running does: done is final, and pushed at the next sync it would end the task
// for a machine holding it, over that machine's work. Online, one B holds is refused and one
// nobody holds is claimed and released, so B may claim it afterwards; offline, it is refused
// with nothing changed.
func TestDoneOfATaskNotClaimedHereIsClaimedFirst(t *testing.T) {
	a, b, reach := twoClones(t)
	for _, id := range []string{"t1", "t2", "t3"} {
		if _, err := a.en.UpdateTask(engine.TaskRequest{ID: id, Status: "running"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	doneRefused(t, a, "t1", "done on a task B holds, not claimed here", "held by", "nothing was changed")

	reach(false)
	doneRefused(t, a, "t2", "offline, done on a task not claimed here", "out of reach", "nothing was changed")

	reach(true)
	if res, err := a.task("t3", "done"); err != nil || len(res.Warnings) != 0 {
		t.Fatalf("online, done on a task nobody holds: %v %+v", err, res)
	}
	if got := taskStatus(t, a, "t3"); got != "done" {
		t.Fatalf("t3 is %s here, want done", got)
	}
	// Released once the done is pushed (TestDoneKeepsTheClaimUntilPushed).
	if _, err := b.task("t3", "running"); err == nil || !strings.Contains(err.Error(), "is held by "+a.owner()) {
		t.Fatalf("A's claim on t3 was released before its done was pushed: %v", err)
	}
}

// doneRefused checks that marking id done on c is refused, the error saying each of says, and
// that the task is still running there.
func doneRefused(t *testing.T, c *clone, id, what string, says ...string) {
	t.Helper()
	_, err := c.task(id, "done")
	for _, want := range says {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want an error saying %q", what, err, want)
		}
	}
	if got := taskStatus(t, c, id); got != "running" {
		t.Fatalf("%s is %s here, want still running", id, got)
	}
}

// TestRunningAgainClaimsNothing: update_task running retried after it landed (the task is
// running here) changes nothing: online it appends no second claim, and offline it keeps the
// time of the claim made offline (a sync told of it decides by that time) and, when this clone
// holds the claim, records no offline claim and says nothing of one not yet confirmed.
func TestRunningAgainClaimsNothing(t *testing.T) {
	doc := func(c *clone) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(c.opt.StateDir, claimsync.Doc+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name          string
		first, second bool // out of reach
	}{{"online", false, false}, {"offline", true, true}, {"online then offline", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{Backend: memremote.New()}
			a := newClone(t, f)
			f.set(tc.first)
			first, err := a.task("t1", "running")
			if err != nil || !first.Changed {
				t.Fatalf("first: %v %+v", err, first)
			}
			line, state := head(t, f.Backend), doc(a)
			a.vars[claimsync.EnvClockSkew] = "1s" // a claim made again would carry a later time
			f.set(tc.second)
			res, err := a.task("t1", "running")
			if err != nil || res.Changed || !strings.Contains(res.Message, "already running") {
				t.Fatalf("again: %v %+v", err, res)
			}
			if !slices.Equal(res.Warnings, first.Warnings) {
				t.Errorf("again: warnings %q, want %q as the first call's", res.Warnings, first.Warnings)
			}
			if got := head(t, f.Backend); got != line {
				t.Errorf("the claims line went from r%d to r%d", line, got)
			}
			if got := doc(a); got != state {
				t.Errorf("the claims state changed:\n%s\nwant\n%s", got, state)
			}
		})
	}
}

// TestDoneAgain: done retried after it landed is no change, even once the remote is out of
// reach and this clone's claim has gone unrenewed past the lease (a done then is refused, as
// the claim may have been taken over; this one was made while it held), or once another
// machine (an older Cairn, which reads the release as any release) claimed the task the done
// released.
func TestDoneAgain(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	for _, status := range []string{"running", "done"} {
		if _, err := a.task("t1", status); err != nil {
			t.Fatal(err)
		}
	}
	a.pushed()
	a.sync() // which releases the claim
	if _, err := b.Append(context.Background(), "wf-1", head(t, b), remote.Slice([]byte(`{"op":"claim","task":"t1","owner":"X","prev":0}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t2", "running"); err != nil { // reads the line, X's claim on it
		t.Fatal(err)
	}
	res, err := a.task("t1", "done")
	if err != nil || res.Changed || !strings.Contains(res.Message, "already done") {
		t.Fatalf("done again: %v %+v; want no change", err, res)
	}
}

func TestDoneAgainOfflineAfterTheLease(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(true)
	first, err := a.task("t1", "done")
	if err != nil || !first.Changed {
		t.Fatalf("done: %v %+v", err, first)
	}
	a.vars[claimsync.EnvClockSkew] = "2m"
	res, err := a.task("t1", "done")
	if err != nil || res.Changed || !strings.Contains(res.Message, "already done") {
		t.Fatalf("done again: %v %+v; want no change", err, res)
	}
}

// TestHolderClockApart: a claim made by a machine whose clock is ahead of this one's was made
// "in the future" by this clock, which is what the refusal says, not "claimed 0s ago"; one made
// by a clock far behind (at 1970) is older than the workflow it is on, so its age is not known,
// and the refusal does not say "claimed 20454d ago". Each said it in a parenthesis within the
// holder's ("X (claimed in the future (clock skew?))"); it is one now.
func TestHolderClockApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clock func() time.Time
		said  string
	}{
		{"ahead", func() time.Time { return time.Now().Add(time.Hour) }, "claimed in the future: clock skew?"},
		{"at 1970", func() time.Time { return time.Unix(1, 0) }, "claimed at an unknown time: clock skew?"},
		{"a year behind", func() time.Time { return time.Now().AddDate(-1, 0, 0) }, "claimed at an unknown time: clock skew?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memremote.New()
			a := newClone(t, mem)
			if _, err := claim.New(mem, "wf-1", "X", time.Hour, tc.clock).TryClaim(context.Background(), "t1"); err != nil {
				t.Fatal(err)
			}
			_, err := a.task("t1", "running")
			if err == nil || !strings.HasPrefix(err.Error(), "task t1 is held by X ("+tc.said+") on another machine, free to take over in ") {
				t.Fatalf("claiming a task X holds with its clock %s: %v", tc.name, err)
			}
		})
	}
}

// TestHugeRecordOnTheLine: a record on the claims line naming a task or an owner no Cairn
// makes (megabytes long, within what a record may hold) is not a claim. Kept with the line it
// made the claims state too large to save, so each call started its lease clocks again and a
// task whose holder stopped renewing could never be taken over.
func TestHugeRecordOnTheLine(t *testing.T) {
	huge := strings.Repeat("x", 2<<20)
	for _, tc := range []struct{ name, task, owner string }{
		{"task", huge, "Y"},
		{"owner", "t3", huge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memremote.New()
			a := newClone(t, mem)
			x, _ := machineX(t, mem)
			data, err := json.Marshal(map[string]any{"op": "claim", "task": tc.task, "owner": tc.owner, "prev": 0})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mem.Append(context.Background(), "wf-1", 0, remote.Slice(data)); err != nil {
				t.Fatal(err)
			}
			if _, err := x.TryClaim(context.Background(), "t2"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.task("t2", "running"); err == nil || !strings.Contains(err.Error(), "task t2 is held by X") {
				t.Fatalf("claiming a task X holds: %v", err)
			}
			a.vars[claimsync.EnvClockSkew] = "2m" // past X's lease, unrenewed
			if _, err := a.task("t2", "running"); err != nil {
				t.Fatalf("taking over a claim left unrenewed past its lease: %v", err)
			}
		})
	}
}

// pushless is a remote whose pushes can be made to fail while it still reads: a push that
// fails halfway through a call.
type pushless struct {
	remote.Backend
	fail atomic.Bool
}

func (p *pushless) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if p.fail.Load() {
		return 0, errors.New("connection reset by peer")
	}
	return p.Backend.Append(ctx, id, after, data)
}

// TestReleaseThatFailedIsSaidAndDoneBySync: a task set back to pending whose claim could not
// then be released is pending, with one warning that says the next sync releases the claim, which it
// does: another machine may claim the task at once after it, not after the lease.
func TestReleaseThatFailedIsSaidAndDoneBySync(t *testing.T) {
	p := &pushless{Backend: memremote.New()}
	a := newClone(t, p)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	p.fail.Store(true)
	res, err := a.task("t1", "pending")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task t1's claim could not be released on origin (it could not be reached): the next sync releases it"}
	if !slices.Equal(res.Warnings, want) {
		t.Fatalf("warnings %q, want %q", res.Warnings, want)
	}
	p.fail.Store(false)
	a.sync()
	if _, err := claim.New(p, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatalf("claiming t1 after the sync: %v", err)
	}
}

// interrupting is a remote whose next read (or, with onAppend, push) is interrupted by Ctrl-C:
// it ends the call's context and fails with its error, as git killed by it does.
type interrupting struct {
	remote.Backend
	mu       sync.Mutex
	cancel   context.CancelFunc
	onAppend bool
}

func (i *interrupting) interrupt(ctx context.Context, push bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.cancel == nil || push != i.onAppend {
		return nil
	}
	i.cancel()
	i.cancel = nil
	return fmt.Errorf("git fetch: %w", ctx.Err())
}

func (i *interrupting) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	if err := i.interrupt(ctx, false); err != nil {
		return nil, err
	}
	return i.Backend.Since(ctx, id, rev)
}

func (i *interrupting) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if err := i.interrupt(ctx, true); err != nil {
		return 0, err
	}
	return i.Backend.Append(ctx, id, after, data)
}

// TestInterruptedTaskOutOfRunning: a task call out of running interrupted (Ctrl-C) before the
// remote answered changes nothing and says so, as setting one running does: it went ahead as
// if out of reach (a done recorded after Ctrl-C), or refused the done as "out of reach". One
// interrupted after the change, as its claim is released, says so, not that the remote could
// not be reached, and the next sync releases it.
func TestInterruptedTaskOutOfRunning(t *testing.T) {
	for _, tc := range []struct {
		name, to string
		unheld   bool // running here without a claim (a sync brought it): done claims it first
		onAppend bool
		want     string // the task's status after
		says     string
	}{
		{"pending", "pending", false, false, "running", "interrupted: task t1 was not changed"},
		{"done", "done", false, false, "running", "interrupted: task t1 was not changed"},
		{"done unheld", "done", true, false, "running", "interrupted: task t1 was not changed"},
		{"release", "pending", false, true, "pending", "task t1's claim could not be released on origin (interrupted): the next sync releases it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := &interrupting{Backend: memremote.New(), onAppend: tc.onAppend}
			a := newClone(t, i)
			a.vars[claimsync.EnvLease] = "1h"
			var err error
			if tc.unheld {
				_, err = a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"})
			} else {
				_, err = a.task("t1", "running")
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			i.mu.Lock()
			i.cancel = cancel
			i.mu.Unlock()
			res, err := claimsync.Task(ctx, a.opt, "t1", tc.to, func(bool) (*engine.Result, error) {
				return a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: tc.to})
			})
			said := fmt.Sprint(err)
			if res != nil {
				said = strings.Join(res.Warnings, "; ")
			}
			if said != tc.says {
				t.Errorf("interrupted, setting t1 %s said %q; want %q", tc.to, said, tc.says)
			}
			if got := taskStatus(t, a, "t1"); got != tc.want {
				t.Fatalf("interrupted, setting t1 %s left it %s; want %s", tc.to, got, tc.want)
			}
			if tc.want == "pending" {
				a.sync()
				if _, err := claim.New(i, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
					t.Fatalf("claiming t1 after the sync: %v", err)
				}
			}
		})
	}
}

// TestRenewalByTheClaimsLease: a claim is renewed by the lease it carries when this call's is
// longer (the claim made by the agent's server, the sync run from a shell set to a longer
// lease): other machines take it over after the lease it carries, so a renewal that waited for
// a quarter of the longer one came after they could.
func TestRenewalByTheClaimsLease(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	a.vars[claimsync.EnvLease] = "8h"
	a.vars[claimsync.EnvClockSkew] = "20m"
	a.sync()
	if got := head(t, b); got != 2 {
		t.Fatalf("after a sync a third of its claim's lease on, the line is at r%d, want r2 (renewed)", got)
	}
}

// TestReplacedWorkflowsClaimsAreReleased: the claims this clone held on a workflow it then
// replaced with another are released by its next claims call, sync or task: its tasks are no
// longer worked on here, and another machine that goes on with that workflow would otherwise
// be refused them for a lease.
func TestReplacedWorkflowsClaimsAreReleased(t *testing.T) {
	for _, next := range []string{"sync", "task"} {
		t.Run(next, func(t *testing.T) {
			b := memremote.New()
			a := newClone(t, b)
			a.vars[claimsync.EnvLease] = "1h"
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "other", WorkflowID: "wf-2", Replace: true}); err != nil {
				t.Fatal(err)
			}
			if next == "sync" {
				a.sync()
			} else if _, err := a.task("u1", "running"); err != nil {
				t.Fatal(err)
			}
			if _, err := claim.New(b, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
				t.Fatalf("claiming t1 of the workflow the holder replaced: %v", err)
			}
		})
	}
}

// TestReplacedOfflineWorkflowsClaimsAreReleased: the claims this clone held on a workflow it
// replaced while the remote was out of reach are released once it is back, by the next sync,
// however many calls on the new workflow came in between: a machine going on with the
// replaced one would otherwise be refused those tasks for a lease.
func TestReplacedOfflineWorkflowsClaimsAreReleased(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(true)
	if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "other", WorkflowID: "wf-2", Replace: true}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"u1", "u2"} {
		if _, err := a.task(task, "running"); err != nil {
			t.Fatal(err)
		}
	}
	f.set(false)
	a.sync()
	if _, err := claim.New(f, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatalf("claiming t1 of the workflow the holder replaced offline: %v", err)
	}
}

// TestReplacedWorkflowsClaimsWaitOutOfReach: out of reach, the claims left on a replaced
// workflow are not tried again by a call that already found the remote out of reach, nor by a
// task call that asks nothing of it: each try waits as long (git's 20 s against a host that
// never answers), after every task call and before every sync. The sync that reaches it
// releases them.
func TestReplacedWorkflowsClaimsWaitOutOfReach(t *testing.T) {
	f := &flaky{Backend: memremote.New()}
	a := newClone(t, f)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	f.set(true)
	if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "other", WorkflowID: "wf-2", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("u1", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := claimsync.Sync(context.Background(), a.opt, nil); err == nil {
		t.Fatal("a sync out of reach reported no error")
	}
	if got := f.missed["wf-1"]; got != 0 {
		t.Fatalf("out of reach, a task call and a sync tried the replaced workflow's claims %d times after their own call failed; want 0", got)
	}
	if _, err := a.task("u2", "pending"); err != nil { // asks nothing of the remote
		t.Fatal(err)
	}
	if got := f.missed["wf-1"]; got != 0 {
		t.Fatalf("a call that asked nothing of the remote tried the replaced workflow's claims %d times; want 0: a sync tries them", got)
	}
	f.set(false)
	a.sync()
	if _, err := claim.New(f, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
		t.Fatalf("claiming t1 of the workflow the holder replaced offline: %v", err)
	}
}

// TestEndedWorkflowsClaimsAreReleased: the claims this clone held on a workflow that then
// ended here (archived, or completed with a task done and not yet pushed), with no workflow
// started after it, are released by its next sync: nothing is worked on here any more, and a
// machine that goes on with that workflow was refused its tasks for a lease, the released
// claims being kept only while a workflow was active here.
func TestEndedWorkflowsClaimsAreReleased(t *testing.T) {
	for _, end := range []string{"archive", "complete"} {
		t.Run(end, func(t *testing.T) {
			b := &flaky{Backend: memremote.New()}
			a := newClone(t, b)
			a.vars[claimsync.EnvLease] = "1h"
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			var err error
			if end == "archive" {
				_, err = a.en.Archive("given up")
			} else if _, err = a.task("t1", "done"); err == nil {
				_, err = a.en.CompleteByPerson("all done")
			}
			if err != nil {
				t.Fatal(err)
			}
			// Out of reach, the release waits for the next sync, and the workflow's own sync
			// goes on (a notice, not an error).
			b.set(true)
			_, err = claimsync.Sync(context.Background(), a.opt, nil)
			if _, ok := errors.AsType[*claimsync.NoticeError](err); !ok {
				t.Fatalf("a sync out of reach: %v; want a *NoticeError", err)
			}
			b.set(false)
			if notes := a.sync(); len(notes) != 0 {
				t.Fatalf("sync: %v", notes)
			}
			if _, err := claim.New(b, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
				t.Fatalf("claiming t1 of the workflow that ended on its holder: %v", err)
			}
			if notes := a.sync(); len(notes) != 0 { // nothing of its own left: no network, no word
				t.Fatalf("the sync after: %v", notes)
			}
		})
	}
}

// TestEndedWorkflowsReleaseLeavesOneStartedSince: a sync that found no workflow active, and
// so releases the claims of the one that ended here, leaves the claims alone when a workflow was
// started and a task claimed in it by another process of this clone (cairn-mcp, cairn task)
// before the release read the claims state: they are that workflow's, running here.
func TestEndedWorkflowsReleaseLeavesOneStartedSince(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	a.vars[claimsync.EnvLease] = "1h"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	if err := claimsync.ReleaseEnded(context.Background(), a.opt); err != nil {
		t.Fatal(err)
	}
	if _, err := claim.New(b, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("another machine could claim t1, running here: %v", err)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("sync: %v", notes)
	}
}

// TestInvalidTaskIDIsNotPushed: a task id update_task refuses (not one short line) is refused
// before anything is pushed, as a secret-shaped one is: every machine reads the claims line.
func TestInvalidTaskIDIsNotPushed(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	for _, id := range []string{strings.Repeat("x", 200), "a\tb"} {
		if _, err := a.task(id, "running"); err == nil || !strings.Contains(err.Error(), "the task id is ") {
			t.Fatalf("setting task %q running: %v", id, err)
		}
	}
	if got := head(t, b); got != 0 {
		t.Fatalf("the claims line is at r%d, want r0: nothing pushed", got)
	}
}

// TestRefusedTaskIsNotClaimed: a change update_task refuses (a new id that would read as
// another, a case twin of a task on record, a done task set running again) pushes nothing to
// the claims line, which every machine reads: it claimed the look-alike id there, then
// released it.
func TestRefusedTaskIsNotClaimed(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	for _, step := range [][2]string{{"t1", "running"}, {"t2", "running"}, {"t2", "done"}} {
		if _, err := a.task(step[0], step[1]); err != nil {
			t.Fatal(err)
		}
	}
	before := head(t, b)
	for _, tc := range []struct{ id, says string }{
		{"t1\u200b", "control or invisible"},
		{"t\u202e3", "control or invisible"},
		{"T1", "differs only in letter case"},
		{"t\u04351", "mixes Latin, Cyrillic or Greek"}, // t, a Cyrillic е, 1: reads as "te1"
		{"t2", "cannot go from done to running"},
	} {
		if _, err := a.task(tc.id, "running"); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("setting %q running: %v", tc.id, err)
		}
	}
	if got := head(t, b); got != before {
		t.Fatalf("the claims line went from r%d to r%d, want nothing pushed", before, got)
	}
}

// TestDoneOfARecoveredTaskAsksTheRemote: a task recovery put back to pending (its session
// ended while it ran) may be reported done, its run's work finished. Its claim released by a
// sync meanwhile, another machine may hold it since, unseen here: done is final, so it asks the
// remote, as the done of a task running here unclaimed does. Online one X holds is refused;
// offline it is refused with nothing changed.
func TestDoneOfARecoveredTaskAsksTheRemote(t *testing.T) {
	for _, offline := range []bool{false, true} {
		t.Run(fmt.Sprint("offline=", offline), func(t *testing.T) {
			f := &flaky{Backend: memremote.New()}
			a := newClone(t, f)
			a.vars[claimsync.EnvLease] = "1h"
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			a.en.Resume(engine.ResumeOptions{Apply: true}) // its session ended: t1 back to pending
			a.sync()                                       // which releases its claim
			if _, err := claim.New(f, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
				t.Fatal(err)
			}
			want := "task t1 is held by X"
			if offline {
				f.set(true)
				want = "out of reach"
			}
			if _, err := a.task("t1", "done"); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("done of a recovered task X holds: %v, want an error saying %q", err, want)
			}
			if got := taskStatus(t, a, "t1"); got != "pending" {
				t.Fatalf("t1 is %s here, want still pending", got)
			}
		})
	}
}

// TestTakeoverReadByATaskCallIsSaid: a claim of this clone's taken over by another machine is
// said once, by the call that reads the takeover first, a task call on another task too: that
// call saved the line, and the sync, finding it no longer this clone's, said nothing, while the
// task went on running here beside its new holder.
func TestTakeoverReadByATaskCallIsSaid(t *testing.T) {
	b := memremote.New()
	a := newClone(t, b)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, later := machineX(t, b)
	later() // X has watched A's claim for longer than its lease
	if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	res, err := a.task("t2", "running")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "task t1, running here, is now held by X (claimed ") {
		t.Fatalf("warnings %q, want one saying X now holds t1", res.Warnings)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the sync after said again %q", notes)
	}
}

// TestTakeoverReadByARenewalIsSaid: a claim taken over just after the sync read the line, read
// by the renewal's own read, is said by that sync, as one its first read found.
func TestTakeoverReadByARenewalIsSaid(t *testing.T) {
	h := &hooked{Backend: memremote.New()}
	a := newClone(t, h)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, later := machineX(t, h)
	later()
	h.arm(func() { // the sync's first read: X takes t1 over before the renewal reads the line
		h.arm(func() {
			if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
				t.Error(err)
			}
		})
	})
	a.vars[claimsync.EnvClockSkew] = "20s" // past a quarter of the lease: the sync renews
	notes := a.sync()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "task t1, running here, is now held by X") {
		t.Fatalf("notes %q, want one saying X now holds t1", notes)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the next sync said again %q", notes)
	}
}

// TestInvalidStatusIsUpdateTasksRefusal: a status update_task refuses is refused for that,
// before the claims are asked: for a task another machine holds it was refused as held, which
// sent the agent to another task over a typo.
func TestInvalidStatusIsUpdateTasksRefusal(t *testing.T) {
	b := offlineBesideAHolder(t) // b read a's claim of t1
	if _, err := b.task("t1", "complete"); err == nil || !strings.Contains(err.Error(), `status "complete" is not valid`) {
		t.Fatalf("an invalid status for a task another machine holds: %v", err)
	}
}

// refusing is a host that takes no claims ref (an update hook there refuses it).
type refusing struct{ remote.Backend }

func (r refusing) Append(context.Context, string, int64, remote.Data) (int64, error) {
	return 0, &gitremote.RefusedError{Ref: "refs/cairn/claims/wf-1", Reason: "hook declined"}
}

// TestClaimsStepsNameTheTool: the claims texts the model reads in update_task's result and in
// the sync notices of its next tool result give it a step it can take, in its tool's name, or
// one it asks the user for; before, it read "(cairn doctor checks the host)", a command of the
// person's, and "set it pending or pick another task", which named no tool and which
// update_task refuses while the other machine holds the task. The person's words are the
// CLI's (cli.shellSteps).
func TestClaimsStepsNameTheTool(t *testing.T) {
	a := newClone(t, refusing{memremote.New()})
	res, err := a.task("t1", "running")
	if want := "task t1 is running here unclaimed: origin refuses the claims ref; ask the user to run `cairn doctor`, which says what the host must allow"; err != nil || !slices.Contains(res.Warnings, want) {
		t.Errorf("host refusing claims: %v %q\nwant %q", err, res.Warnings, want)
	}

	f := &flaky{Backend: memremote.New()}
	b := newClone(t, f)
	f.set(true)
	if _, err := b.task("t2", "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := claim.New(f.Backend, "wf-1", "X", time.Hour, time.Now).TryClaim(context.Background(), "t2"); err != nil {
		t.Fatal(err)
	}
	f.set(false)
	notes, err := claimsync.Sync(context.Background(), b.opt, func(string, string) error { return errors.New("the server is stopping") })
	const step = "save_checkpoint keeps the data, then pick another task"
	want := "task t2 was set running here offline, but X (claimed just now) holds it: it is still running here; " + step
	if err != nil || len(notes) != 1 || notes[0] != want {
		t.Fatalf("revert failed: %v %q\nwant %q", err, notes, want)
	}
	// The same step as update_task's refusal to set it pending while X holds it.
	if _, err := b.task("t2", "pending"); err == nil || !strings.HasSuffix(err.Error(), step) {
		t.Fatalf("update_task with status pending: %v", err)
	}
}

// TestTakenOverAndReleasedIsSaid: a claim left unrenewed past its lease, taken over by another
// machine that then released it (its task done there), is said by the holder's next sync,
// which no longer claims the task again as it does one gone from a line deleted on the host:
// it claimed it again without a word, and went on marking it done or failed as its own.
func TestTakenOverAndReleasedIsSaid(t *testing.T) {
	a, mem := takenAndReleased(t)
	before := head(t, mem)
	notes := a.sync()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "task t1 was taken over by X (claimed ") ||
		!strings.Contains(notes[0], "which has released it since") {
		t.Fatalf("the sync said %q", notes)
	}
	if got := head(t, mem); got != before {
		t.Fatalf("the sync appended %d records, want none: t1 is not this machine's to claim again unsaid", got-before)
	}
}

// takenAndReleased is a clone whose claim of t1, running there, X took over past its lease and
// released.
func takenAndReleased(t *testing.T) (*clone, *memremote.Backend) {
	t.Helper()
	mem := memremote.New()
	a := newClone(t, mem)
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, later := machineX(t, mem)
	later()
	fence, err := x.TryClaim(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Release(context.Background(), "t1", fence); err != nil {
		t.Fatal(err)
	}
	return a, mem
}

// TestTakenOverAndReleasedIsSaidByATaskCall: the task call that reads it says it too, as it
// goes ahead: the task is no longer any machine's.
func TestTakenOverAndReleasedIsSaidByATaskCall(t *testing.T) {
	a, _ := takenAndReleased(t)
	res, err := a.task("t1", "failed")
	if err != nil || len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "task t1 was taken over by X (claimed ") {
		t.Fatalf("t1 failed: %v %+v", err, res)
	}
}

// TestTakenOverAndReleasedIsSaidByACallOnAnotherTask: a task call about another task that reads
// it says it, as it says one taken over and still held there: the line it saves no longer has
// the claim, so no later call would.
func TestTakenOverAndReleasedIsSaidByACallOnAnotherTask(t *testing.T) {
	a, _ := takenAndReleased(t)
	res, err := a.task("t2", "running")
	if err != nil || len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "task t1 was taken over by X (claimed ") {
		t.Fatalf("t2 running: %v %+v", err, res)
	}
	if notes := a.sync(); len(notes) != 0 {
		t.Fatalf("the next sync said %q, want nothing: said once", notes)
	}
}

// appendHook is a remote that runs a hook once, before the next append: another machine
// acting between a call's read of the line and its append.
type appendHook struct {
	remote.Backend
	hook func()
}

func (h *appendHook) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if f := h.hook; f != nil {
		h.hook = nil
		f()
	}
	return h.Backend.Append(ctx, id, after, data)
}

// TestTakenOverAsItIsReleased: a task set back to pending here whose claim another machine took over
// (this one's lapsed there) between the call's read of the line and the release is said taken
// over by that machine; it was said not reached, with "the next sync releases it", which no
// sync does: the claim is that machine's.
func TestTakenOverAsItIsReleased(t *testing.T) {
	mem := memremote.New()
	h := &appendHook{Backend: mem}
	a := newClone(t, h)
	a.vars[claimsync.EnvLease] = "1m"
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	x, twoMinutesLater := machineX(t, mem)
	twoMinutesLater()
	h.hook = func() {
		if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
			t.Errorf("X taking t1 over: %v", err)
		}
	}
	res, err := a.task("t1", "pending")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "task t1 was taken over by X (claimed ") ||
		strings.Contains(res.Warnings[0], "the next sync releases it") {
		t.Fatalf("warnings %q, want t1 said taken over by X", res.Warnings)
	}
}

// TestStateCopiedFromAnotherHostStartsItsLeaseClocksAgain: a state directory copied from
// another host (the project synced over, claims.json with it) kept the times that host's clock
// saw each claim, and this machine counted the lease from them on its own clock: with the
// clocks hours apart, a claim renewed a moment ago read as lapsed, and the copy took it over
// from its live holder on its first call. The copy is a new machine to the claims, and starts
// its lease clocks as one, at its first read.
func TestStateCopiedFromAnotherHostStartsItsLeaseClocksAgain(t *testing.T) {
	mem := memremote.New()
	a := newClone(t, mem)
	x, _ := machineX(t, mem)
	if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "task t1 is held by X") {
		t.Fatalf("claiming a task X holds: %v", err)
	}
	file := filepath.Join(a.opt.StateDir, "claims.json")
	var doc map[string]any
	if b, err := os.ReadFile(file); err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("claims.json: %v", err)
	}
	doc["owner"], doc["dir"] = "sam@elsewhere#abc123", "/elsewhere/proj/.claude/cairn"
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a.vars[claimsync.EnvClockSkew] = "2h" // this host's clock, two hours ahead of the other's
	if _, err := a.task("t1", "running"); err == nil || !strings.Contains(err.Error(), "task t1 is held by X") {
		t.Fatalf("the copy claiming a task X holds, renewed a moment ago: %v", err)
	}
}

// TestNoStateDirectoryMakesNone: a task change or a sync in a project with no state directory
// finds no sharing (there is none to find) and makes no directory: the look for sharing is a
// read, and the caller's refusal ("no active workflow") leaves nothing behind.
func TestNoStateDirectoryMakesNone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude", "cairn")
	o := claimsync.Options{StateDir: dir, Root: filepath.Dir(filepath.Dir(dir)), Getenv: func(string) string { return "" }}
	refused := errors.New("no active workflow")
	if _, err := claimsync.Task(context.Background(), o, "t1", "running", func(bool) (*engine.Result, error) { return nil, refused }); !errors.Is(err, refused) {
		t.Fatalf("Task: %v, want the update's refusal", err)
	}
	if _, err := claimsync.Sync(context.Background(), o, func(string, string) error { return nil }); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the look for sharing made %s (%v)", filepath.Dir(dir), err)
	}
}

// TestReleaseOnALineWipedMeanwhile: while update_task set a task this clone held back to
// pending, the claims line was deleted on the host (the claim went with it: nothing to
// release), or another machine took the claim over and released it; the model was told
// origin "could not be reached" and that the next sync releases it. It is told nothing now,
// or that the task was taken over.
func TestReleaseOnALineWipedMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // "" : no warning
	}{
		{"wiped", ""},
		{"taken over and released", "task t1 was taken over by X"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &swappable{Backend: memremote.New()}
			a := newClone(t, s)
			if _, err := a.task("t1", "running"); err != nil {
				t.Fatal(err)
			}
			var off time.Duration
			other := claim.New(s, "wf-1", "X", time.Hour, func() time.Time { return time.Now().Add(off) })
			if err := other.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := claimsync.Task(context.Background(), a.opt, "t1", "pending", func(rerun bool) (*engine.Result, error) {
				// after the call read the line, before the release
				if tc.want == "" {
					s.wipe()
				} else {
					off = 2 * time.Hour
					fence, err := other.TryClaim(context.Background(), "t1")
					if err != nil {
						t.Fatal(err)
					}
					if err := other.Release(context.Background(), "t1", fence); err != nil {
						t.Fatal(err)
					}
				}
				return a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "pending", Rerun: rerun})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.Warnings, "\n"); tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) || strings.Contains(got, "reached") {
				t.Fatalf("setting t1 back to pending: warnings %q, want %q", got, tc.want)
			}
			if _, err := claim.New(s, "wf-1", "Y", time.Hour, time.Now).TryClaim(context.Background(), "t1"); err != nil {
				t.Fatalf("another machine could not claim t1: %v", err)
			}
		})
	}
}
