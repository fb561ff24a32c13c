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
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/store"
)

// theirLine is another machine's line of wfID: revisions 1..n, the first shared with ours.
func theirLine(n int) []store.LineRecord {
	states := []string{"analyze", "plan", "implement", "review", "done"}
	line := make([]store.LineRecord, n)
	for i := range line {
		line[i] = store.LineRecord{Revision: int64(i + 1), Event: store.Event{Kind: "sync", Detail: "from origin"},
			Snapshot: record(wfID, int64(i+1), "their-"+states[i%len(states)])}
	}
	return line
}

// ourLine writes revisions 1..n of wfID here.
func ourLine(t *testing.T, s *store.Store, n int) store.Workflow {
	t.Helper()
	for i := range n {
		if _, err := s.UpdateWorkflow(setNext(wfID, "ours"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	w, err := s.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAdoptLine: the other line becomes the active workflow, its journal whole, and ours is
// kept in a conflict archive with its journal; a refusing check or a malformed line changes
// nothing.
func TestAdoptLine(t *testing.T) {
	bad := theirLine(3)
	bad[1].Revision = 5
	other := theirLine(2)
	other[1].Snapshot = record("debug-20261123T100000Z-dddd", 2, "x")
	cases := []struct {
		name    string
		ours    int
		line    []store.LineRecord
		check   func(store.Workflow) error
		wantErr string
	}{
		{"longer", 2, theirLine(4), nil, ""},
		{"shorter", 4, theirLine(2), nil, ""},
		{"refused by check", 2, theirLine(3), func(store.Workflow) error { return errors.New("moved") }, "moved"},
		{"gap in the line", 2, bad, nil, "not revision 2"},
		{"another workflow", 2, other, nil, "not revision 2"},
		{"empty", 2, nil, nil, "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
			before := ourLine(t, s, tc.ours)
			info, res, err := s.AdoptLine("conflict", store.LineOf(tc.line), tc.check)
			w, rerr := s.ReadWorkflow()
			if rerr != nil {
				t.Fatal(rerr)
			}
			archives, _ := s.ListArchives()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("AdoptLine = %v, want an error saying %q", err, tc.wantErr)
				}
				if !bytes.Equal(w.Data, before.Data) || len(archives) != 0 {
					t.Fatalf("a refused adoption changed something: r%d, %d archives", w.Revision, len(archives))
				}
				if m, _ := filepath.Glob(filepath.Join(dir, "archive", "conflict-*")); len(m) != 0 {
					t.Fatalf("left %v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tip := tc.line[len(tc.line)-1]
			if !res.Changed || res.Revision != tip.Revision || w.Revision != tip.Revision || !bytes.Equal(w.Data, tip.Snapshot) {
				t.Fatalf("active r%d %s, want their r%d", w.Revision, w.Data, tip.Revision)
			}
			recs, err := s.ReadJournalSince(wfID, 0)
			if err != nil || len(recs) != len(tc.line) {
				t.Fatalf("journal holds %d records (%v), want %d", len(recs), err, len(tc.line))
			}
			for i, r := range recs {
				if r.Revision != int64(i+1) || !bytes.Equal(r.Snapshot, tc.line[i].Snapshot) || r.Event.Kind != "sync" {
					t.Fatalf("journal record %d is r%d %s", i, r.Revision, r.Snapshot)
				}
			}
			if len(archives) != 1 || archives[0].Dir != info.Dir || archives[0].Reason != "conflict" || archives[0].Revision != before.Revision {
				t.Fatalf("archives %+v, want ours at r%d", archives, before.Revision)
			}
			snap, j, err := s.ReadArchive(info.Dir)
			if err != nil || !bytes.Equal(snap, before.Data) || len(j.Records) != tc.ours {
				t.Fatalf("archive holds %s and %d journal records (%v)", snap, len(j.Records), err)
			}
			// The line goes on as any other.
			if res, err := s.UpdateWorkflow(setNext(wfID, "after")); err != nil || res.Revision != tip.Revision+1 {
				t.Fatalf("update after adopting: %+v %v", res, err)
			}
		})
	}
}

// adoptCases are the adoptions the fault and power-loss suites cut: of a short line of ours,
// and of one long enough to have sealed segments, which go to the archive with it.
var adoptCases = []struct {
	name string
	ours int
	opts []store.Option
}{
	{"plain", 3, nil},
	{"sealed", 70, []store.Option{store.WithJournalCompaction(1)}},
}

// TestFaultInjectionAdopt fails each file system operation of an adoption in turn, once and
// from there on (what a kill at that operation leaves), and checks, after recovery on a clean
// file system, that the workflow is either ours with our journal and no archive, or theirs
// with ours archived whole; never neither, never a mix; and theirs when the call said done.
//
// In the "sealed" run ours is long enough to have been compacted: its sealed segments go to
// the archive with it, and none of them may shadow the adopted line's revisions.
func TestFaultInjectionAdopt(t *testing.T) {
	for _, tc := range adoptCases {
		t.Run(tc.name, func(t *testing.T) { faultInjectionAdopt(t, tc.ours, tc.opts) })
	}
}

func faultInjectionAdopt(t *testing.T, ourN int, opts []store.Option) {
	template := filepath.Join(t.TempDir(), "template")
	var ours store.Workflow
	{
		s := mustOpen(t, template, append([]store.Option{noSync}, opts...)...)
		ours = ourLine(t, s, ourN)
		if len(opts) > 0 {
			if segs, _ := filepath.Glob(filepath.Join(template, "journal", "*.sealed", "*")); len(segs) == 0 {
				t.Fatal("the template has no sealed segments")
			}
		}
	}
	line := theirLine(2) // shorter than ours: the snapshot alone would not roll it forward
	run := func(t *testing.T, k int, persistent bool) (*durabletest.Faulty, string, error) {
		s, ff, dir, done := faultyCopy(t, template, k, persistent, opts...)
		defer done()
		_, _, err := s.AdoptLine("conflict", store.LineOf(line), nil)
		return ff, dir, err
	}
	ff, _, err := run(t, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	n := ff.Ops()
	t.Logf("an adoption is %d operations", n)
	theirs := 0
	for _, persistent := range []bool{false, true} {
		for k := 1; k <= n; k++ {
			ff, dir, aerr := run(t, k, persistent)
			fail := func(format string, a ...any) {
				t.Helper()
				t.Fatalf("k=%d persistent=%v: "+format+"\n%s", append([]any{k, persistent}, append(a, strings.Join(ff.Trace(), "\n"))...)...)
			}
			s := openNoSync(t, dir, opts...)
			w, err := s.ReadWorkflow()
			if err != nil {
				fail("workflow unreadable: %v", err)
			}
			recs, err := s.ReadJournalSince(wfID, 0)
			if err != nil {
				fail("journal: %v", err)
			}
			archives, err := s.ListArchives()
			if err != nil {
				fail("archives: %v", err)
			}
			dirs, _ := filepath.Glob(filepath.Join(dir, "archive", "conflict-*"))
			switch {
			case bytes.Equal(w.Data, ours.Data):
				if aerr == nil {
					fail("the adoption said done, yet ours is active")
				}
				if len(recs) != ourN || len(archives) != 0 || len(dirs) != 0 {
					fail("ours is active with %d journal records, archives %+v, dirs %v", len(recs), archives, dirs)
				}
			case bytes.Equal(w.Data, line[1].Snapshot):
				theirs++
				if len(recs) != 2 || len(archives) != 1 || len(dirs) != 1 {
					fail("theirs is active with %d journal records, archives %+v, dirs %v", len(recs), archives, dirs)
				}
				for i, r := range recs {
					if !bytes.Equal(r.Snapshot, line[i].Snapshot) {
						fail("journal record %d is r%d %s, not theirs", i, r.Revision, r.Snapshot)
					}
				}
				snap, j, err := s.ReadArchive(archives[0].Dir)
				if err != nil || !bytes.Equal(snap, ours.Data) || len(j.Records) != ourN {
					fail("our archived copy: %s, %d records, %v", snap, len(j.Records), err)
				}
			default:
				fail("active is neither copy: %s", w.Data)
			}
			if _, err := os.Stat(filepath.Join(dir, "archive", "pending.json")); err == nil {
				fail("the marker is left after recovery")
			}
			if res, err := s.UpdateWorkflow(setNext(wfID, "after")); err != nil || res.Revision != w.Revision+1 {
				fail("update after recovery: %+v %v", res, err)
			}
		}
	}
	if theirs == 0 {
		t.Fatal("no faulted run got past the commit point: the test proved nothing")
	}
}

// TestPowerLossAdopt cuts the power at every operation of an AdoptLine, on a file system that
// keeps only what was fsynced: after the reboot (and the recovery the next locked write runs)
// the active workflow is our copy with its whole journal, or their line with ours archived
// whole; an acknowledged adoption is theirs. Before, a journal replaced whose directory could
// not be synced was acknowledged, and the power loss brought our copy back.
func TestPowerLossAdopt(t *testing.T) {
	for _, tc := range adoptCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			line := theirLine(2)
			// Our line is made once; each cut adopts over a clone of it.
			made := simfs.New()
			ours := ourLine(t, mustOpen(t, dir, append([]store.Option{store.WithFS(made)}, tc.opts...)...), tc.ours)
			checked := 0
			for k := 1; ; k++ {
				f := made.Clone()
				s := mustOpen(t, dir, append([]store.Option{store.WithFS(f)}, tc.opts...)...)
				f.CrashAt = f.Ops() + k
				_, _, aerr := s.AdoptLine("conflict", store.LineOf(line), nil)
				s.Close()
				if !f.Crashed() {
					break // k is past the adoption's last operation
				}
				checked++
				what := fmt.Sprintf("crash at %d (the adoption said %v)", k, aerr)
				rs := mustOpen(t, dir, append([]store.Option{store.WithFS(f.Recover())}, tc.opts...)...)
				if _, err := rs.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) { return nil, store.Event{}, nil }); err != nil {
					t.Fatalf("%s: recovery: %v", what, err)
				}
				w, err := rs.ReadWorkflow()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				recs, err := rs.ReadJournalSince(wfID, 0)
				if err != nil {
					t.Fatalf("%s: journal: %v", what, err)
				}
				archives, err := rs.ListArchives()
				if err != nil {
					t.Fatalf("%s: archives: %v", what, err)
				}
				switch {
				case bytes.Equal(w.Data, ours.Data):
					if aerr == nil {
						t.Fatalf("%s: acknowledged, yet ours is active after the reboot", what)
					}
					if len(recs) != tc.ours || len(archives) != 0 {
						t.Fatalf("%s: ours is active with %d journal records, archives %+v", what, len(recs), archives)
					}
				case bytes.Equal(w.Data, line[1].Snapshot):
					if len(recs) != 2 || len(archives) != 1 {
						t.Fatalf("%s: theirs is active with %d journal records, archives %+v", what, len(recs), archives)
					}
					snap, j, err := rs.ReadArchive(archives[0].Dir)
					if err != nil || !bytes.Equal(snap, ours.Data) || len(j.Records) != tc.ours {
						t.Fatalf("%s: our archived copy: %s, %d records, %v", what, snap, len(j.Records), err)
					}
				default:
					t.Fatalf("%s: active is neither copy: %s", what, w.Data)
				}
				rs.Close()
			}
			crashPointsChecked(t, checked, 20, "an adoption")
		})
	}
}

// TestNothingBuiltOnAnAdoptionNotDurable: an adoption whose journal/ could not be synced after
// the replace is not acknowledged, and a write after it is acknowledged only once the adopted
// journal is durable: after a power loss the workflow, its journal and its archive agree.
// Before, the next write finished the adoption (snapshot, marker) without it, and after the
// power loss the snapshot was their line's and the write's, the journal ours again.
func TestNothingBuiltOnAnAdoptionNotDurable(t *testing.T) {
	for _, fails := range []int32{1, 2} {
		t.Run(fmt.Sprint(fails), func(t *testing.T) {
			dir := t.TempDir()
			f := simfs.New()
			sf := &durabletest.DirSyncFails{FS: f, Dir: "journal"}
			s := mustOpen(t, dir, store.WithFS(sf))
			ours := ourLine(t, s, 3)
			sf.Fails.Store(fails)
			if _, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(2)), nil); !durable.IsNotDurable(err) {
				t.Fatalf("the adoption not durable said %v", err)
			}
			res, uerr := s.UpdateWorkflow(setNext(wfID, "after"))
			s.Close()
			rs := mustOpen(t, dir, store.WithFS(f.Recover()))
			w, err := rs.ReadWorkflow()
			if err != nil {
				t.Fatal(err)
			}
			recs, err := rs.ReadJournalSince(wfID, 0)
			if err != nil || len(recs) == 0 {
				t.Fatalf("journal: %d records, %v", len(recs), err)
			}
			if last := recs[len(recs)-1]; last.Revision != w.Revision || !bytes.Equal(last.Snapshot, w.Data) {
				t.Fatalf("after the power loss (the write said r%d, %v) the workflow is r%d %s, its journal ends at r%d %s", res.Revision, uerr, w.Revision, w.Data, last.Revision, last.Snapshot)
			}
			archives, err := rs.ListArchives()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case uerr == nil:
				if w.Revision != 3 || len(recs) != 3 || !bytes.Equal(recs[1].Snapshot, theirLine(2)[1].Snapshot) || len(archives) != 1 {
					t.Fatalf("the write was acknowledged, yet after the power loss the workflow is r%d with %d journal records, %d archives", w.Revision, len(recs), len(archives))
				}
			case fails == 1:
				t.Fatalf("the write after a journal/ synced again was refused: %v", uerr)
			case !bytes.Equal(w.Data, ours.Data) && !bytes.Equal(w.Data, theirLine(2)[1].Snapshot):
				t.Fatalf("the write was refused (%v), yet the workflow is %s", uerr, w.Data)
			}
		})
	}
}

// TestRetentionKeepsTheActiveWorkflowsConflictArchive: the copy of the active workflow that lost
// a race, archived as a conflict by AdoptLine, is where a sync killed before its replay finds the
// changes it still owes (remotesync's intent, settled by the next sync). Archives made before
// that sync (records filed with ArchiveRecord, here one more than the retention) must not prune
// it while its workflow is active; once it is not, retention treats it as any other.
func TestRetentionKeepsTheActiveWorkflowsConflictArchive(t *testing.T) {
	s, dir := newStore(t)
	ourLine(t, s, 3)
	info, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(4)), nil)
	if err != nil {
		t.Fatal(err)
	}
	fileOthers := func(from int) {
		for i := from; i < from+store.DefaultRetention+1; i++ {
			doc := record(fmt.Sprintf("debug-20261123T1000%02dZ-dddd", i), 1, "x")
			if _, err := s.ArchiveRecord(doc, "conflict", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	fileOthers(0)
	if _, err := os.Stat(filepath.Join(dir, "archive", info.Dir, store.WorkflowFile)); err != nil {
		t.Fatalf("the conflict archive a replay may still need was pruned: %v", err)
	}
	archives, err := s.ListArchives()
	if err != nil || !slices.ContainsFunc(archives, func(a store.ArchiveInfo) bool { return a.Dir == info.Dir }) {
		t.Fatalf("the index does not list it: %+v %v", archives, err)
	}
	if _, err := s.Archive("abandoned"); err != nil {
		t.Fatal(err)
	}
	fileOthers(10)
	if _, err := os.Stat(filepath.Join(dir, "archive", info.Dir)); !os.IsNotExist(err) {
		t.Fatalf("kept after its workflow ended: %v", err)
	}
}

// TestRetentionKeepsTheConflictArchiveAReplayIsOwed: a sync cut short before its replay leaves
// its intent (remotesync's "remote-replay" document, naming the lost copy by the SHA-256 of its
// record). A later conflict archive of the same workflow (here a seed file's second copy, filed
// by ArchiveRecord) is then the newest one; with a retention of 1 it must not prune the archive
// the intent still owes a replay from.
func TestRetentionKeepsTheConflictArchiveAReplayIsOwed(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1))
	w := ourLine(t, s, 3)
	var c bytes.Buffer
	if err := json.Compact(&c, w.Data); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.Bytes())
	intent := fmt.Sprintf(`{"workflow_id":%q,"common":1,"theirs":4,"mine":3,"at":"2026-11-23T10:00:00Z","lost":%q}`, wfID, hex.EncodeToString(sum[:]))
	if err := s.Write("remote-replay", []byte(intent)); err != nil {
		t.Fatal(err)
	}
	owed, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(4)), nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.ArchiveRecord(record(wfID, 2, "legacy-copy"), "conflict", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "archive", owed.Dir, store.WorkflowFile)); err != nil {
		t.Fatalf("the conflict archive a replay is owed from was pruned (pruned %v): %v", second.Pruned, err)
	}
	// Once the replay is done (the intent cleared), retention treats it as any other.
	if err := s.Write("remote-replay", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveRecord(record(wfID, 2, "legacy-copy-2"), "conflict", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "archive", owed.Dir)); !os.IsNotExist(err) {
		t.Fatalf("kept after the replay was done: %v", err)
	}
}

// TestRetentionKeepsConflictArchivesWhileTheIntentIsUnreadable: when remotesync's intent is
// there but cannot be read (here a directory in its place), which conflict archive it owes a
// replay from is not known, so retention removes none of the active workflow's.
func TestRetentionKeepsConflictArchivesWhileTheIntentIsUnreadable(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1))
	ourLine(t, s, 3)
	if err := os.Mkdir(filepath.Join(dir, "remote-replay.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	first, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(4)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveRecord(record(wfID, 2, "legacy-copy"), "conflict", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "archive", first.Dir, store.WorkflowFile)); err != nil {
		t.Fatalf("a conflict archive was pruned while the intent could not be read: %v", err)
	}
}

// A line whose journal would be larger than a journal may be is refused as ErrLineTooLarge (by
// which a sync tells that every try fails the same way), with nothing written.
func TestAdoptLineTooLarge(t *testing.T) {
	store.SetMaxLine(t, 64)
	s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
	before := ourLine(t, s, 2)
	if _, _, err := s.AdoptLine("conflict", store.LineOf(theirLine(3)), nil); !errors.Is(err, store.ErrLineTooLarge) {
		t.Fatalf("AdoptLine = %v, want ErrLineTooLarge", err)
	}
	w, err := s.ReadWorkflow()
	if err != nil || !bytes.Equal(w.Data, before.Data) {
		t.Fatalf("a refused adoption changed the workflow: r%d (%v)", w.Revision, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "archive", "conflict-*")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}
