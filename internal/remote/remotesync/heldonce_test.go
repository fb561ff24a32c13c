package remotesync_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
)

// TestSharedRevisionsAreHeldOnce: a sync that reads both lines whole (the first after another
// one, or when the line it left no longer matches) held every record twice, this machine's copy
// and the remote's, though each revision both hold is the same: a long workflow's line took
// twice its size. The remote's copy of a revision this machine holds is dropped as it is read.
func TestSharedRevisionsAreHeldOnce(t *testing.T) {
	const n = 16
	r := memremote.New()
	a := newSharing(t, r, "wf-long", "long")
	for i := range 4 { // a record of about 240 KiB
		a.setVarKey(fmt.Sprintf("WF_BIG_%c", 'A'+i), strings.Repeat("a long value ", 60<<10/13))
	}
	for i := range n - 5 {
		a.setVar(i)
	}
	a.sync(r, "")
	b := newMachine(t, 0)
	b.sync(r, "")
	w, err := b.st.ReadWorkflow()
	if err != nil || w.Revision != n {
		t.Fatalf("B holds r%d, %v; want r%d", w.Revision, err, n)
	}
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	base := heap()
	mine, theirs, err := remotesync.ReadFrom(context.Background(), b.st, r, "wf-long", w, 0)
	if err != nil || len(mine) != n || len(theirs) != n {
		t.Fatalf("read %d and %d revisions, %v; want %d each", len(mine), len(theirs), err, n)
	}
	held := heap() - base
	line := 0
	for _, e := range mine {
		line += len(e.Snapshot)
	}
	runtime.KeepAlive(theirs)
	if held > int64(line)/2 {
		t.Errorf("reading both lines of %d revisions (%d bytes) held %d bytes more; want the remote's copies of those revisions dropped", n, line, held)
	}
}
