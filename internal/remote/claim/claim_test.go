package claim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimtest"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestOneOwnerPerTask: 100 tasks, 10 machines whose clocks are up to an hour apart, each
// claiming every task in its own seeded order, over 100 seeds on the in-memory remote.
func TestOneOwnerPerTask(t *testing.T) {
	for seed := range uint64(100) {
		b := memremote.New()
		claimtest.Race(t, seed, 100, 10, func(int) remote.Backend { return b })
	}
}

// clock is a machine's clock: a shared fake time plus the machine's offset.
type clock struct {
	mu   *sync.Mutex
	base *time.Time
	off  time.Duration
}

func (c clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(c.off)
}

// TestLeaseAndFencing plays one story with machine B's clock 0 and ±1 h from A's, and checks
// each step's outcome is the same: the lease counts only time B has watched the claim.
func TestLeaseAndFencing(t *testing.T) {
	const lease = time.Minute
	var transcripts []string
	for _, off := range []time.Duration{0, time.Hour, -time.Hour} {
		t.Run(fmt.Sprintf("offset%+v", off), func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
			b := memremote.New()
			a := claim.New(b, "claims", "A", lease, clock{&mu, &base, 0}.now)
			m := claim.New(b, "claims", "B", lease, clock{&mu, &base, off}.now)
			var log []string
			step := func(name string, rev int64, err error) {
				var he *claim.HeldError
				switch {
				case errors.As(err, &he):
					log = append(log, fmt.Sprintf("%s: held by %s r%d", name, he.Holder.Owner, he.Holder.Rev))
				case err != nil:
					log = append(log, fmt.Sprintf("%s: %v", name, err))
				default:
					log = append(log, fmt.Sprintf("%s: r%d", name, rev))
				}
			}
			fa, err := a.TryClaim(ctx, "t1")
			step("A claims", fa, err)
			rev, err := m.TryClaim(ctx, "t1")
			step("B claims at once", rev, err)
			advance(lease - time.Second)
			rev, err = m.TryClaim(ctx, "t1")
			step("B claims before the lease ends", rev, err)
			step("A renews", fa, a.Renew(ctx, "t1", fa))
			m.Refresh(ctx) // B watches the line (as the MCP server's sync does) and sees the renewal now
			advance(lease - time.Second)
			rev, err = m.TryClaim(ctx, "t1")
			step("B claims within the renewed lease", rev, err)
			advance(2 * time.Second)
			fb, err := m.TryClaim(ctx, "t1")
			step("B takes over after the lease", fb, err)
			a.Refresh(ctx)
			step("A's old token", 0, a.Valid("t1", fa))
			step("A renews with its old token", 0, a.Renew(ctx, "t1", fa))
			rev, err = a.TryClaim(ctx, "t1")
			step("A claims again", rev, err)
			step("B's token", 0, m.Valid("t1", fb))
			transcripts = append(transcripts, strings.Join(log, "\n"))
			want := []string{
				"A claims: r1",
				"B claims at once: held by A r1",
				"B claims before the lease ends: held by A r1",
				"A renews: r1",
				"B claims within the renewed lease: held by A r1",
				"B takes over after the lease: r3",
				"A's old token: " + claim.ErrFenced.Error(),
				"A renews with its old token: " + claim.ErrFenced.Error(),
				"A claims again: held by B r3",
				"B's token: r0",
			}
			if got := strings.Join(log, "\n"); got != strings.Join(want, "\n") {
				t.Fatalf("story:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
	for i := 1; i < len(transcripts); i++ {
		if transcripts[i] != transcripts[0] {
			t.Fatalf("a clock offset changed the outcome:\n%s\nvs\n%s", transcripts[i], transcripts[0])
		}
	}
}

// TestForeignRecordsIgnored: records that are not claims, and claims that do not name the
// current claim, change nothing, the same on every machine.
func TestForeignRecordsIgnored(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	now := func() time.Time { return time.Unix(0, 0) }
	a := claim.New(b, "claims", "A", time.Hour, now)
	fa, err := a.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{`not json`, `{"op":"claim","task":"t1","owner":"X","prev":0}`,
		`{"op":"claim","task":"t1","owner":"X","prev":7}`, `{"op":"renew","task":"t1","owner":"X","prev":1}`, `{}`} {
		h, _ := b.Heads(ctx)
		if _, err := b.Append(ctx, "claims", h["claims"], remote.Slice([]byte(junk))); err != nil {
			t.Fatal(err)
		}
	}
	fresh := claim.New(b, "claims", "C", time.Hour, now)
	if err := fresh.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fresh.Holders(); len(got) != 1 || got["t1"].Owner != "A" || got["t1"].Rev != fa {
		t.Fatalf("holders after junk = %v, want t1 held by A at r%d", got, fa)
	}
}

// TestReleaseAndRestore: a released task is free at once (no lease to wait); a release under a
// token that was taken over is refused; a Claimer restored from another's State keeps its lease
// clock, so a command that starts again need not wait a whole new lease.
func TestReleaseAndRestore(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	now := clock{&mu, &base, 0}.now
	advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
	b := memremote.New()
	a := claim.New(b, "claims", "A", time.Minute, now)
	m := claim.New(b, "claims", "B", time.Minute, now)
	fa, err := a.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("B claiming a held task: %v, want ErrHeld", err)
	}
	if err := a.Release(ctx, "t1", fa); err != nil {
		t.Fatalf("A releasing its claim: %v", err)
	}
	fb, err := m.TryClaim(ctx, "t1")
	if err != nil || fb != fa+2 {
		t.Fatalf("B claiming a released task: r%d %v, want r%d at once", fb, err, fa+2)
	}
	if err := a.Release(ctx, "t1", fa); !errors.Is(err, claim.ErrFenced) {
		t.Fatalf("A releasing a claim that is no longer the task's: %v, want ErrFenced", err)
	}
	if h := m.Holders()["t1"]; h.Owner != "B" || h.Rev != fb || !h.At.Equal(base) {
		t.Fatalf("holder = %+v, want B at r%d claimed at %v", h, fb, base)
	}

	// C watched B's claim for most of a lease, then its process ended; C2 carries on.
	c := claim.New(b, "claims", "C", time.Minute, now)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute - time.Second)
	saved := c.State()
	c2 := claim.New(b, "claims", "C", time.Minute, now)
	c2.Restore(saved)
	if got := c2.Stale("t1"); got != time.Minute-time.Second {
		t.Fatalf("restored Stale = %v, want the saved watch of %v", got, time.Minute-time.Second)
	}
	advance(2 * time.Second)
	if _, err := c2.TryClaim(ctx, "t1"); err != nil {
		t.Fatalf("C2 taking over after the lease counted across the restart: %v", err)
	}
	fresh := claim.New(b, "claims", "D", time.Minute, now)
	if _, err := fresh.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("a machine that has just started took a claim over: %v", err)
	}
}

// down is a backend that cannot be reached.
type down struct {
	remote.Backend
	reads int
	// cancel, if set, is called at the third read.
	cancel func()
}

func (d *down) Since(context.Context, string, int64) ([]remote.Record, error) {
	d.reads++
	if d.reads == 3 && d.cancel != nil {
		d.cancel()
	}
	return nil, errors.New("connection refused")
}

// TestTryClaimOffline: TryClaim gives up at the first failed read (nothing was appended, so
// nothing is unknown); claimtest.Claim, which the races on a faulty network use, keeps trying
// until its context ends (at its third read here, not at a time: a loaded machine may read
// less often).
func TestTryClaimOffline(t *testing.T) {
	d := &down{Backend: memremote.New()}
	c := claim.New(d, "claims", "A", time.Minute, time.Now)
	if _, err := c.TryClaim(context.Background(), "t1"); err == nil || d.reads != 1 {
		t.Fatalf("TryClaim offline: %v after %d reads, want an error after 1", err, d.reads)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.reads, d.cancel = 0, cancel
	if _, err := claimtest.Claim(ctx, c, "t1"); err == nil || d.reads != 3 {
		t.Fatalf("claimtest.Claim offline: %v after %d reads, want retries until the context ends at the third", err, d.reads)
	}
}

// TestLineRewound: a Claimer restored from a State read further than the remote now holds (the
// claims line was deleted on the host) reads the line again rather than failing for good.
func TestLineRewound(t *testing.T) {
	ctx := context.Background()
	c := claim.New(memremote.New(), "claims", "A", time.Minute, time.Now)
	// B's claim was seen an hour ago, past the lease: A takes it over, and finds the line rewound.
	c.Restore(claim.State{Head: 7, Holders: map[string]claim.Holder{"t1": {Owner: "B", Rev: 7}},
		Seen: map[string]time.Time{"t1": time.Now().Add(-time.Hour)}})
	fence, err := c.TryClaim(ctx, "t1")
	if err != nil || fence != 1 {
		t.Fatalf("claim on a rewound line: r%d %v, want r1", fence, err)
	}
}

// refusing is a remote whose appends are refused (a host hook), while reads work.
type refusing struct{ remote.Backend }

func (refusing) Append(context.Context, string, int64, remote.Data) (int64, error) {
	return 0, errors.New("remote refused the ref")
}

// TestTryClaimRefused: an append that fails where the line then shows it did not land ends
// TryClaim with that error, instead of trying again until the context ends.
func TestTryClaimRefused(t *testing.T) {
	c := claim.New(refusing{memremote.New()}, "claims", "A", time.Minute, time.Now)
	if _, err := c.TryClaim(context.Background(), "t1"); err == nil || err.Error() != "remote refused the ref" {
		t.Fatalf("TryClaim on a refusing host: %v", err)
	}
}

// regrowable is a remote whose lines can be deleted on the host and grown again by others,
// as a person deleting a claims branch in a host's web page does.
type regrowable struct {
	mu sync.Mutex
	remote.Backend
}

func (r *regrowable) regrow() { r.mu.Lock(); r.Backend = memremote.New(); r.mu.Unlock() }

func (r *regrowable) backend() remote.Backend { r.mu.Lock(); defer r.mu.Unlock(); return r.Backend }

func (r *regrowable) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	return r.backend().Append(ctx, id, after, data)
}

func (r *regrowable) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return r.backend().Since(ctx, id, rev)
}

// TestRegrownLineIsReadAgain: a machine that saved what it read of a claims line, whose line
// was then deleted and grown again past that point by others, must read the new line from the
// start. Read from where it left off, the new line's claims before that point are never seen:
// the machine goes on holding a task another machine now holds.
func TestRegrownLineIsReadAgain(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }
	b := &regrowable{Backend: memremote.New()}
	a := claim.New(b, "claims", "A", time.Hour, now)
	for _, task := range []string{"t1", "t2", "t3"} {
		if _, err := a.TryClaim(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	saved := a.State()

	b.regrow()
	m := claim.New(b, "claims", "B", time.Hour, now)
	for _, task := range []string{"t1", "t4", "t5", "t6"} {
		if _, err := m.TryClaim(ctx, task); err != nil {
			t.Fatal(err)
		}
	}

	again := claim.New(b, "claims", "A", time.Hour, now)
	again.Restore(saved)
	if err := again.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if h := again.Holders()["t1"]; h.Owner != "B" {
		t.Fatalf("after the line was regrown, A sees t1 held by %q (r%d), want B", h.Owner, h.Rev)
	}
	if _, err := again.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("A claiming t1 that B holds on the regrown line: %v, want it held", err)
	}
	if _, ok := again.Holders()["t2"]; ok {
		t.Fatalf("A still holds t2, which is on no line the remote has")
	}
}

// TestShortLeaseWaitsForTheHolders: a machine set to a shorter lease (CAIRN_CLAIM_LEASE) than
// the holder's does not take the holder's claim over before the holder's lease ends: the holder
// renews by its own lease, and taken over sooner, two machines would work on the task.
func TestShortLeaseWaitsForTheHolders(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := clock{&mu, &base, 0}.now
	b := memremote.New()
	a := claim.New(b, "claims", "A", time.Hour, now)
	fence, err := a.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	m := claim.New(b, "claims", "B", 5*time.Minute, now)
	if err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	base = base.Add(10 * time.Minute) // A renews after 15 minutes
	mu.Unlock()
	var he *claim.HeldError
	if _, err := m.TryClaim(ctx, "t1"); !errors.As(err, &he) || he.Left != 50*time.Minute {
		t.Fatalf("B, with a 5m lease, claiming t1 that A (1h) claimed 10m ago: %v, want held for 50m more", err)
	}
	if err := a.Renew(ctx, "t1", fence); err != nil {
		t.Fatal(err)
	}
	// A holder's lease is honoured up to a day, so that a claim set to hold for ever does not.
	c := claim.New(b, "claims", "C", 10*24*time.Hour, now)
	if _, err := c.TryClaim(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	base = base.Add(24*time.Hour + time.Second)
	mu.Unlock()
	if _, err := m.TryClaim(ctx, "t2"); err != nil {
		t.Fatalf("B taking over t2, a day after C claimed it with a 10-day lease: %v", err)
	}
}

// slowAppend is a remote whose appends land at once but are acknowledged late: a push whose
// answer takes its time coming back.
type slowAppend struct {
	remote.Backend
	late func()
}

func (s slowAppend) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	head, err := s.Backend.Append(ctx, id, after, data)
	s.late()
	return head, err
}

// TestLapsedCountsFromTheAppend: the holder counts its claim's lease from before its append,
// not from the late answer: another machine may read the claim, and start its own lease clock,
// as soon as it lands. Counted from the answer, the holder would believe its claim held for
// as long as the answer took past the moment it may have been taken over.
func TestLapsedCountsFromTheAppend(t *testing.T) {
	var mu sync.Mutex
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
	mem := memremote.New()
	b := slowAppend{Backend: mem, late: func() { advance(40 * time.Second) }}
	a := claim.New(b, "claims", "A", time.Minute, clock{&mu, &base, 0}.now)
	if _, err := a.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	advance(30 * time.Second) // 70 s since the claim landed
	if !a.Lapsed("t1") {
		t.Fatalf("70 s after its claim landed, with a lease of 1 m, the holder does not count it lapsed (watched %s)", a.Stale("t1"))
	}
}

// TestReleaseAll: the claims still the holder's are released in one append; a fence taken over
// is left out, and the task stays its new holder's.
func TestReleaseAll(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	a := claim.New(b, "claims", "A", time.Hour, time.Now)
	m := claim.New(b, "claims", "B", time.Hour, time.Now)
	fences := map[string]int64{}
	for _, task := range []string{"t1", "t2", "t3"} {
		f, err := a.TryClaim(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		fences[task] = f
	}
	fences["t2"] = 99 // not t2's claim
	if err := a.ReleaseAll(ctx, fences, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if h := m.Holders(); len(h) != 1 || h["t2"].Owner != "A" {
		t.Fatalf("holders after releasing t1 and t3: %+v, want t2 alone, A's", h)
	}
	if got, _ := b.Heads(ctx); got["claims"] != 5 {
		t.Fatalf("line at r%d, want r5: three claims, then two releases", got["claims"])
	}
}

// TestClockSetBackAcrossARestart: a machine whose clock ran years ahead saw claims land, then
// its clock was set right between two commands. What it saved was seen "in the future" by the
// clock it restores with: another's claim is held one lease from the restart, not for the
// years until the clock catches up; its own claim is due for renewal and may have lapsed (its
// age is unknown), rather than never due, never renewed, while others take it over.
func TestClockSetBackAcrossARestart(t *testing.T) {
	const lease = time.Hour
	ctx := context.Background()
	var mu sync.Mutex
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
	right := clock{&mu, &base, 0}.now
	ahead := clock{&mu, &base, 4 * 365 * 24 * time.Hour}.now
	b := memremote.New()
	if _, err := claim.New(b, "claims", "B", lease, right).TryClaim(ctx, "theirs"); err != nil {
		t.Fatal(err)
	}
	a := claim.New(b, "claims", "A", lease, ahead)
	if _, err := a.TryClaim(ctx, "mine"); err != nil {
		t.Fatal(err)
	}
	saved := a.State()

	again := claim.New(b, "claims", "A", lease, right)
	again.Restore(saved)
	var he *claim.HeldError
	if err := again.Held("theirs"); !errors.As(err, &he) || he.Left > lease {
		t.Fatalf("B's claim after the clock was set back: %v, want held for at most the lease %v", err, lease)
	}
	if !again.Due("mine") || !again.Lapsed("mine") {
		t.Fatalf("A's own claim seen in the future: due %v, lapsed %v; want both (its age is not known)", again.Due("mine"), again.Lapsed("mine"))
	}
	advance(lease + time.Second)
	if _, err := again.TryClaim(ctx, "theirs"); err != nil {
		t.Fatalf("taking B's unrenewed claim over a lease after the restart: %v", err)
	}
}

// TestWallClockSetBetweenRuns: a claim seen 20 minutes ago, of an hour's lease, by a run
// whose State the next run restores after the wall clock was set 45 minutes forward (or back),
// is another's live claim and this owner's claim due for renewal, as the time since boot says,
// when both runs are of one boot; across a reboot only the wall clock is known, as before.
func TestWallClockSetBetweenRuns(t *testing.T) {
	const lease = time.Hour
	for _, tc := range []struct {
		name            string
		step            time.Duration
		boot            string // of the run that restores; the saving run's is "b1"
		theirsHeld, due bool
	}{
		{"forward", 45 * time.Minute, "b1", true, true},
		{"back", -45 * time.Minute, "b1", true, true},
		{"back a little", -10 * time.Minute, "b1", true, true},
		{"forward after a reboot", 45 * time.Minute, "b2", false, true},
		{"back after a reboot", -45 * time.Minute, "b2", true, true}, // seen in the future: age unknown
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			wall := clock{&mu, &base, 0}
			boot := "b1"
			booted := base.Add(-time.Hour)
			// The time since boot, never set: wall runs on while the restoring run's is set.
			up := func() (string, time.Duration, bool) { return boot, wall.now().Sub(booted), true }
			b := memremote.New()
			if _, err := claim.New(b, "claims", "B", lease, wall.now).TryClaim(ctx, "theirs"); err != nil {
				t.Fatal(err)
			}
			a := claim.New(b, "claims", "A", lease, wall.now).Uptime(up)
			if _, err := a.TryClaim(ctx, "mine"); err != nil {
				t.Fatal(err)
			}
			saved := a.State()
			mu.Lock()
			base = base.Add(20 * time.Minute)
			mu.Unlock()
			boot = tc.boot
			stepped := clock{&mu, &base, tc.step}.now
			again := claim.New(b, "claims", "A", lease, stepped).Uptime(up)
			again.Restore(saved)
			if err := again.Held("theirs"); errors.Is(err, claim.ErrHeld) != tc.theirsHeld {
				t.Errorf("B's claim seen 20m before, restored with the wall clock set %v: Held = %v, want held %v", tc.step, err, tc.theirsHeld)
			}
			if got := again.Due("mine"); got != tc.due {
				t.Errorf("A's claim made 20m before, restored with the wall clock set %v: Due = %v, want %v", tc.step, got, tc.due)
			}
		})
	}
}

// TestRestoredHolderWithoutSeen: a saved State whose holder has no time seen (claims.json
// edited by hand, or half another tool's) does not make another's claim free at once: it was
// seen at an unknown time, so it counts from the restart, as on a machine that has just started.
func TestRestoredHolderWithoutSeen(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	if _, err := claim.New(b, "claims", "B", time.Hour, time.Now).TryClaim(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	c := claim.New(b, "claims", "C", time.Hour, time.Now)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	saved := c.State()
	saved.Seen = nil
	again := claim.New(b, "claims", "C", time.Hour, time.Now)
	again.Restore(saved)
	if _, err := again.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("claiming B's claim restored without the time it was seen: %v, want held", err)
	}
}

// TestWorkflowInstances: on one line, claimers of two workflow instances (two workflows
// started apart under one id) hold the same task each, neither fenced by the other; one that
// names no instance (an older Cairn) counts every entry, and its entries count for both.
func TestWorkflowInstances(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	a := claim.New(b, "wf", "A", time.Hour, time.Now).Of("1")
	o := claim.New(b, "wf", "O", time.Hour, time.Now).Of("2")
	old := claim.New(b, "wf", "old", time.Hour, time.Now)
	fa, err := a.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	fo, err := o.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatalf("instance 2 claiming t1, held in instance 1: %v", err)
	}
	if err := a.Renew(ctx, "t1", fa); err != nil {
		t.Fatalf("instance 1 renewing t1 after instance 2 claimed it: %v", err)
	}
	if err := o.Release(ctx, "t1", fo); err != nil {
		t.Fatalf("instance 2 releasing t1: %v", err)
	}
	if _, err := old.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("a claimer of no instance claiming t1: %v; want it held (by instance 1's claim, the first)", err)
	}
	if _, err := old.TryClaim(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*claim.Claimer{a, o} {
		if _, err := c.TryClaim(ctx, "t2"); !errors.Is(err, claim.ErrHeld) {
			t.Errorf("claiming t2, claimed by an older Cairn: %v; want it held", err)
		}
	}
}

// TestOwnClaimReadBackIsDue: a holder that reads back a claim of its own it made in an earlier
// run that saved nothing (killed between the push and the save, or a state too large to keep)
// counted its lease from the read, while another machine may have started its lease clock
// when it landed: the holder renewed only a quarter lease after the read, and the other
// machine took the live claim over in between: both ran the task. It counts from the time it
// wrote in the claim, by its own clock, before the claim could land; from an unknown time (due,
// maybe lapsed) when its clock was set back since.
func TestOwnClaimReadBackIsDue(t *testing.T) {
	const lease = time.Hour
	ctx := context.Background()
	var mu sync.Mutex
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
	now := clock{&mu, &base, 0}.now
	b := memremote.New()
	if _, err := claim.New(b, "claims", "A", lease, now).TryClaim(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	m := claim.New(b, "claims", "B", lease, clock{&mu, &base, 3 * time.Hour}.now)
	advance(time.Minute)
	if err := m.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	advance(49 * time.Minute)
	a := claim.New(b, "claims", "A", lease, now) // the next run, with nothing saved
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Due("t1") || a.Lapsed("t1") {
		t.Fatalf("A's own claim read back 50 m after it wrote it: due %v, lapsed %v; want due, not lapsed", a.Due("t1"), a.Lapsed("t1"))
	}
	back := claim.New(b, "claims", "A", lease, clock{&mu, &base, -2 * time.Hour}.now) // set back since
	if err := back.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !back.Due("t1") || !back.Lapsed("t1") {
		t.Fatalf("A's own claim read back by a clock set back since: due %v, lapsed %v; want both (its age is not known)", back.Due("t1"), back.Lapsed("t1"))
	}
	fence := a.Holders()["t1"].Rev
	if err := a.Renew(ctx, "t1", fence); err != nil { // as A's sync does with a claim due
		t.Fatal(err)
	}
	if a.Due("t1") || a.Lapsed("t1") {
		t.Fatalf("A's claim just renewed: due %v, lapsed %v; want neither", a.Due("t1"), a.Lapsed("t1"))
	}
	advance(12 * time.Minute) // 61 minutes after B first saw the claim
	if _, err := m.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("B took over A's claim a lease after it landed, though A renewed it: %v", err)
	}
}

// TestOnto: a State saved as the line last fit, with the tasks the owner held there or holds
// now put onto it as read since, has them as read, and restores a Claimer that reads the line
// on from there to the holders, and the owner's lease clocks, of the Claimer that read it all:
// claims of the owner's made, renewed, taken over and released past that head, beside another
// owner's.
func TestOnto(t *testing.T) {
	for _, saved := range []bool{false, true} {
		ctx := context.Background()
		var mu sync.Mutex
		base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		advance := func(d time.Duration) { mu.Lock(); base = base.Add(d); mu.Unlock() }
		now := clock{&mu, &base, 0}.now
		b := memremote.New()
		a := claim.New(b, "claims", "A", time.Hour, now)
		x := claim.New(b, "claims", "X", time.Minute, now)
		for _, task := range []string{"kept", "taken", "released"} {
			if _, err := a.TryClaim(ctx, task); err != nil {
				t.Fatal(err)
			}
		}
		var s claim.State // nothing kept: the line's first claims were too many already
		if saved {
			s = a.State()
		}
		for _, step := range []func() error{
			func() error { _, err := x.TryClaim(ctx, "theirs"); return err },
			func() error { _, err := a.TryClaim(ctx, "new"); return err },
			func() error {
				advance(30 * time.Minute)
				return a.RenewAll(ctx, map[string]int64{"kept": a.Holders()["kept"].Rev})
			},
			func() error { advance(2 * time.Hour); _, err := x.TryClaim(ctx, "taken"); return err },
			func() error { return a.Release(ctx, "released", a.Holders()["released"].Rev) },
			func() error { advance(time.Minute); _, err := a.TryClaim(ctx, "released"); return err },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		advance(time.Minute)
		if err := a.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		onto := a.Onto(s)
		for _, task := range []string{"kept", "taken", "released", "new", "theirs"} {
			want := s.Holders[task]
			if h := a.Holders()[task]; h.Owner == "A" || want.Owner == "A" {
				want = h // A's, or A's before: as A read it
			}
			if got := onto.Holders[task]; got != want {
				t.Fatalf("put onto r%d, %s is held by %+v, want %+v", s.Head, task, got, want)
			}
		}
		again := claim.New(b, "claims", "A", time.Hour, now)
		again.Restore(onto)
		if err := again.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(again.Holders()), fmt.Sprint(a.Holders()); got != want {
			t.Fatalf("restored from r%d with A's claims put onto it, holders\n%s\nwant\n%s", s.Head, got, want)
		}
		for _, task := range []string{"kept", "new", "released"} {
			if again.Stale(task) != a.Stale(task) {
				t.Fatalf("restored from r%d, %s watched for %s; want %s", s.Head, task, again.Stale(task), a.Stale(task))
			}
		}
	}
}

// rewindOnAppend is a remote whose line is rewound to its first keep records (a ref pushed
// back on the host) just before the next append, after the appender read it.
type rewindOnAppend struct {
	regrowable
	keep int64 // 0: none pending
}

func (r *rewindOnAppend) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if r.keep > 0 {
		recs, err := r.backend().Since(ctx, id, 0)
		if err != nil {
			return 0, err
		}
		r.regrow()
		for _, rec := range recs[:r.keep] {
			if _, err := r.backend().Append(ctx, id, rec.Rev-1, remote.Slice(rec.Data)); err != nil {
				return 0, err
			}
		}
		r.keep = 0
	}
	return r.regrowable.Append(ctx, id, after, data)
}

// TestReleaseOnALineRewoundMeanwhile: the line rewound on the host between the holder's read
// and its release, to a point that still holds its claim: the release was given up as fenced
// (the model told the claim was not released), and the task stayed taken for a lease. It
// reads the line again, and releases it.
func TestReleaseOnALineRewoundMeanwhile(t *testing.T) {
	ctx := context.Background()
	b := &rewindOnAppend{regrowable: regrowable{Backend: memremote.New()}}
	a := claim.New(b, "claims", "A", time.Hour, time.Now)
	fence, err := a.TryClaim(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	m := claim.New(b, "claims", "B", time.Hour, time.Now)
	if _, err := m.TryClaim(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	b.keep = 1
	if err := a.Release(ctx, "t1", fence); err != nil {
		t.Fatalf("releasing t1 on a line rewound to its claim: %v", err)
	}
	if _, err := m.TryClaim(ctx, "t1"); err != nil {
		t.Fatalf("t1 released, yet: %v", err)
	}
}

// shortWrites is a remote whose pushes all say its line is shorter than its reads show (a host
// serving reads from a copy of the ref its pushes no longer hold): each append looks like a
// line rewound since it was read.
type shortWrites struct {
	remote.Backend
	appends atomic.Int64
	current int64 // the head each push says the line has
}

func (s *shortWrites) Append(_ context.Context, id string, after int64, _ remote.Data) (int64, error) {
	s.appends.Add(1)
	return 0, &remote.ConflictError{Workflow: id, Expected: after, Current: s.current}
}

// TestRewoundAgainAndAgainEnds: a line that reads as rewound at every append (or as moved on,
// with nothing more to read) is read again a few times, with a pause, and the call then ends
// with the conflict: it read the line again and pushed, with no pause, until its time ran out
// (twenty seconds of git against the host, for each task call).
func TestRewoundAgainAndAgainEnds(t *testing.T) {
	for _, tc := range []struct {
		op      string
		current int64
	}{{"claim", 0}, {"release", 0}, {"claim", 99}, {"release", 99}} {
		op := tc.op
		t.Run(fmt.Sprint(op, tc.current), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m := memremote.New()
			a := claim.New(m, "claims", "A", time.Hour, time.Now)
			fence, err := a.TryClaim(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			s := &shortWrites{Backend: m, current: tc.current}
			a = claim.New(s, "claims", "A", time.Hour, time.Now)
			if op == "claim" {
				_, err = a.TryClaim(ctx, "t2")
			} else {
				err = a.Release(ctx, "t1", fence)
			}
			if !errors.Is(err, remote.ErrConflict) || ctx.Err() != nil {
				t.Fatalf("%s on a line that reads as rewound at every push: %v (context: %v); want the conflict, before the time runs out", op, err, ctx.Err())
			}
			if n := s.appends.Load(); n > 5 {
				t.Fatalf("%s pushed %d times; want a few", op, n)
			}
		})
	}
}

// racedBy answers each append in turn as pattern says: 's', a lost race the line read again
// does not show (a read served from an older copy); 'p', a race lost to another machine's
// append, which the line read again shows; then as the line does.
type racedBy struct {
	remote.Backend
	other   *claim.Claimer
	pattern string
	n       int
}

func (r *racedBy) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if r.n < len(r.pattern) {
		r.n++
		switch r.pattern[r.n-1] {
		case 's':
			return 0, &remote.ConflictError{Workflow: id, Expected: after, Current: after + 1}
		case 'p':
			if _, err := r.other.TryClaim(ctx, fmt.Sprint("other", r.n)); err != nil {
				return 0, err
			}
		}
	}
	return r.Backend.Append(ctx, id, after, data)
}

// TestStallsBetweenOthersAppendsDoNotEnd: a call ends with the conflict after a few lost races
// in a row that the line read again does not show; such races between which another machine's
// appends were read (the line moving on, as contention makes it) are not in a row, and the
// call goes on to claim or release.
func TestStallsBetweenOthersAppendsDoNotEnd(t *testing.T) {
	for _, op := range []string{"claim", "release"} {
		t.Run(op, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m := memremote.New()
			a := claim.New(m, "claims", "A", time.Hour, time.Now)
			fence, err := a.TryClaim(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			r := &racedBy{Backend: m, other: claim.New(m, "claims", "B", time.Hour, time.Now), pattern: "spsps"}
			a = claim.New(r, "claims", "A", time.Hour, time.Now)
			if op == "claim" {
				_, err = a.TryClaim(ctx, "t2")
			} else {
				err = a.Release(ctx, "t1", fence)
			}
			if err != nil {
				t.Fatalf("%s with one stall at a time between other machines' appends: %v; want it done", op, err)
			}
		})
	}
}
