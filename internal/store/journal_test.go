package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// longDoc is a workflow record after n transitions of a long workflow: a history bounded at
// 20 entries that slides, phases that complete and reopen, a counter.
func longDoc(n int64) []byte {
	var hist []map[string]any
	for i := max(n-20, 1); i <= n; i++ {
		hist = append(hist, map[string]any{"from": "implement", "to": "review", "at": fmt.Sprintf("2026-11-22T17:%02d:%02dZ", i/60%60, i%60), "note": fmt.Sprintf("round %d", i)})
	}
	doc, _ := json.Marshal(map[string]any{
		"version": "2.0", "workflow_id": wfID, "type": "apex", "context": "a long one", "revision": n,
		"state":   []string{"implement", "review"}[n%2],
		"phases":  map[string]any{"implement": map[string]any{"completed": n%2 == 1}, "review": map[string]any{"completed": n%2 == 0}},
		"history": hist, "x_unknown": map[string]any{"kept": true},
	})
	return doc
}

func commitLong(t testing.TB, s *store.Store, n int64) store.Result {
	t.Helper()
	res, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
		return longDoc(n), store.Event{Kind: "transition", Detail: `{"from":"implement","to":"review"}`}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestJournalHoldsChangesAndRebuildsAnyRevision: after each of 300 transitions the snapshot is
// destroyed and the store rebuilds it, byte for byte, from the journal; the journal grows with
// the changes, not with the record, and its chains stay bounded.
func TestJournalHoldsChangesAndRebuildsAnyRevision(t *testing.T) {
	s, dir := newStore(t, noSync) // no power is cut: its 300 transitions need no fsyncs
	p := filepath.Join(dir, store.WorkflowFile)
	for n := int64(1); n <= 300; n++ {
		res := commitLong(t, s, n)
		if n%7 == 0 || n > 280 {
			os.WriteFile(p, []byte(`{"version":"2.0","workflow_id":"`), 0o600)
			w, err := s.ReadWorkflow()
			if err != nil || !bytes.Equal(w.Data, res.Data) || w.Revision != n {
				t.Fatalf("revision %d rebuilt as %d: %s (%v)", n, w.Revision, w.Data, err)
			}
		}
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Records) != 300 || len(j.Problems) != 0 {
		t.Fatalf("journal: %d records, %v, %v", len(j.Records), j.Problems, err)
	}
	full, chain := 0, 0
	for _, r := range j.Records {
		if r.Snapshot != nil {
			full, chain = full+1, 0
			continue
		}
		chain++
		if size := int64(len(longDoc(r.Revision))); r.Chain > store.ChainFactor*size || chain >= store.ChainRecords && r.Chain+int64(chain*store.LineCost) >= size {
			t.Fatalf("record %d: a chain of %d lines, %d bytes", r.Seq, chain, r.Chain)
		}
	}
	fi, _ := os.Stat(filepath.Join(dir, "journal", wfID+".jsonl"))
	whole := int64(300 * len(longDoc(300)))
	if full < 2 || full > 60 || fi.Size() > whole/3 {
		t.Fatalf("%d full lines of 300; journal %d bytes, whole snapshots would be %d", full, fi.Size(), whole)
	}
	t.Logf("%d full lines of 300; journal %d bytes (whole snapshots: %d)", full, fi.Size(), whole)
	// The records after a revision come back with their states.
	since, err := s.ReadJournalSince(wfID, 250)
	if err != nil || len(since) != 50 {
		t.Fatalf("since 250: %d, %v", len(since), err)
	}
	for _, r := range since {
		if !bytes.Equal(r.Snapshot, longDoc(r.Revision)) {
			t.Fatalf("revision %d: %s", r.Revision, r.Snapshot)
		}
	}
}

// oldLine writes a journal line as Cairn wrote them before deltas: the whole snapshot, no
// state sum.
func oldLine(seq int64, doc []byte) string {
	body := fmt.Sprintf(`{"seq":%d,"revision":%d,"at":"2026-11-22T17:30:%02dZ","event":{"kind":"transition"},"snapshot":%s`, seq, seq, seq, doc)
	sum := sha256.Sum256([]byte(body))
	return body + `,"sum":"` + hex.EncodeToString(sum[:]) + `"}` + "\n"
}

func TestOldJournalReadsRebuildsAndContinues(t *testing.T) {
	s, dir := newStore(t)
	os.MkdirAll(filepath.Join(dir, "journal"), 0o700)
	var old strings.Builder
	for n := int64(1); n <= 5; n++ {
		old.WriteString(oldLine(n, longDoc(n)))
	}
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	os.WriteFile(jp, []byte(old.String()), 0o600)
	// No snapshot: rebuilt from the old journal's last line.
	w, err := s.ReadWorkflow()
	if err != nil || w.Revision != 5 || !bytes.Equal(w.Data, longDoc(5)) {
		t.Fatalf("rebuilt from an old journal: %d %v", w.Revision, err)
	}
	for n := int64(6); n <= 9; n++ {
		commitLong(t, s, n)
	}
	j, _ := s.ReadJournal(wfID)
	if len(j.Records) != 9 || len(j.Problems) != 0 || j.Records[5].Snapshot == nil || j.Records[6].Delta == nil {
		t.Fatalf("continued journal: %d records %v", len(j.Records), j.Problems)
	}
	since, err := s.ReadJournalSince(wfID, 0)
	if err != nil || len(since) != 9 {
		t.Fatalf("replay: %d %v", len(since), err)
	}
	for _, r := range since {
		if !bytes.Equal(r.Snapshot, longDoc(r.Revision)) {
			t.Fatalf("revision %d replays to %s", r.Revision, r.Snapshot)
		}
	}
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	if w, err := s.ReadWorkflow(); err != nil || !bytes.Equal(w.Data, longDoc(9)) {
		t.Fatalf("rebuilt from a mixed journal: %d %v", w.Revision, err)
	}
}

// TestSnapshotEditedByHandStartsANewChain: a snapshot that is not the journal's last state
// (edited by hand at the same revision) is never used as a delta's base.
func TestSnapshotEditedByHandStartsANewChain(t *testing.T) {
	s, dir := newStore(t)
	commitLong(t, s, 1)
	commitLong(t, s, 2)
	p := filepath.Join(dir, store.WorkflowFile)
	edited := bytes.Replace(longDoc(2), []byte(`"a long one"`), []byte(`"edited"`), 1)
	os.WriteFile(p, edited, 0o600)
	_, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
		return bytes.Replace(longDoc(3), []byte(`"a long one"`), []byte(`"edited"`), 1), store.Event{Kind: "t"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := s.ReadJournal(wfID)
	if j.Records[2].Snapshot == nil {
		t.Fatalf("a delta was written against a snapshot the journal does not hold")
	}
	os.Remove(p)
	if w, _ := s.ReadWorkflow(); !bytes.Contains(w.Data, []byte(`"edited"`)) || w.Revision != 3 {
		t.Fatalf("rebuilt %s", w.Data)
	}
}

// historyDoc is revision rev of a workflow whose "history" keeps its newest 50 moves.
func historyDoc(rev int64) []byte {
	var h []map[string]int64
	for n := max(1, rev-49); n <= rev; n++ {
		h = append(h, map[string]int64{"move": n})
	}
	b, _ := json.Marshal(map[string]any{"version": "2.0", "workflow_id": wfID, "revision": rev, "state": "s", "history": h})
	return b
}

// TestItemsGoOnPastABrokenChain: a damaged line in a chain of deltas leaves the states up to
// the next full line beyond rebuilding, but not those after it: the list of every history
// move (cairn show) goes on from there instead of stopping at the break, and says the chain
// broke.
func TestItemsGoOnPastABrokenChain(t *testing.T) {
	s, dir := newStore(t)
	const revs = 120
	for rev := int64(1); rev <= revs; rev++ {
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
			return historyDoc(rev), store.Event{Kind: "transition"}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	b, _ := os.ReadFile(jp)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if !bytes.Contains(lines[39], []byte(`"delta":`)) {
		t.Fatalf("line 40 is not a delta: %.100s", lines[39])
	}
	lines[39] = bytes.Replace(lines[39], []byte(`"transition"`), []byte(`"trAnsition"`), 1)
	os.WriteFile(jp, bytes.Join(lines, nil), 0o600)

	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Problems) != 2 {
		t.Fatalf("journal: %v %v", j.Problems, err)
	}
	items, err := s.JournalItems(wfID, "history")
	if !errors.Is(err, store.ErrChain) {
		t.Fatalf("Items: %v, want the broken chain said", err)
	}
	if len(items) != revs {
		t.Fatalf("%d history moves, want %d", len(items), revs)
	}
	for i, it := range items {
		if want := fmt.Sprintf(`{"move":%d}`, i+1); string(it) != want {
			t.Fatalf("move %d is %s, want %s", i, it, want)
		}
	}
}

// heartbeatDoc is a record whose only change from one revision to the next is its owner's
// heartbeat (what the Stop hook writes every 2 minutes of a live session), held next to pad
// bytes of other state.
func heartbeatDoc(n int64, pad int) []byte {
	doc, _ := json.Marshal(map[string]any{
		"version": "2.0", "workflow_id": wfID, "type": "apex", "state": "implement", "status": "active", "revision": n,
		"owner":   map[string]any{"session_id": "s1", "heartbeat": fixedNow.Add(time.Duration(n) * 2 * time.Minute)},
		"context": strings.Repeat("c", pad),
	})
	return doc
}

// journalBytes is what the journal of wfID holds: its active file and its sealed segments.
func journalBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(dir, "journal"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, wfID) {
			fi, ferr := d.Info()
			if ferr != nil {
				return ferr
			}
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHeartbeatGrowsTheJournalByItsChange: a heartbeat changes a few bytes of the record, and
// the journal grows by about one line holding that change per heartbeat, whatever the size of
// the record: a record near its 1 MiB cap does not add a full copy of itself every few dozen
// heartbeats (a full line every 32 lines made that about 1 MiB an hour of an idle session).
func TestHeartbeatGrowsTheJournalByItsChange(t *testing.T) {
	const beats = 40
	for _, tc := range []struct {
		name string
		pad  int
	}{
		{"small record", 1 << 10},
		{"record near the cap", 1<<20 - 4<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
			commit := func(n int64) {
				t.Helper()
				if _, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
					return heartbeatDoc(n, tc.pad), store.Event{Kind: "heartbeat"}, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			commit(1)
			before := journalBytes(t, dir)
			for n := int64(2); n <= beats+1; n++ {
				commit(n)
			}
			j, err := s.ReadJournal(wfID)
			if err != nil || len(j.Records) != beats+1 {
				t.Fatalf("journal: %d records, %v", len(j.Records), err)
			}
			// A heartbeat's own line: the change and the line's fixed members.
			var line int
			for _, r := range j.Records[1:] {
				if r.Delta != nil {
					line = max(line, len(r.Delta)+400)
				}
			}
			per := (journalBytes(t, dir) - before) / beats
			if line == 0 || per > int64(2*line) {
				t.Fatalf("%d heartbeats on a %d-byte record added %d bytes to the journal each, want at most %d (twice a heartbeat's line)",
					beats, len(heartbeatDoc(1, tc.pad)), per, 2*line)
			}
			t.Logf("%d heartbeats on a %d-byte record: %d journal bytes each", beats, len(heartbeatDoc(1, tc.pad)), per)
			// The journal still rebuilds the latest state.
			os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte(`{"version":"2.0","workflow_id":"`), 0o600)
			if w, err := s.ReadWorkflow(); err != nil || !bytes.Equal(w.Data, heartbeatDoc(beats+1, tc.pad)) {
				t.Fatalf("rebuilt revision %d, want %d (%v)", w.Revision, beats+1, err)
			}
		})
	}
}

// An event's detail is cut to store.MaxEventDetail bytes (a remote's line may hold a longer
// one). The cut split a character (the journal then held U+FFFD in its place), kept the start
// of a secret the cut ended inside (scanned after the cut, it had no secret's shape left), and
// could end right after a token glued to more text and so make one, refused as if the detail
// held it. The whole detail is
// scanned, and the cut ends between characters and before such a word.
func TestEventDetailCut(t *testing.T) {
	tok := secrettest.GluedToken(t)
	body := strings.TrimSuffix(tok, "-x")
	secret := secrettest.Shapes()[0].Text
	for _, tc := range []struct {
		name, detail string
		refused      bool
	}{
		{"a wide character", strings.Repeat("a", store.MaxEventDetail-1) + "é and more", false},
		{"a secret across the cut", strings.Repeat("a", store.MaxEventDetail-10) + " " + secret + " more", true},
		{"a glued token", strings.Repeat("a", store.MaxEventDetail-len(body)-1) + " " + tok + " more", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (secrets.ScanString(tc.detail) != nil) != tc.refused {
				t.Fatal("the whole detail has a secret's shape, or has none where the case needs one")
			}
			s, _ := newStore(t)
			_, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
				return record("wf-1", 1, "plan"), store.Event{Kind: "start", Detail: tc.detail}, nil
			})
			if tc.refused {
				if _, ok := errors.AsType[*secrets.Finding](err); !ok {
					t.Fatalf("a detail holding a secret past the cut: err = %v, want it refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			j, err := s.ReadJournal("wf-1")
			if err != nil || len(j.Records) != 1 {
				t.Fatalf("journal: %d records (%v)", len(j.Records), err)
			}
			d := j.Records[0].Event.Detail
			if len(d) > store.MaxEventDetail || !utf8.ValidString(d) || strings.ContainsRune(d, utf8.RuneError) || !strings.HasPrefix(d, "aaaa") {
				t.Errorf("detail kept as %d bytes: %q", len(d), d)
			}
			if f := secrets.ScanString(d); f != nil {
				t.Errorf("detail kept with a secret's shape (%s): %q", f.Rule, d)
			}
		})
	}
}
