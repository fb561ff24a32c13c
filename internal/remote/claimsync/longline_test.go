package claimsync_test

import (
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestAdoptStopsOnceTheRunsAreDecided: Adopt (cairn remote enable) built and parsed every state
// of the journal, from revision 1 to the last, to learn which runs were set here, though the
// revision that first shows a run decides it: on a line of 300 revisions after the run began
// it allocated about 6 times what reading the journal's lines does. It stops at the first
// revision of the last run it decides: the states after it are not built.
func TestAdoptStopsOnceTheRunsAreDecided(t *testing.T) {
	const n = 300
	a := newClone(t, memremote.New())
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := a.en.SetVars(map[string]string{"WF_N": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	st := a.store()
	w, err := st.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	lines := alloctest.Bytes(func() { _, err = st.ReadEventsSince(w.ID, 0) })
	if err != nil {
		t.Fatal(err)
	}
	adopt := alloctest.Bytes(func() { err = claimsync.Adopt(a.opt, w.ID) })
	if err != nil {
		t.Fatal(err)
	} else if adopt > 2*lines {
		t.Fatalf("Adopt over %d revisions after the run began allocated %d bytes, %.1f times a read of the journal's lines: want at most 2", n, adopt, float64(adopt)/float64(lines))
	}
}
