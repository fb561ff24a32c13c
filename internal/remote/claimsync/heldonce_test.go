package claimsync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestAdoptDoesNotHoldTheLineWhole: Adopt (cairn remote enable) read every state of the
// workflow's journal at once, each a full copy of the record, to learn which runs were set
// here (remotesync's TestLongLineIsNotHeldWhole). It reads them one at a time: the heap it
// holds stays a few records however long the line.
func TestAdoptDoesNotHoldTheLineWhole(t *testing.T) {
	const n = 80
	a := newClone(t, memremote.New())
	if _, err := a.task("t1", "running"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 { // a record of about 240 KiB
		if _, err := a.en.SetVars(map[string]string{fmt.Sprintf("WF_BIG_%c", 'A'+i): strings.Repeat("a long value ", 60<<10/13)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, err := a.en.SetVars(map[string]string{"WF_N": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := a.store().ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	line := w.Revision * int64(len(w.Data))
	held, err := alloctest.PeakHeap(func() error { return claimsync.Adopt(a.opt, w.ID) })
	if err != nil {
		t.Fatal(err)
	} else if held > line/4 {
		t.Errorf("Adopt over a line of %d bytes held %d bytes at once; want at most %d", line, held, line/4)
	}
}
