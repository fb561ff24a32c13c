package remotesync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// TestLongLineIsNotHeldWhole: a sync held a long workflow's line whole, every revision a full
// copy of the record (hundreds of MB for a long workflow): the remote's, on a new machine's first
// sync and when it adopted the remote's line after a lost race, and this machine's states, when
// it read its journal from the start or shared the end of a workflow finished here. The remote's
// revisions are spooled as they are read and taken from there, and of this machine's only those
// after the last both lines share are kept: the heap a sync holds stays a few records however
// long the line, with the same outcomes.
func TestLongLineIsNotHeldWhole(t *testing.T) {
	r := memremote.New()
	a, line := longLine(t, r, "wf-long")
	const n = longLineRevisions
	bound := line / 4

	b := newMachine(t, 0)
	held, out := alloctest.PeakHeap(func() remotesync.Outcome { return b.sync(r, "") })
	if out.Pulled != n {
		t.Fatalf("B's first sync pulled %d; want %d", out.Pulled, n)
	} else if held > bound {
		t.Errorf("B's first sync of a line of %d bytes held %d bytes at once; want at most %d", line, held, bound)
	}

	// B's record of the last sync is gone: it reads both lines from the start.
	if err := mirror.Reached(b.st, "origin", "", 0); err != nil {
		t.Fatal(err)
	}
	held, out = alloctest.PeakHeap(func() remotesync.Outcome { return b.sync(r, "") })
	if out.Pulled != 0 || out.Pushed != 0 || out.Remote != n {
		t.Fatalf("B's sync reading both lines whole = %+v; want nothing to do", out)
	} else if held > bound {
		t.Errorf("B's sync reading both lines of %d bytes whole held %d bytes at once; want at most %d", line, held, bound)
	}

	// Both move; A lands first, and B takes A's line whole in place of its own.
	a.setVar(100)
	b.setVar(200)
	a.sync(r, "")
	held, out = alloctest.PeakHeap(func() remotesync.Outcome { return b.sync(r, "") })
	if out.Conflict == nil || out.Conflict.Common != n || out.Conflict.Lost != 1 || out.Pulled != n+1 {
		t.Fatalf("B's sync after both moved = %+v; want its one change lost after r%d and A's line taken", out, n)
	} else if held > bound {
		t.Errorf("B's adoption of a line of %d bytes held %d bytes at once; want at most %d", line, held, bound)
	}
	agree(t, r, a, b)

	// B completes it, which archives it here: the next sync shares its end from the archive.
	b.complete()
	held, out = alloctest.PeakHeap(func() remotesync.Outcome { return b.sync(r, "") })
	if out.Shared == 0 {
		t.Fatalf("B's sync after completing it = %+v; want its end shared", out)
	} else if held > bound {
		t.Errorf("B's sharing of the end of a line of %d bytes held %d bytes at once; want at most %d", line, held, bound)
	}
}

// TestOwedReplayDoesNotHoldTheArchiveWhole: the sync after one killed between adopting the
// remote's line and replaying this machine's changes read the conflict archive's whole line, every
// revision a full copy of the record, to rebuild the changes owed. It keeps only those from the
// last revision both lines share on, with the same replay.
func TestOwedReplayDoesNotHoldTheArchiveWhole(t *testing.T) {
	r := memremote.New()
	a, line := longLine(t, r, "wf-owed")
	b := newMachine(t, 0)
	b.sync(r, "")
	a.setVarKey("WF_X", "2") // loses the race
	b.setVarKey("WF_B", "b")
	b.sync(r, "")
	killAfterAdoption(t, a.st, r, a.en)
	held, err := alloctest.PeakHeap(func() error {
		_, err := remotesync.Sync(context.Background(), a.st, r, "origin", "", remotesync.EngineReplayer(a.en))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := a.en.GetVars([]string{"WF_X", "WF_B"}); err != nil || v["WF_X"] != "2" || v["WF_B"] != "b" {
		t.Fatalf("after the next sync A holds %v (%v); want the owed WF_X=2 replayed beside WF_B=b", v, err)
	} else if held > line/4 {
		t.Errorf("the owed replay over an archive of %d bytes held %d bytes at once; want at most %d", line, held, line/4)
	}
	b.sync(r, "")
	agree(t, r, a, b)
}

// TestOwedReplayAfterLongWorkIsNotHeldWhole: the sync after one killed between adopting the
// remote's line and replaying this machine's changes read every revision made here since the
// adoption, each a full copy of the record, for the first of them alone (the remote's change
// that won). It reads that one: work that went on long after the kill is not held whole.
func TestOwedReplayAfterLongWorkIsNotHeldWhole(t *testing.T) {
	r := memremote.New()
	a, line := longLine(t, r, "wf-owedlong")
	b := newMachine(t, 0)
	b.sync(r, "")
	a.setVarKey("WF_X", "2") // loses the race
	b.setVarKey("WF_B", "b")
	b.sync(r, "")
	killAfterAdoption(t, a.st, r, a.en)
	for i := range longLineRevisions {
		a.setVar(1000 + i) // work goes on here before the next sync
	}
	s := &sink{Backend: r}
	held, err := alloctest.PeakHeap(func() error {
		_, err := remotesync.Sync(context.Background(), a.st, s, "origin", "", remotesync.EngineReplayer(a.en))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := a.en.GetVars([]string{"WF_X", "WF_B"}); err != nil || v["WF_X"] != "2" || v["WF_B"] != "b" {
		t.Fatalf("after the next sync A holds %v (%v); want the owed WF_X=2 replayed beside WF_B=b", v, err)
	} else if held > line/4 {
		t.Errorf("the owed replay after %d revisions made here held %d bytes at once; want at most %d", longLineRevisions, held, line/4)
	}
}

// endsWhileRead is a Backend whose first read of a line runs end (the workflow completed here
// by a tool call while the sync waited on the network) once it has handed the records over.
type endsWhileRead struct {
	remote.Backend
	end func()
}

func (b *endsWhileRead) Each(ctx context.Context, id string, rev int64, fn func(remote.Record) error) error {
	err := remote.Each(ctx, b.Backend, id, rev, fn)
	if end := b.end; end != nil {
		b.end = nil
		end()
	}
	return err
}

// TestEndedHereWhileTheRemoteIsRead: this machine's line is read after the remote's, and a tool
// call may complete the workflow meanwhile (cairn-mcp lets go of its turn for the network); the
// sync starts over and shares the end, as one that read this machine's line first pushed what it
// had, rather than failing on a journal no longer there.
func TestEndedHereWhileTheRemoteIsRead(t *testing.T) {
	t.Parallel()
	r := memremote.New()
	a := newSharing(t, r, "wf-end", "ends")
	a.setVar(1)
	if out := a.sync(&endsWhileRead{Backend: r, end: a.complete}, ""); out.Pushed+out.Shared < 1 {
		t.Fatalf("sync = %+v; want the change made before it pushed", out)
	}
}

// endsWhilePushed is a Backend whose first append runs end (the workflow completed here by a
// tool call while the sync waited on the network) before it takes the records.
type endsWhilePushed struct {
	remote.Backend
	end func()
}

func (b *endsWhilePushed) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	if end := b.end; end != nil {
		b.end = nil
		end()
	}
	return b.Backend.Append(ctx, id, after, data)
}

// TestEndedHereWhilePushed: the records pushed are read from this machine's journal as the
// remote takes them, and a tool call may complete the workflow meanwhile (cairn-mcp lets go of
// its turn for the network), which moves the journal to the archive; the sync starts over and
// shares the end, rather than failing on a journal no longer there.
func TestEndedHereWhilePushed(t *testing.T) {
	t.Parallel()
	r := memremote.New()
	a := newSharing(t, r, "wf-endpush", "ends")
	a.setVar(1)
	if out := a.sync(&endsWhilePushed{Backend: r, end: a.complete}, ""); out.Pushed+out.Shared != 2 {
		t.Fatalf("sync = %+v; want the change made before it and the end shared", out)
	}
	remotetest.MustHeads(t, context.Background(), r, remote.Heads{"wf-endpush": 3})
}

// TestLineTakenWithoutATemporaryFile: where no temporary file can be made, the remote's line is
// kept in memory to be taken, as before it was spooled.
func TestLineTakenWithoutATemporaryFile(t *testing.T) {
	r := memremote.New()
	a := newSharing(t, r, "wf-tmp", "no temporary file")
	for i := range 6 { // records up to 360 KiB, 1.3 MiB in all: more than a spool keeps in memory
		a.setVarKey(fmt.Sprintf("WF_BIG_%c", 'A'+i), strings.Repeat("a long value ", 60<<10/13))
	}
	a.sync(r, "")
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	b := newMachine(t, 0)
	if out := b.sync(r, ""); out.Pulled != 7 {
		t.Fatalf("B's first sync = %+v; want 7 revisions pulled", out)
	}
	agree(t, r, a, b)
}

// longLineRevisions is how many revisions longLine shares.
const longLineRevisions = 100

// longLine is machine A sharing workflow id on r as a line of longLineRevisions revisions of a
// record of about 60 KiB each, and the line's size.
func longLine(t *testing.T, r remote.Backend, id string) (*machine, int64) {
	t.Helper()
	a := newSharing(t, r, id, "long")
	line := a.grow()
	a.sync(r, "")
	return a, line
}

// grow makes the workflow here, at r1, a line of longLineRevisions revisions of a record of about
// 60 KiB each, and returns the line's size. A long workflow's records are some 240 KiB, and a
// spool keeps 1 MiB of them in memory: until the test ends, a spool keeps a quarter of that, so
// the heap a sync holds is the same number of records as there, each a quarter of the size (the
// tests' bound, a quarter of the line, is 25 records, and the line held whole 100).
func (m *machine) grow() int64 {
	m.t.Helper()
	m.t.Cleanup(func() { remotesync.SetSpoolMem(1 << 20) })
	remotesync.SetSpoolMem(256 << 10)
	for i := range 4 {
		m.setVarKey(fmt.Sprintf("WF_BIG_%c", 'A'+i), strings.Repeat("a long value ", 15<<10/13))
	}
	for i := range longLineRevisions - 5 {
		m.setVar(i)
	}
	w, err := m.st.ReadWorkflow()
	if err != nil || w.Revision != longLineRevisions {
		m.t.Fatalf("the machine holds r%d, %v; want r%d", w.Revision, err, longLineRevisions)
	}
	return int64(longLineRevisions * len(w.Data))
}

// sink is a remote whose appends keep nothing (what a remote keeps is not the sync's to hold):
// it counts the records handed to it, and reads the line as r holds it.
type sink struct {
	*memremote.Backend
	got int
}

func (s *sink) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	data, err := remote.CheckAppend(id, after, data)
	if err != nil {
		return 0, err
	}
	n := 0
	if err := data(func([]byte) error { n++; return nil }); err != nil {
		return 0, err
	}
	s.got += n
	return after + int64(n), nil
}

// TestLongLineIsNotPushedWhole: a sync pushing a long line the remote lacks (a long workflow
// made here, on its first sync or once sharing is enabled; the end of one finished here) held it
// whole twice, every revision a full copy of the record, as entries and as the records handed to
// the remote at once. The remote takes the records one at a time as they are made from the
// journal: the heap a sync holds stays a few records however long the line, with the same
// outcomes.
func TestLongLineIsNotPushedWhole(t *testing.T) {
	const n = longLineRevisions
	t.Run("new", func(t *testing.T) {
		r := &sink{Backend: memremote.New()}
		a := newMachine(t, 0)
		a.start("wf-new", "long")
		line := a.grow()
		held, out := alloctest.PeakHeap(func() remotesync.Outcome { return a.sync(r, "") })
		if out.Pushed != n || r.got != n {
			t.Fatalf("A's first sync = %+v, and the remote took %d records; want %d pushed", out, r.got, n)
		} else if held > line/4 {
			t.Errorf("A's first sync of a line of %d bytes held %d bytes at once; want at most %d", line, held, line/4)
		}
	})
	t.Run("finished", func(t *testing.T) {
		r := &sink{Backend: memremote.New()}
		a := newSharing(t, r.Backend, "wf-end", "long")
		line := a.grow()
		a.complete()
		held, out := alloctest.PeakHeap(func() remotesync.Outcome { return a.sync(r, "") })
		if out.Shared != n || r.got != n {
			t.Fatalf("A's sync after completing it = %+v, and the remote took %d records; want %d shared", out, r.got, n)
		} else if held > line/4 {
			t.Errorf("A's sharing of the end of a line of %d bytes held %d bytes at once; want at most %d", line, held, line/4)
		}
	})
}

// TestLongLostRaceIsNotHeldWhole: a sync that lost a race held every change this machine made
// after the last revision both lines share, each a full copy of the record, to replay them (a
// machine that worked long while another synced first), and the sync after one killed before the
// replay read them so from the conflict archive. They are read from the conflict archive one at a
// time as they are replayed: the heap held stays a few records, with the same replay.
func TestLongLostRaceIsNotHeldWhole(t *testing.T) {
	const lost = longLineRevisions - 1
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprint("killed=", killed), func(t *testing.T) {
			r := memremote.New()
			a := newSharing(t, r, "wf-lost", "long")
			b := newMachine(t, 0)
			b.sync(r, "")
			b.setVarKey("WF_B", "b")
			b.sync(r, "") // lands first
			line := a.grow()
			if killed {
				killAfterAdoption(t, a.st, r, a.en)
			}
			s := &sink{Backend: r}
			held, out := alloctest.PeakHeap(func() remotesync.Outcome {
				out, err := remotesync.Sync(context.Background(), a.st, s, "origin", "", remotesync.EngineReplayer(a.en))
				if err != nil {
					t.Error(err)
				}
				return out
			})
			if c := out.Conflict; c == nil || c.Lost != lost || c.Replayed != lost || s.got != lost {
				t.Fatalf("A's sync = %+v (conflict %+v), and the remote took %d; want its %d lost changes replayed and pushed", out, c, s.got, lost)
			} else if held > line/4 {
				t.Errorf("replaying %d lost changes of a line of %d bytes held %d bytes at once; want at most %d", lost, line, held, line/4)
			}
			if v, err := a.en.GetVars([]string{"WF_B", "WF_N"}); err != nil || v["WF_B"] != "b" || v["WF_N"] != fmt.Sprint(lost-5) {
				t.Fatalf("A holds %v (%v); want WF_B=b beside its own WF_N=%d", v, err, lost-5)
			}
		})
	}
}
