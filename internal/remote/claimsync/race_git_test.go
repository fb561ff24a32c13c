package claimsync_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestTwoMachinesClaimAtOnce: two machines setting one task running at the same moment, over
// a real bare repository: exactly one holds it, and the other is told who.
func TestTwoMachinesClaimAtOnce(t *testing.T) {
	a, b, _ := twoClones(t)
	clones := []*clone{a, b}
	errs := make([]error, 2)
	var start, done sync.WaitGroup
	start.Add(1)
	for i, c := range clones {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			_, errs[i] = c.task("t1", "running")
		}()
	}
	start.Done()
	done.Wait()
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
			continue
		}
		winner := clones[1-i].owner()
		if !strings.HasPrefix(err.Error(), "task t1 is held by "+winner+" (claimed ") || !strings.Contains(err.Error(), "nothing was changed; pick another task") {
			t.Errorf("the loser was told %v", err)
		}
		if got := taskStatus(t, clones[i], "t1"); got == "running" {
			t.Errorf("t1 is running on the machine that lost the claim")
		}
	}
	if won != 1 {
		t.Fatalf("%d machines hold t1: %v", won, errs)
	}
}

// owner is the clone's claims identity, from its claims.json.
func (c *clone) owner() string {
	c.t.Helper()
	st, err := store.Open(c.opt.StateDir)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	var doc struct {
		Owner string `json:"owner"`
	}
	if _, err := st.ReadJSON(claimsync.Doc, &doc); err != nil || doc.Owner == "" {
		c.t.Fatalf("claims.json: %+v %v", doc, err)
	}
	return doc.Owner
}
