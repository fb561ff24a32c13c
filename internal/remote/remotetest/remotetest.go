// Package remotetest is the conformance suite every remote.Backend must pass, and helpers for
// tests that drive several clients of one remote at once.
//
// A backend's test calls Run with a Setup that makes a fresh, empty remote and hands out
// independent clients of it (for git: one clone per client), as separate machines would have.
package remotetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
)

// Setup makes a fresh, empty remote and returns a function that opens a new client of it.
// Each client must be independent of the others except through the remote itself.
type Setup func(t *testing.T) (client func() remote.Backend)

// Options scales the suite.
type Options struct {
	Clients int           // concurrent clients in the race tests
	Appends int           // records each client lands in the no-loss test
	Rounds  int           // rounds of the one-winner race
	Timeout time.Duration // bound on each subtest (60s when zero)
}

// Run runs the conformance suite against the backend setup makes.
func Run(t *testing.T, setup Setup, opts Options) {
	opts.Timeout = cmp.Or(opts.Timeout, 60*time.Second)
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, client func() remote.Backend, o Options)
	}{
		{"empty", testEmpty},
		{"append-and-read", testAppendRead},
		{"stale-head-writes-nothing", testStale},
		{"ahead-head-writes-nothing", testAhead},
		{"bad-arguments-write-nothing", testBadArgs},
		{"failed-data-writes-nothing", testFailedData},
		{"visible-to-other-clients", testOtherClients},
		{"heads-of-many-workflows", testManyHeads},
		{"watch", testWatch},
		{"one-winner-per-head", testOneWinner},
		{"concurrent-appends-lose-nothing", testNoLoss},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
			defer cancel()
			tc.fn(t, ctx, setup(t), opts)
		})
	}
}

// payloads are records chosen to trip a backend that transforms bytes: empty, binary with NUL
// and invalid UTF-8, line endings of every kind, and a record larger than a pipe buffer.
func payloads() [][]byte {
	big := bytes.Repeat([]byte("0123456789abcdef"), 8192)
	return [][]byte{
		[]byte(`{"op":"start","n":1}`),
		{},
		{0, 1, 2, 0xff, 0xfe, '\n', 0},
		[]byte("line\r\nline\rline\n\n"),
		[]byte("  leading and trailing space  "),
		big,
	}
}

func testEmpty(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	b := client()
	h, err := b.Heads(ctx)
	if err != nil {
		t.Fatalf("Heads on an empty remote: %v", err)
	}
	if len(h) != 0 {
		t.Fatalf("Heads on an empty remote = %v, want none", h)
	}
	recs, err := b.Since(ctx, "wf-none", 0)
	if err != nil {
		t.Fatalf("Since on an absent workflow: %v", err)
	}
	if len(recs) != 0 {
		t.Fatalf("Since on an absent workflow = %d records, want none", len(recs))
	}
}

func testAppendRead(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	b := client()
	p := payloads()
	head, err := b.Append(ctx, "wf-a", 0, remote.Slice(p[:1]...))
	if err != nil || head != 1 {
		t.Fatalf("first Append = %d, %v; want 1, nil", head, err)
	}
	head, err = b.Append(ctx, "wf-a", 1, remote.Slice(p[1:]...))
	if want := int64(len(p)); err != nil || head != want {
		t.Fatalf("second Append = %d, %v; want %d, nil", head, err, want)
	}
	for from := int64(0); from <= int64(len(p))+1; from++ {
		recs, err := b.Since(ctx, "wf-a", from)
		if err != nil {
			t.Fatalf("Since(%d): %v", from, err)
		}
		want := p[min(from, int64(len(p))):]
		if len(recs) != len(want) {
			t.Fatalf("Since(%d) = %d records, want %d", from, len(recs), len(want))
		}
		for i, r := range recs {
			if r.Rev != from+int64(i)+1 {
				t.Fatalf("Since(%d)[%d].Rev = %d, want %d", from, i, r.Rev, from+int64(i)+1)
			}
			if !bytes.Equal(r.Data, want[i]) {
				t.Fatalf("Since(%d)[%d]: bytes differ (%d bytes, want %d)", from, i, len(r.Data), len(want[i]))
			}
		}
	}
	MustHeads(t, ctx, b, remote.Heads{"wf-a": int64(len(p))})
}

// testStale is the negative case: an append after a head that has moved writes nothing, and
// the error says where the head is.
func testStale(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	a, b := client(), client()
	MustAppend(t, ctx, a, "wf-s", 0, "a1", "a2", "a3")
	for _, after := range []int64{0, 1, 2} {
		_, err := b.Append(ctx, "wf-s", after, remote.Slice([]byte("stale")))
		MustConflict(t, err, "wf-s", after, 3)
	}
	MustLine(t, ctx, a, "wf-s", "a1", "a2", "a3")
	MustLine(t, ctx, b, "wf-s", "a1", "a2", "a3")
	// The error's head is usable: appending after it lands.
	MustAppend(t, ctx, b, "wf-s", 3, "b4")
	MustLine(t, ctx, a, "wf-s", "a1", "a2", "a3", "b4")
}

func testAhead(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	b := client()
	_, err := b.Append(ctx, "wf-h", 2, remote.Slice([]byte("x")))
	MustConflict(t, err, "wf-h", 2, 0)
	MustLine(t, ctx, b, "wf-h")
	MustAppend(t, ctx, b, "wf-h", 0, "x")
	_, err = b.Append(ctx, "wf-h", 5, remote.Slice([]byte("y")))
	MustConflict(t, err, "wf-h", 5, 1)
	MustLine(t, ctx, b, "wf-h", "x")
}

func testBadArgs(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	b := client()
	cases := []struct {
		name  string
		id    string
		after int64
		data  [][]byte
	}{
		{"empty-id", "", 0, [][]byte{[]byte("x")}},
		{"slash", "a/b", 0, [][]byte{[]byte("x")}},
		{"dot-dot", "a..b", 0, [][]byte{[]byte("x")}},
		{"lock-suffix", "wf.lock", 0, [][]byte{[]byte("x")}},
		{"leading-dash", "-wf", 0, [][]byte{[]byte("x")}},
		{"space", "w f", 0, [][]byte{[]byte("x")}},
		{"negative-after", "wf-ok", -1, [][]byte{[]byte("x")}},
		{"no-records", "wf-ok", 0, nil},
		{"record-too-large", "wf-ok", 0, [][]byte{[]byte("x"), make([]byte, remote.MaxRecord+1)}},
	}
	for _, c := range cases {
		if _, err := b.Append(ctx, c.id, c.after, remote.Slice(c.data...)); err == nil {
			t.Errorf("%s: Append succeeded, want an error", c.name)
		} else if errors.Is(err, remote.ErrConflict) {
			t.Errorf("%s: Append gave a conflict (%v), want an argument error", c.name, err)
		}
	}
	MustHeads(t, ctx, b, remote.Heads{})
}

// testFailedData: records handed over one at a time are written all or none, so an error of
// the data's after some were handed over writes none of them, and is the one returned.
func testFailedData(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	b := client()
	failed := errors.New("the journal could not be read")
	failing := func(recs ...string) remote.Data {
		return func(yield func([]byte) error) error {
			for _, r := range recs {
				if err := yield([]byte(r)); err != nil {
					return err
				}
			}
			return failed
		}
	}
	if _, err := b.Append(ctx, "wf-f", 0, failing("f1", "f2")); !errors.Is(err, failed) {
		t.Fatalf("Append of a new line whose data fails = %v, want its error", err)
	}
	MustHeads(t, ctx, b, remote.Heads{})
	MustAppend(t, ctx, b, "wf-f", 0, "a1")
	if _, err := b.Append(ctx, "wf-f", 1, failing("f2", "f3")); !errors.Is(err, failed) {
		t.Fatalf("Append whose data fails = %v, want its error", err)
	}
	MustLine(t, ctx, client(), "wf-f", "a1")
	MustAppend(t, ctx, b, "wf-f", 1, "a2")
	MustLine(t, ctx, client(), "wf-f", "a1", "a2")
}

func testOtherClients(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	a, b := client(), client()
	MustAppend(t, ctx, a, "wf-o", 0, "a1")
	MustHeads(t, ctx, b, remote.Heads{"wf-o": 1})
	MustAppend(t, ctx, b, "wf-o", 1, "b2")
	MustAppend(t, ctx, a, "wf-o", 2, "a3")
	MustLine(t, ctx, b, "wf-o", "a1", "b2", "a3")
}

func testManyHeads(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	a, b := client(), client()
	want := remote.Heads{}
	for i := range 5 {
		id := fmt.Sprintf("wf-%d", i)
		recs := make([]string, i+1)
		for j := range recs {
			recs[j] = fmt.Sprintf("%s-%d", id, j)
		}
		MustAppend(t, ctx, a, id, 0, recs...)
		want[id] = int64(i + 1)
	}
	MustHeads(t, ctx, b, want)
}

func testWatch(t *testing.T, ctx context.Context, client func() remote.Backend, _ Options) {
	a, b := client(), client()
	// Heads that already differ from known return at once.
	MustAppend(t, ctx, a, "wf-w", 0, "a1")
	h, err := b.Watch(ctx, remote.Heads{})
	if err != nil || h["wf-w"] != 1 {
		t.Fatalf("Watch(empty) = %v, %v; want wf-w at 1", h, err)
	}
	// A watch that sees nothing new ends with its context.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = b.Watch(short, h)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Watch with no change = %v, want the context's deadline", err)
	}
	// Another client's append wakes it.
	done := make(chan remote.Heads, 1)
	go func() {
		got, err := b.Watch(ctx, h)
		if err != nil {
			t.Errorf("Watch: %v", err)
		}
		done <- got
	}()
	MustAppend(t, ctx, a, "wf-w", 1, "a2")
	select {
	case got := <-done:
		if got["wf-w"] != 2 {
			t.Fatalf("Watch woke with %v, want wf-w at 2", got)
		}
	case <-ctx.Done():
		t.Fatal("Watch did not see another client's append")
	}
}

// testOneWinner starts every client's append after the same head at once: exactly one lands
// and every other gets a conflict naming the winner's head.
func testOneWinner(t *testing.T, ctx context.Context, client func() remote.Backend, o Options) {
	clients := make([]remote.Backend, o.Clients)
	for i := range clients {
		clients[i] = client()
	}
	var line []string
	for round := range o.Rounds {
		after := int64(len(line))
		type result struct {
			who  int
			head int64
			err  error
		}
		results := make(chan result, len(clients))
		start := make(chan struct{})
		for i, c := range clients {
			go func() {
				<-start
				h, err := c.Append(ctx, "wf-race", after, remote.Slice([]byte(fmt.Sprintf("r%d-c%d", round, i))))
				results <- result{i, h, err}
			}()
		}
		close(start)
		winner := -1
		for range clients {
			r := <-results
			switch {
			case r.err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: clients %d and %d both appended after %d", round, winner, r.who, after)
				}
				if r.head != after+1 {
					t.Fatalf("round %d: winner's head = %d, want %d", round, r.head, after+1)
				}
				winner = r.who
			default:
				MustConflict(t, r.err, "wf-race", after, after+1)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no client appended", round)
		}
		line = append(line, fmt.Sprintf("r%d-c%d", round, winner))
	}
	MustLine(t, ctx, clients[0], "wf-race", line...)
}

// testNoLoss has every client land its records with Land, all at once: every record is on the
// line exactly once and the revisions have no gaps.
func testNoLoss(t *testing.T, ctx context.Context, client func() remote.Backend, o Options) {
	var wg sync.WaitGroup
	for i := range o.Clients {
		c := client()
		wg.Go(func() {
			var known int64
			for j := range o.Appends {
				rev, err := Land(ctx, c, "wf-many", known, []byte(fmt.Sprintf("c%d-%d", i, j)))
				if err != nil {
					t.Errorf("client %d record %d: %v", i, j, err)
					return
				}
				known = rev
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	CheckLine(t, ctx, client(), "wf-many", o.Clients, o.Appends)
}

// CheckLine checks that workflow id holds exactly the records "c<i>-<j>" for i < clients and
// j < appends, each once, with each client's records in the order it wrote them.
func CheckLine(t testing.TB, ctx context.Context, b remote.Backend, id string, clients, appends int) {
	t.Helper()
	recs, err := b.Since(ctx, id, 0)
	if err != nil {
		t.Fatalf("Since: %v", err)
	}
	next := make([]int, clients)
	seen := map[string]bool{}
	for k, r := range recs {
		if r.Rev != int64(k+1) {
			t.Fatalf("record %d has revision %d: a gap", k+1, r.Rev)
		}
		s := string(r.Data)
		if seen[s] {
			t.Fatalf("record %q appears twice", s)
		}
		seen[s] = true
		var i, j int
		if _, err := fmt.Sscanf(s, "c%d-%d", &i, &j); err != nil || i < 0 || i >= clients {
			t.Fatalf("record %d is %q, which no client wrote", r.Rev, s)
		}
		if j != next[i] {
			t.Fatalf("client %d's record %d landed where %d was due", i, j, next[i])
		}
		next[i]++
	}
	if want := clients * appends; len(recs) != want {
		t.Fatalf("%d records landed, want %d (lost %d)", len(recs), want, want-len(recs))
	}
}

// Land appends data as one record, known being the last head this writer saw, and retries
// until it is on the line: after a conflict it reads what others wrote and appends after
// their head; after an error of unknown outcome (a dropped connection) it reads the line and
// stops if data is already there, so a retry never writes it twice. data must be unique on the
// line (tests put a writer and a sequence number in it). It returns data's revision.
func Land(ctx context.Context, b remote.Backend, id string, known int64, data []byte) (int64, error) {
	after := known
	uncertain := false
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if uncertain {
			recs, err := b.Since(ctx, id, known)
			if err != nil {
				backoff(ctx, attempt)
				continue
			}
			if i := slices.IndexFunc(recs, func(r remote.Record) bool { return bytes.Equal(r.Data, data) }); i >= 0 {
				return recs[i].Rev, nil
			}
			if len(recs) > 0 {
				after = recs[len(recs)-1].Rev
			}
			uncertain = false
		}
		head, err := b.Append(ctx, id, after, remote.Slice(data))
		var ce *remote.ConflictError
		switch {
		case err == nil:
			return head, nil
		case errors.As(err, &ce):
			// Someone else's records: nothing of ours can be among them unless an
			// earlier attempt's outcome was unknown, which sets uncertain.
			after = ce.Current
		default:
			uncertain = true
			backoff(ctx, attempt)
		}
	}
}

func backoff(ctx context.Context, attempt int) {
	_ = remote.Sleep(ctx, time.Duration(min(attempt+1, 20))*10*time.Millisecond)
}

// MustAppend appends recs after after and fails the test unless they land.
func MustAppend(t testing.TB, ctx context.Context, b remote.Backend, id string, after int64, recs ...string) {
	t.Helper()
	data := make([][]byte, len(recs))
	for i, r := range recs {
		data[i] = []byte(r)
	}
	head, err := b.Append(ctx, id, after, remote.Slice(data...))
	if err != nil {
		t.Fatalf("Append(%s after %d): %v", id, after, err)
	}
	if want := after + int64(len(recs)); head != want {
		t.Fatalf("Append(%s after %d) = head %d, want %d", id, after, head, want)
	}
}

// MustLine fails the test unless workflow id holds exactly want, from revision 1.
func MustLine(t testing.TB, ctx context.Context, b remote.Backend, id string, want ...string) {
	t.Helper()
	recs, err := b.Since(ctx, id, 0)
	if err != nil {
		t.Fatalf("Since(%s): %v", id, err)
	}
	got := make([]string, len(recs))
	for i, r := range recs {
		got[i] = string(r.Data)
		if r.Rev != int64(i+1) {
			t.Fatalf("%s: record %d has revision %d", id, i+1, r.Rev)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", id, got, want)
	}
}

// MustHeads fails the test unless b's heads are want.
func MustHeads(t testing.TB, ctx context.Context, b remote.Backend, want remote.Heads) {
	t.Helper()
	h, err := b.Heads(ctx)
	if err != nil {
		t.Fatalf("Heads: %v", err)
	}
	if !h.Equal(want) {
		t.Fatalf("Heads = %v, want %v", h, want)
	}
}

// MustConflict fails the test unless err is a conflict on id with the given heads.
func MustConflict(t testing.TB, err error, id string, expected, current int64) {
	t.Helper()
	var ce *remote.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, remote.ErrConflict) {
		t.Fatalf("Append after a moved head: err = %v, want a *remote.ConflictError", err)
	}
	if ce.Workflow != id || ce.Expected != expected || ce.Current != current {
		t.Fatalf("conflict = %+v, want workflow %s expected %d current %d", *ce, id, expected, current)
	}
}

// Reread is b whose reads (Since, Heads) are tried again after an error, up to 20 times, as
// claimtest.Race refreshes: for the checks after a faulty network heals, where a read may
// still fail once (a git past its short timeout on a loaded machine) and only a persistent
// failure says something of the line. What a read that answers returns is not retried.
func Reread(b remote.Backend) remote.Backend { return reread{b} }

type reread struct{ remote.Backend }

func (r reread) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return again(ctx, func() ([]remote.Record, error) { return r.Backend.Since(ctx, id, rev) })
}

func (r reread) Heads(ctx context.Context) (remote.Heads, error) {
	return again(ctx, func() (remote.Heads, error) { return r.Backend.Heads(ctx) })
}

func again[T any](ctx context.Context, read func() (T, error)) (T, error) {
	v, err := read()
	for attempt := 0; err != nil && attempt < 20 && ctx.Err() == nil; attempt++ {
		backoff(ctx, attempt)
		v, err = read()
	}
	return v, err
}
