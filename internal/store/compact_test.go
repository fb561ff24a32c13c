package store_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// compactAt is the journal size past which these tests' stores compact: a crashDoc full line
// is about 4 KB, so a compaction comes at most every 32 transitions.
const compactAt = 8 << 10

var sealed = "journal/" + wfID + ".sealed"

// transition moves the crash writer's workflow (crashDoc) to its next revision.
func transition(s *store.Store) (store.Result, error) {
	return s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
		rev := int64(1)
		if cur != nil {
			var err error
			if rev, err = revision(cur); err != nil {
				return nil, store.Event{}, err
			}
			rev++
		}
		return crashDoc(rev), store.Event{Kind: "transition", Detail: fmt.Sprint("to ", rev)}, nil
	})
}

// transitions makes n transitions on s.
func transitions(t testing.TB, s *store.Store, n int) {
	t.Helper()
	for range n {
		if _, err := transition(s); err != nil {
			t.Fatal(err)
		}
	}
}

func revision(doc []byte) (int64, error) {
	var m struct {
		Revision int64 `json:"revision"`
	}
	err := json.Unmarshal(doc, &m)
	return m.Revision, err
}

// checkHistory fails unless the workflow stands at rev and its whole journal, sealed segments
// and active file, holds every revision from 1 to rev once, in order, each replaying to the
// record written, as history, show and sync read it.
func checkHistory(t *testing.T, s *store.Store, rev int64, what string) {
	t.Helper()
	w, err := s.ReadWorkflow()
	if err != nil || w.Revision != rev || !bytes.Equal(w.Data, crashDoc(rev)) {
		t.Fatalf("%s: workflow at %d (%v), want %d", what, w.Revision, err, rev)
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Problems) != 0 || int64(len(j.Records)) != rev {
		t.Fatalf("%s: journal %d records, problems %v (%v), want %d", what, len(j.Records), j.Problems, err, rev)
	}
	states, err := j.States()
	if err != nil || int64(len(states)) != rev {
		t.Fatalf("%s: journal replays %d of %d (%v)", what, len(states), rev, err)
	}
	for i, st := range states {
		if st.Seq != int64(i+1) || st.Revision != int64(i+1) || !bytes.Equal(st.Snapshot, crashDoc(st.Revision)) {
			t.Fatalf("%s: record %d is seq %d revision %d: %.80s", what, i, st.Seq, st.Revision, st.Snapshot)
		}
	}
	since, err := s.ReadJournalSince(wfID, 0)
	if err != nil || int64(len(since)) != rev {
		t.Fatalf("%s: ReadJournalSince(0) gives %d of %d (%v)", what, len(since), rev, err)
	}
}

// TestJournalCompaction: a long journal is sealed into segments whose bytes, with the active
// journal's, are exactly the journal an uncompacted store writes; every reader sees the whole
// history; a damaged snapshot rebuilds from the active journal alone; an archive takes the
// segments along.
func TestJournalCompaction(t *testing.T) {
	// No power is cut: what is compared is the bytes written, not what a sync keeps.
	s, dir := newStore(t, noSync, store.WithJournalCompaction(compactAt), store.WithClock(clockFrom(fixedNow)))
	plain, plainDir := newStore(t, noSync, store.WithClock(clockFrom(fixedNow)))
	const total = 150
	for range total {
		if _, err := transition(s); err != nil {
			t.Fatal(err)
		}
		if _, err := transition(plain); err != nil {
			t.Fatal(err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
	if len(segs) < 3 {
		t.Fatalf("%d segments after %d transitions", len(segs), total)
	}
	var all []byte
	for i := range segs {
		b, err := os.ReadFile(filepath.Join(dir, sealed, fmt.Sprintf("%d.jsonl", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	active, _ := os.ReadFile(filepath.Join(dir, "journal", wfID+".jsonl"))
	if !bytes.Contains(active[:bytes.IndexByte(active, '\n')], []byte(`"snapshot":`)) {
		t.Fatalf("the active journal does not start with a full line: %.120s", active)
	}
	if want, _ := os.ReadFile(filepath.Join(plainDir, "journal", wfID+".jsonl")); !bytes.Equal(append(all, active...), want) {
		t.Fatalf("segments and active journal (%d bytes) differ from the uncompacted journal (%d bytes)", len(all)+len(active), len(want))
	}
	checkHistory(t, s, total, "compacted")
	for after := int64(0); after <= total; after++ {
		recs, err := s.ReadJournalSince(wfID, after)
		if err != nil || int64(len(recs)) != total-after {
			t.Fatalf("ReadJournalSince(%d): %d records (%v)", after, len(recs), err)
		}
		for i, r := range recs {
			if r.Revision != after+int64(i)+1 || !bytes.Equal(r.Snapshot, crashDoc(r.Revision)) {
				t.Fatalf("ReadJournalSince(%d): record %d is revision %d: %.80s", after, i, r.Revision, r.Snapshot)
			}
		}
	}
	// A damaged snapshot: rebuilt from the active journal.
	os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte(`{"version":"2.0","workfl`), 0o600)
	checkHistory(t, s, total, "rebuilt")

	info, err := s.Archive("completed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sealed)); !os.IsNotExist(err) {
		t.Fatalf("the sealed journal stayed behind the archive: %v", err)
	}
	_, j, err := s.ReadArchive(info.Dir)
	if err != nil || len(j.Records) != total || len(j.Problems) != 0 {
		t.Fatalf("archived journal: %d records, problems %v (%v)", len(j.Records), j.Problems, err)
	}
	if states, err := j.States(); err != nil || len(states) != total || !bytes.Equal(states[0].Snapshot, crashDoc(1)) {
		t.Fatalf("archived journal replays %d of %d (%v)", len(states), total, err)
	}
}

// compactTemplate makes a state directory whose next transition compacts the journal, and
// returns its revision.
func compactTemplate(t *testing.T, dir string) int64 {
	t.Helper()
	s := mustOpen(t, dir, noSync, store.WithJournalCompaction(compactAt))
	defer s.Close()
	for rev := int64(1); rev < 200; rev++ {
		if fi, err := os.Stat(filepath.Join(dir, "journal", wfID+".jsonl")); err == nil && fi.Size() > compactAt {
			probe := filepath.Join(t.TempDir(), "probe")
			durabletest.CopyTree(t, dir, probe)
			ps := mustOpen(t, probe, noSync, store.WithJournalCompaction(compactAt))
			if _, err := transition(ps); err != nil {
				t.Fatal(err)
			}
			ps.Close()
			if _, err := os.Stat(filepath.Join(probe, sealed)); err == nil {
				return rev - 1
			}
		}
		if _, err := transition(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no transition compacted the journal")
	return 0
}

// TestFaultInjectionCompaction fails each file system operation of a transition that
// compacts the journal, once and from there on (what a kill at that operation leaves), and
// checks with a clean file system that the workflow is at the old or the new revision (the new
// one if acknowledged), that the whole history is there once, and that the next compactions
// and a rebuild from the journal work from whatever was left.
func TestFaultInjectionCompaction(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	rev := compactTemplate(t, template)
	// One time for every faulty transition, so that the records two of them write are the same.
	at := time.Now()
	run := func(t *testing.T, k int, persistent bool) (*durabletest.Faulty, string, error) {
		s, ff, dir, done := faultyCopy(t, template, k, persistent, store.WithJournalCompaction(compactAt), store.WithClock(func() time.Time { return at }))
		defer done()
		_, err := transition(s)
		return ff, dir, err
	}
	ff, dir, err := run(t, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sealed)); err != nil {
		t.Fatal("the clean transition did not compact")
	}
	n := ff.Ops()
	t.Logf("a compacting transition is %d operations", n)
	// Many fault points leave the same files (a failed write and the same write failing from
	// there on, or two operations of one step that is undone as a whole): what the store does
	// next depends only on what it finds, so the long run after the faults is made once for
	// each state left.
	seen := map[string]string{}
	for _, persistent := range []bool{false, true} {
		for k := 1; k <= n; k++ {
			ff, dir, terr := run(t, k, persistent)
			what := fmt.Sprintf("k=%d persistent=%v (transition said %v)", k, persistent, terr)
			left := treeState(t, dir)
			s := openNoSync(t, dir, store.WithJournalCompaction(compactAt))
			w, err := s.ReadWorkflow()
			if err != nil || (w.Revision != rev && w.Revision != rev+1) || (terr == nil && w.Revision != rev+1) {
				t.Fatalf("%s: workflow at %d (%v), want %d or %d\n%s", what, w.Revision, err, rev, rev+1, strings.Join(ff.Trace(), "\n"))
			}
			checkHistory(t, s, w.Revision, what)
			if same, ok := seen[left]; ok {
				t.Logf("%s leaves what %s left", what, same)
				s.Close()
				continue
			}
			seen[left] = what
			// Far enough for two more compactions, then a rebuild from the journal alone.
			for range 70 {
				if _, err := transition(s); err != nil {
					t.Fatalf("%s: transition after the faults: %v", what, err)
				}
			}
			os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte(`{"version":"2.0","workfl`), 0o600)
			checkHistory(t, s, w.Revision+70, what+", then 70 more")
			for _, d := range []string{"journal", sealed} {
				if tmps, _ := filepath.Glob(filepath.Join(dir, d, ".tmp-*")); len(tmps) > 0 {
					t.Fatalf("%s: temp files left after the next compaction: %v", what, tmps)
				}
			}
			s.Close()
		}
	}
	t.Logf("%d fault points left %d different states", 2*n, len(seen))
}

// treeState is every file under dir with its bytes, in one string: two directories whose
// treeStates are equal hold the same files (temp files' random suffixes aside).
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		// A temp file's name ends in a random suffix: any other would be as likely.
		if i := strings.LastIndexByte(rel, '-'); strings.HasPrefix(d.Name(), ".tmp-") && i >= 0 {
			rel = rel[:i+1] + "*"
		}
		fmt.Fprintf(&b, "%q %v\n", rel, d.Type())
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%d %q\n", len(data), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPowerLossCompaction cuts the power at every operation of a transition that compacts the
// journal, on a file system that keeps only what was fsynced: after the reboot the workflow is
// at the old or the new revision (the new one if acknowledged), with its whole history.
func TestPowerLossCompaction(t *testing.T) {
	dir := t.TempDir()
	// Find how many transitions from empty make the first compaction, keeping the files as
	// they were before it: each cut makes that transition on a clone of them.
	first := 0
	var before *simfs.FS
	{
		f := simfs.New()
		s, err := store.Open(dir, store.WithFS(f), store.WithJournalCompaction(compactAt))
		if err != nil {
			t.Fatal(err)
		}
		for first = 1; first < 200; first++ {
			before = f.Clone()
			if _, err := transition(s); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Lstat(sealed); err == nil {
				break
			}
		}
		s.Close()
	}
	checked := 0
	for k := 1; ; k++ {
		f := before.Clone()
		s, err := store.Open(dir, store.WithFS(f), store.WithJournalCompaction(compactAt))
		if err != nil {
			t.Fatal(err)
		}
		f.CrashAt = f.Ops() + k
		_, terr := transition(s)
		s.Close()
		if !f.Crashed() {
			break // k is past the transition's last operation
		}
		checked++
		rs, err := store.Open(dir, store.WithFS(f.Recover()), store.WithJournalCompaction(compactAt))
		if err != nil {
			t.Fatal(err)
		}
		w, err := rs.ReadWorkflow()
		want := int64(first - 1)
		if err != nil || w.Revision < want || w.Revision > want+1 || (terr == nil && w.Revision != want+1) {
			t.Fatalf("crash at %d: workflow at %d (%v), transition said %v", k, w.Revision, err, terr)
		}
		checkHistory(t, rs, w.Revision, fmt.Sprintf("crash at %d", k))
		for range 40 {
			if _, err := transition(rs); err != nil {
				t.Fatalf("crash at %d: transition after reboot: %v", k, err)
			}
		}
		checkHistory(t, rs, w.Revision+40, fmt.Sprintf("crash at %d, then 40 more", k))
		rs.Close()
	}
	crashPointsChecked(t, checked, 10, "a compacting transition")
}

// TestPowerLossArchiveSealed cuts the power at every operation of archiving a workflow whose
// journal has sealed segments: after the reboot (and the recovery the next write runs) the
// workflow is active or archived, and wherever it is, its whole history is with it.
func TestPowerLossArchiveSealed(t *testing.T) {
	dir := t.TempDir()
	const total = 80
	open := func(f *simfs.FS) *store.Store {
		s, err := store.Open(dir, store.WithFS(f), store.WithJournalCompaction(compactAt))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The workflow is made once; each cut archives a clone of it (a store keeps nothing of its
	// own between calls: the files are all there is).
	made := simfs.New()
	s := open(made)
	transitions(t, s, total)
	s.Close()
	if _, err := made.Lstat(sealed); err != nil {
		t.Fatal("no sealed segments to archive")
	}
	checked := 0
	for k := 1; ; k++ {
		f := made.Clone()
		s := open(f)
		f.CrashAt = f.Ops() + k
		_, aerr := s.Archive("completed")
		s.Close()
		if !f.Crashed() {
			break
		}
		checked++
		rec := f.Recover()
		rs, err := store.Open(dir, store.WithFS(rec), store.WithJournalCompaction(compactAt))
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("crash at %d (archive said %v)", k, aerr)
		// A locked read runs the recovery of an archive cut short.
		_, werr := rs.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) { return nil, store.Event{}, nil })
		if werr != nil {
			t.Fatalf("%s: recovery: %v", what, werr)
		}
		// The simulation does not make a cross-directory rename atomic (see
		// TestPowerLossArchive), so it may be briefly both; never neither, and the history is
		// whole where the workflow is.
		w, err := rs.ReadWorkflow()
		active := err == nil && w.ID == wfID
		activeWhole := false
		if active {
			j, err := rs.ReadJournal(wfID)
			activeWhole = err == nil && len(j.Records) == total && len(j.Problems) == 0
		}
		archived, archivedWhole := false, false
		names, _ := rec.ReadDirNames("archive")
		for _, d := range names {
			if _, j, err := rs.ReadArchive(d); err == nil && strings.HasPrefix(d, wfID) {
				archived = true
				archivedWhole = len(j.Records) == total && len(j.Problems) == 0
			}
		}
		switch {
		case !active && !archived:
			t.Fatalf("%s: the workflow is lost", what)
		case !activeWhole && !archivedWhole:
			t.Fatalf("%s: active=%v archived=%v, neither with its whole history", what, active, archived)
		case aerr == nil && (active || !archivedWhole):
			t.Fatalf("%s: acknowledged archive but active=%v, archived whole=%v", what, active, archivedWhole)
		case active && !archived:
			checkHistory(t, rs, total, what)
		}
		rs.Close()
	}
	crashPointsChecked(t, checked, 20, "an archive")
}

// TestCompactionOfOldJournal: a journal from before deltas (a whole snapshot on every line) is
// sealed as it stands by the first compaction, and still reads, replays and shows its history.
func TestCompactionOfOldJournal(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(compatState)); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir, store.WithJournalCompaction(1))
	w, err := s.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	jf := filepath.Join("journal", w.ID+".jsonl")
	old, _ := os.ReadFile(filepath.Join(dir, jf))
	before, err := s.ReadJournal(w.ID)
	if err != nil || len(before.Records) == 0 {
		t.Fatalf("old journal: %d records (%v)", len(before.Records), err)
	}
	res, err := s.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
		r.State = "review"
		return r, store.Event{Kind: "transition"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seg, err := os.ReadFile(filepath.Join(dir, "journal", w.ID+".sealed", "1.jsonl"))
	if err != nil || !bytes.Equal(seg, old) {
		t.Fatalf("the old journal was not sealed as it stood (%v)", err)
	}
	j, err := s.ReadJournal(w.ID)
	if err != nil || len(j.Problems) != 0 || len(j.Records) != len(before.Records)+1 {
		t.Fatalf("after compaction: %d records, problems %v (%v)", len(j.Records), j.Problems, err)
	}
	states, err := j.States()
	if err != nil || len(states) != len(j.Records) || !bytes.Equal(states[len(states)-1].Snapshot, res.Data) {
		t.Fatalf("after compaction the journal replays %d of %d (%v)", len(states), len(j.Records), err)
	}
	for i, r := range before.Records {
		if states[i].Revision != r.Revision || states[i].Event != r.Event {
			t.Fatalf("record %d became %+v, was %+v", i, states[i], r)
		}
	}
}

// TestReadJournalDuringCompactions reads the whole journal, without a lock, while another
// store instance transitions and compacts: every read holds revisions 1 to n, each once.
func TestReadJournalDuringCompactions(t *testing.T) {
	w, dir := newStore(t, store.WithJournalCompaction(compactAt))
	if _, err := transition(w); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	// The reader dawdles at every step, so that compactions land between them.
	r := mustOpen(t, dir, store.WithFS(slowFS{d}))
	done := make(chan error)
	go func() {
		for range 400 {
			if _, err := transition(w); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	reads := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if segs, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl")); len(segs) < 10 || reads < 10 {
				t.Fatalf("%d segments, %d reads: the reads did not overlap compactions", len(segs), reads)
			}
			return
		default:
		}
		j, err := r.ReadJournal(wfID)
		if err != nil || len(j.Problems) != 0 {
			t.Fatalf("read %d: %v %v", reads, err, j.Problems)
		}
		for i, rec := range j.Records {
			if rec.Seq != int64(i+1) {
				t.Fatalf("read %d: record %d is seq %d", reads, i, rec.Seq)
			}
		}
		reads++
	}
}

// slowFS pauses before each open, as long as a compaction's two replaces take or longer.
type slowFS struct{ durable.FS }

func (s slowFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	time.Sleep(5 * time.Millisecond)
	return s.FS.OpenFile(name, flag, perm)
}

// TestLostActiveJournalContinuesAfterItsSegments: when the active journal file is gone
// (removed by hand) or holds no readable line while sealed segments remain, the lines written
// next are numbered after the segments' last one. Numbered from 1 again, readers (which keep
// the first copy of each sequence number) would hide them behind the segments, and the next
// compaction (which seals only lines after the last segment's) would drop them.
func TestLostActiveJournalContinuesAfterItsSegments(t *testing.T) {
	for name, lose := range map[string]func(string) error{
		"removed": os.Remove,
		"garbage": func(p string) error { return os.WriteFile(p, []byte("not a journal line\n"), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t, store.WithJournalCompaction(compactAt))
			const before, after = 40, 80
			transitions(t, s, before)
			if _, err := os.Stat(filepath.Join(dir, sealed, "1.jsonl")); err != nil {
				t.Fatal("no sealed segment to continue after")
			}
			if err := lose(filepath.Join(dir, "journal", wfID+".jsonl")); err != nil {
				t.Fatal(err)
			}
			transitions(t, s, after)
			segs, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
			if len(segs) < 2 {
				t.Fatalf("%d segments: no compaction after the loss", len(segs))
			}
			j, err := s.ReadJournal(wfID)
			if err != nil {
				t.Fatal(err)
			}
			states, err := j.States()
			if err != nil {
				t.Fatalf("the journal does not replay: %v (problems %v)", err, j.Problems)
			}
			seen := map[int64]int{}
			for _, st := range states {
				seen[st.Revision]++
				if !bytes.Equal(st.Snapshot, crashDoc(st.Revision)) {
					t.Fatalf("revision %d replays as %.80s", st.Revision, st.Snapshot)
				}
			}
			for rev := int64(before + 1); rev <= before+after; rev++ {
				if seen[rev] != 1 {
					t.Fatalf("revision %d, written after the loss, is in the journal %d times (problems %v)", rev, seen[rev], j.Problems)
				}
			}
			since, err := s.ReadJournalSince(wfID, before)
			if err != nil || len(since) != after || since[0].Revision != before+1 || !bytes.Equal(since[after-1].Snapshot, crashDoc(before+after)) {
				t.Fatalf("ReadJournalSince(%d): %d records (%v), want %d", before, len(since), err, after)
			}
		})
	}
}

// TestLostSnapshotAndJournalReadFromTheSegments: when the snapshot and the active journal of a
// workflow are gone (removed by hand) but journal/<id>.sealed/ is left, its acknowledged
// history is still on record: the workflow is rebuilt from the newest sealed state and says
// that what came after may be lost, never read as no workflow (which would hide that history
// and let a new start bury it). It goes on after the segments, and the journal then replays
// whole. With the state directory read-only it is read from the segments without a repair.
// Segments that hold no readable line are reported as damaged.
func TestLostSnapshotAndJournalReadFromTheSegments(t *testing.T) {
	s, dir := newStore(t, store.WithJournalCompaction(compactAt))
	transitions(t, s, 70)
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	os.Remove(filepath.Join(dir, "journal", wfID+".jsonl"))
	segs, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
	if len(segs) < 2 {
		t.Fatalf("%d segments", len(segs))
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Records) == 0 {
		t.Fatalf("the segments: %v", err)
	}
	sealedRev := j.Records[len(j.Records)-1].Revision

	d := openDir(t, dir)
	ro := mustOpen(t, dir, store.WithFS(readOnly{d}))
	w, err := ro.ReadWorkflow()
	if err != nil || w.Revision != sealedRev || len(w.Notices) != 1 || !strings.Contains(w.Notices[0].Message, "sealed") {
		t.Fatalf("read-only: revision %d, notices %v (%v), want %d from the segments", w.Revision, w.Notices, err, sealedRev)
	}
	if _, err := os.Stat(filepath.Join(dir, store.WorkflowFile)); !os.IsNotExist(err) {
		t.Fatalf("a read-only read wrote the snapshot: %v", err)
	}
	w, err = s.ReadWorkflow()
	if err != nil || w.Revision != sealedRev || !bytes.Equal(w.Data, crashDoc(sealedRev)) {
		t.Fatalf("with the snapshot and journal gone: revision %d (%v), want %d from the segments", w.Revision, err, sealedRev)
	}
	if len(w.Notices) != 1 || w.Notices[0].Kind != "rebuilt" || !strings.Contains(w.Notices[0].Message, "journal/"+wfID+".jsonl is missing or gives no state") ||
		!strings.Contains(w.Notices[0].Message, fmt.Sprintf("after revision %d", sealedRev)) {
		t.Fatalf("notices %v", w.Notices)
	}
	const more = 40
	transitions(t, s, more)
	checkHistory(t, s, sealedRev+more, "after going on from the segments")

	// Nothing readable left in them: damaged, not absent, and no new workflow starts over it.
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	os.Remove(filepath.Join(dir, "journal", wfID+".jsonl"))
	segs, _ = filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
	for _, f := range segs {
		os.WriteFile(f, []byte("a damaged line\n"), 0o600)
	}
	_, err = s.ReadWorkflow()
	var de *store.DamagedError
	if !errors.As(err, &de) || len(de.Sealed) != 1 || de.Sealed[0] != sealed || !strings.Contains(err.Error(), sealed) {
		t.Fatalf("damaged segments: %v", err)
	}
	if _, err := s.UpdateWorkflow(setNext("another-1", "plan")); err == nil {
		t.Fatal("a new workflow was started over the damaged one")
	}
}

// readOnly is a state directory whose locks cannot be taken, as on a read-only file system.
type readOnly struct{ durable.FS }

func (readOnly) Lock(name string, _ time.Duration) (func() error, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EROFS}
}

// TestEmptySegmentsOfAnEarlierChainAreSetAside pins the one way setAsideSealed is reached: the
// snapshot and active journal of a workflow are gone and its sealed directory gives nothing to
// read, no lines at all (segments a power loss left empty, or no segment but a killed
// compaction's temp file), so there is no workflow on record. A new chain of the same id then
// starts, and the sealed directory is moved to quarantine/ whole, with a notice, never deleted;
// the new chain's journal holds its own lines only. (Segments holding lines are read, or reported
// as damaged, before any start: TestLostSnapshotAndJournalReadFromTheSegments.)
func TestEmptySegmentsOfAnEarlierChainAreSetAside(t *testing.T) {
	for name, leave := range map[string]func(dir string) (string, error){
		"empty segments": func(dir string) (string, error) {
			return "2.jsonl", cmp.Or(os.WriteFile(filepath.Join(dir, "1.jsonl"), nil, 0o600), os.WriteFile(filepath.Join(dir, "2.jsonl"), nil, 0o600))
		},
		"a temp file": func(dir string) (string, error) {
			return ".tmp-1.jsonl-killed", os.WriteFile(filepath.Join(dir, ".tmp-1.jsonl-killed"), []byte(`{"seq":1,"revision"`), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t, store.WithJournalCompaction(compactAt))
			transitions(t, s, 40)
			os.Remove(filepath.Join(dir, store.WorkflowFile))
			os.Remove(filepath.Join(dir, "journal", wfID+".jsonl"))
			os.RemoveAll(filepath.Join(dir, sealed))
			os.Mkdir(filepath.Join(dir, sealed), 0o700)
			kept, err := leave(filepath.Join(dir, sealed))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("nothing to read: %v", err)
			}
			res, err := transition(s)
			if err != nil || res.Revision != 1 {
				t.Fatalf("new chain: revision %d, %v", res.Revision, err)
			}
			if len(res.Notices) != 1 || res.Notices[0].Kind != "quarantined" || !strings.HasPrefix(res.Notices[0].Path, "quarantine/"+wfID+".sealed-") {
				t.Fatalf("notices %+v", res.Notices)
			}
			if _, err := os.Stat(filepath.Join(dir, sealed)); !os.IsNotExist(err) {
				t.Fatalf("the earlier chain's sealed directory is still in place: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, res.Notices[0].Path, kept)); err != nil {
				t.Fatalf("quarantine does not keep what was sealed: %v", err)
			}
			transitions(t, s, 2)
			checkHistory(t, s, 3, "the new chain")
		})
	}
}
